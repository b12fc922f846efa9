"""gantt: the operator's view of a running scheduler, over RPC.

    gantt --config-file /etc/gantt/gantt.conf host-list [--cell UUID]
    gantt --config-file /etc/gantt/gantt.conf host-show HOST
    gantt --config-file /etc/gantt/gantt.conf stats
    gantt --config-file /etc/gantt/gantt.conf explain SPEC.yaml [--limit N]
    gantt --config-file /etc/gantt/gantt.conf aggregate-list
    gantt --config-file /etc/gantt/gantt.conf aggregate-set UUID NAME \
        [--host H]... [--property KEY=VALUE]...
    gantt --config-file /etc/gantt/gantt.conf aggregate-delete UUID
"""

import json
import sys

from oslo_config import cfg
import oslo_messaging as messaging

from gantt import exception
from gantt.cmd import common
from gantt.cmd import spec_file
from gantt.objects import aggregate as aggregate_obj
from gantt.rpcapi import client as rpc_client


def _client(conf):
    return rpc_client.SchedulerClient.from_conf(conf, timeout=30)


def _resources(state):
    return {r.resource_class: r for r in state.resources}


def _host_list(conf):
    states = _client(conf).get_host_states(None)
    if conf.command.cell:
        states = [s for s in states if s.cell_uuid == conf.command.cell]
    print("%-20s %-8s %-4s %-8s %14s %18s %14s" % (
        "HOST", "ZONE", "UP", "STATUS", "VCPU used/cap", "MEMORY_MB used/cap",
        "DISK_GB used/cap"))
    for s in sorted(states, key=lambda s: s.host):
        res = _resources(s)
        cells = []
        for rc in ("VCPU", "MEMORY_MB", "DISK_GB"):
            r = res.get(rc)
            cells.append("-" if r is None else "%d/%d" % (
                r.used, r.used + r.free))
        print("%-20s %-8s %-4s %-8s %14s %18s %14s" % (
            s.host, s.availability_zone or "-", "yes" if s.up else "NO",
            "disabled" if s.disabled else "enabled", *cells))
    print("%d host(s)" % len(states))


def _host_show(conf):
    states = _client(conf).get_host_states(None, hosts=[conf.command.host])
    if not states:
        print("no such host: %s" % conf.command.host, file=sys.stderr)
        return 1
    for state in states:
        print(json.dumps(state.obj_to_dict(), indent=2, sort_keys=True))
    return 0


def _stats(conf):
    stats = _client(conf).get_statistics(None)
    print(json.dumps(stats.obj_to_dict(), indent=2, sort_keys=True))


def _print_explanation(result):
    print(result.summary)
    print("\nRequest: %s" % ", ".join(
        "%s=%d" % kv for kv in sorted(result.resources.items())))
    print("Filters: %s" % ", ".join(result.filters))
    print("\nRemoved (%d hosts considered, %d left):" % (
        result.considered, result.passed))
    if not result.steps:
        print("  nothing")
    for step in result.steps:
        more = step.removed - len(step.hosts)
        print("  %-10s %-34s %6d  %s" % (step.stage, step.name, step.removed,
                                         step.reason))
        print("  %-10s %-34s %6s  %s%s" % (
            "", "", "", ", ".join(step.hosts),
            " (+%d more)" % more if more > 0 else ""))
    if not result.weighed:
        return
    names = [w for w in result.weighers
             if any(h.weights.get(w) for h in result.weighed)]
    print("\nBest %d of %d hosts (weight = sum of multiplier x normalised "
          "value; weighers that added nothing are left out):" % (
              len(result.weighed), result.passed))
    print("  %-4s %-24s %10s  %s" % ("RANK", "HOST", "WEIGHT", "  ".join(
        "%12s" % w.replace("Weigher", "")[:12] for w in names)))
    for rank, host in enumerate(result.weighed, 1):
        print("  %-4d %-24s %10.4f  %s" % (rank, host.host, host.weight,
                                           "  ".join(
            "%12.4f" % host.weights.get(w, 0.0) for w in names)))


def _explain(conf):
    try:
        spec = spec_file.load(conf.command.spec)
        result = _client(conf).explain(None, spec, limit=conf.command.limit)
    except (exception.InvalidRequest, OSError) as exc:
        print("gantt explain: %s" % exc, file=sys.stderr)
        return 2
    if conf.command.json:
        print(json.dumps(result.obj_to_dict(), indent=2, sort_keys=True))
    else:
        _print_explanation(result)
    return 0


def _aggregate_list(conf):
    aggregates = _client(conf).get_aggregates(None)
    for agg in aggregates:
        print("%s  %-20s hosts: %s" % (agg.uuid, agg.name,
                                       ", ".join(agg.hosts) or "-"))
        for key, value in sorted(agg.metadata.items()):
            print("%38s %s = %s" % ("", key, value))
    print("%d aggregate(s)" % len(aggregates))


def _aggregate_set(conf):
    cmd = conf.command
    metadata = {}
    for item in cmd.property or ():
        key, sep, value = item.partition("=")
        if not sep:
            print("gantt aggregate-set: --property takes KEY=VALUE, got %r"
                  % item, file=sys.stderr)
            return 2
        metadata[key] = value
    try:
        aggregate = aggregate_obj.Aggregate(
            uuid=cmd.uuid, name=cmd.name, hosts=list(cmd.host or ()),
            metadata=metadata)
        _client(conf).set_aggregate(None, aggregate)
    except (exception.InvalidRequest, ValueError) as exc:
        print("gantt aggregate-set: %s" % exc, file=sys.stderr)
        return 2
    print("aggregate %s (%s) set" % (cmd.uuid, cmd.name))
    return 0


def _aggregate_delete(conf):
    if not _client(conf).delete_aggregate(None, conf.command.uuid):
        print("no such aggregate: %s" % conf.command.uuid, file=sys.stderr)
        return 1
    return 0


def _add_aggregate_commands(subparsers):
    listing = subparsers.add_parser("aggregate-list",
                                    help="every aggregate and its metadata")
    listing.set_defaults(func=_aggregate_list)
    setter = subparsers.add_parser(
        "aggregate-set", help="create or replace an aggregate (all of its "
                              "hosts and metadata)")
    setter.add_argument("uuid")
    setter.add_argument("name")
    setter.add_argument("--host", action="append",
                        help="a member host (repeat for more)")
    setter.add_argument("--property", action="append",
                        help="metadata KEY=VALUE (repeat for more)")
    setter.set_defaults(func=_aggregate_set)
    deleter = subparsers.add_parser("aggregate-delete",
                                    help="delete an aggregate")
    deleter.add_argument("uuid")
    deleter.set_defaults(func=_aggregate_delete)


def _add_commands(subparsers):
    host_list = subparsers.add_parser("host-list",
                                      help="every host and its usage")
    host_list.add_argument("--cell", help="only hosts of this cell")
    host_list.set_defaults(func=_host_list)
    host_show = subparsers.add_parser("host-show",
                                      help="one host as the scheduler sees it")
    host_show.add_argument("host", help="host name or provider uuid")
    host_show.set_defaults(func=_host_show)
    stats = subparsers.add_parser(
        "stats", help="counters of the worker that answers "
                      "(requests, NoValidHost, eliminations per filter)")
    stats.set_defaults(func=_stats)
    explain = subparsers.add_parser(
        "explain", help="which hosts each filter removes for a request "
                        "spec, and how the best ones weigh (no claim)")
    explain.add_argument("spec", help="request spec file (JSON or YAML)")
    explain.add_argument("--limit", type=int, default=10,
                         help="how many of the best hosts to show")
    explain.add_argument("--json", action="store_true",
                         help="print the Explanation as JSON")
    explain.set_defaults(func=_explain)
    _add_aggregate_commands(subparsers)


def main(argv=None):
    command = cfg.SubCommandOpt("command", title="Commands",
                                handler=_add_commands)
    conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                             description="Gantt operator CLI",
                             cli_opts=[command], log=False)
    try:
        return conf.command.func(conf) or 0
    except messaging.MessagingTimeout:
        print("gantt: no gantt-scheduler answered on topic %s within 30 s "
              "(is it running, on this transport_url?)"
              % conf.scheduler.topic, file=sys.stderr)
        return 1
    except exception.GanttException as exc:
        # typed refusals (a version cap, a bad option…): one line, no
        # traceback
        print("gantt: %s" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
