"""gantt-manage: database schema and maintenance commands."""

import sys

from oslo_config import cfg
import oslo_messaging as messaging

from gantt import exception
from gantt import rpc
from gantt.cmd import common
from gantt.db import api as db_api
from gantt.db import audit
from gantt.db import hosts as db_hosts
from gantt.db import migration
from gantt.rpcapi import client as rpc_client


def _db_sync(conf):
    before = common.schema_version(conf)    # a clear error if unusable
    db = db_api.Database.from_conf(conf)
    try:
        migration.upgrade(db)
    except migration.SchemaError as exc:
        # one line, and a failure exit: a deployment script must stop here
        print("gantt-manage db sync: %s" % exc, file=sys.stderr)
        return 1
    print("Database schema: %s -> %s" % (before or "empty",
                                         migration.current_version(db)))


def _db_version(conf):
    print(common.schema_version(conf) or "empty")


def _allocations_audit(conf):
    db = db_api.Database.from_conf(conf)
    args = conf.category
    orphans = audit.find_orphans(db, args.grace)
    if not orphans:
        print("No orphaned allocations (hosts that report their instances "
              "were checked with a grace of %ds)." % args.grace)
        return 0
    print("%-36s  %-20s  %-19s  %-19s  %s" % (
        "CONSUMER", "HOST", "CLAIMED", "HOST REPORTED", "RESOURCES"))
    for o in orphans:
        print("%-36s  %-20s  %-19s  %-19s  %s" % (
            o.consumer_uuid, o.host, o.claimed_at.isoformat(" ", "seconds"),
            o.reported_at.isoformat(" ", "seconds"), ",".join(
                "%s=%d" % kv for kv in sorted(o.resources.items()))))
    consumers = len({o.consumer_uuid for o in orphans})
    if not args.delete:
        print("%d orphaned consumer(s). Nothing was changed; run again with "
              "--delete to release them." % consumers)
        return 3
    released = audit.release_orphans(db, orphans)
    print("Released %d orphaned consumer(s); scheduler caches see the room "
          "at their next usage sync." % released)
    return 0


def _host_reset_sequence(conf):
    """Through a worker: the database, then every worker's cache."""
    transport = rpc.get_transport(conf)
    try:
        client = rpc_client.SchedulerClient.from_conf(conf, transport,
                                                      timeout=30)
        uuid = client.reset_report_sequence(None, conf.category.host)
    except (exception.GanttException, messaging.MessagingException) as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        transport.cleanup()
    print("Host %s (%s): its next report is taken whatever its sequence."
          % (conf.category.host, uuid))
    return 0


def _host_delete(conf):
    db = db_api.Database.from_conf(conf)
    try:
        uuid = db_hosts.delete_host(db, conf.category.host)
    except exception.GanttException as exc:
        print(exc, file=sys.stderr)
        return 1
    print("Deleted compute node %s (%s); a provider may now report as %s."
          % (uuid, conf.category.host, conf.category.host))
    return 0


def _add_host_commands(subparsers):
    host = subparsers.add_parser("host", help="a compute node's identity")
    host_sub = host.add_subparsers(dest="action")
    host_sub.required = True
    reset = host_sub.add_parser(
        "reset-sequence", help="take the host's next report whatever its "
                               "report_sequence (an agent locked out by a "
                               "report of a far higher sequence)")
    reset.add_argument("host")
    reset.set_defaults(func=_host_reset_sequence)
    delete = host_sub.add_parser(
        "delete", help="delete a compute node no longer in service (none "
                       "of its providers may hold allocations), so that a "
                       "re-installed host may report under its name")
    delete.add_argument("host")
    delete.set_defaults(func=_host_delete)


def _add_commands(subparsers):
    db = subparsers.add_parser("db", help="database schema")
    db_sub = db.add_subparsers(dest="action")
    db_sub.required = True
    sync = db_sub.add_parser("sync", help="upgrade the schema to the newest")
    sync.set_defaults(func=_db_sync)
    version = db_sub.add_parser("version", help="print the schema version")
    version.set_defaults(func=_db_version)
    allocs = subparsers.add_parser("allocations", help="allocation upkeep")
    allocs_sub = allocs.add_subparsers(dest="action")
    allocs_sub.required = True
    audit_cmd = allocs_sub.add_parser(
        "audit", help="find allocations whose consumer is not on its host "
                      "(exit code 3 when some are found)")
    audit_cmd.add_argument(
        "--grace", type=int, default=3600,
        help="seconds a claim may stay unlisted by its host's agent before "
             "it counts as orphaned (default 3600)")
    audit_cmd.add_argument("--delete", action="store_true",
                           help="release the orphans found")
    audit_cmd.set_defaults(func=_allocations_audit)
    _add_host_commands(subparsers)


def main(argv=None):
    command = cfg.SubCommandOpt("category", title="Commands",
                                handler=_add_commands)
    try:
        conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                                 description="Gantt management",
                                 cli_opts=[command], log=False)
        return conf.category.func(conf) or 0
    except (cfg.Error, exception.ConfigurationError) as exc:
        # a config mistake: one line, no traceback (as gantt-scheduler)
        print("gantt-manage: %s" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
