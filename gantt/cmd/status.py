"""gantt-status upgrade check: is this deployment ready for this code?"""

import functools
import sys

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from gantt import exception
from gantt import rpcapi
from gantt import version
from gantt.cmd import common
from gantt.db import api as db_api
from gantt.db import levels as db_levels
from gantt.db import migration
from gantt.rpcapi import versions
from gantt.scheduler.pipeline import profiles
from gantt.scheduler.state import topology as topology_mod


def _reads_options(check):
    """``check``, failed rather than crashed by an option it cannot read
    (the "Configuration values" check names them all)."""

    @functools.wraps(check)
    def guarded(self):
        try:
            return check(self)
        except cfg.Error:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE, "Cannot be checked: %s." %
                common.listing(common.bad_values(self.conf)))
    return guarded


class Checks(upgradecheck.UpgradeCommands):
    """Each check says what is wrong and how to fix it."""

    def _check_values(self):
        found = common.bad_values(self.conf)
        if not found:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        return upgradecheck.Result(
            upgradecheck.Code.FAILURE,
            "Options whose value cannot be read (gantt-scheduler refuses "
            "to start): %s." % common.listing(found))

    def _check_schema(self):
        try:
            current = common.schema_version(self.conf)
            head = migration.head_version()
        except exception.ConfigurationError as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        if current == head:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        return upgradecheck.Result(
            upgradecheck.Code.FAILURE,
            "Database schema is at %s but this code needs %s. Run "
            "'gantt-manage db sync'." % (current or "empty", head))

    def _check_plugins(self):
        # every profile: its plugins, packing policy and provider kinds
        try:
            profiles.build(self.conf)
        except exception.ConfigurationError as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_liveness_settings(self):
        sched = self.conf.scheduler
        if sched.report_persist_interval >= sched.service_down_time:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                "[scheduler] report_persist_interval (%d) should be below "
                "service_down_time (%d): a worker that starts may otherwise "
                "see live hosts as down." % (sched.report_persist_interval,
                                             sched.service_down_time))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_version_cap(self):
        try:
            cap = versions.configured_cap(self.conf)
        except exception.ConfigurationError as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        if cap is None:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        newer = [v for v in versions.OBJECT_VERSIONS
                 if versions.parse(v) > versions.parse(cap)]
        if not newer:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                "[upgrade_levels] scheduler = %s is this code's own RPC API "
                "version: the cap changes nothing and can be removed." % cap)
        return upgradecheck.Result(
            upgradecheck.Code.WARNING,
            "[upgrade_levels] scheduler = %s: this service sends RPC API %s "
            "and the object versions that version carries, not those of %s "
            "(methods added since are refused). Remove the cap (and "
            "restart) once every gantt-scheduler serves %s." % (
                cap, cap, ", ".join(newer), rpcapi.RPC_API_VERSION))

    def _check_topology(self):
        try:
            topology = topology_mod.Topology(self.conf.topology.levels)
            before, stored = _stored_topology(self.conf)
        except exception.ConfigurationError as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        problems = []
        levels = topology.levels[:-1]
        if before is not None and before != levels:
            problems.append(
                "the workers last started with [topology] levels = %s, this "
                "configuration says %s: restart every worker with the same "
                "list." % (",".join(before), ",".join(levels)))
        outside = [(host, text) for host, text in stored if
                   topology.unknown_levels(topology_mod.Location.parse(text))]
        if outside:
            problems.append(
                "%d host(s) have a location naming a level not in [topology] "
                "levels (%s): no hard policy at that level places a member "
                "there. Add the level or fix the hosts' reports." % (
                    len(outside), ", ".join(
                        "%s at %s" % pair for pair in outside[:5])))
        if not problems:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        return upgradecheck.Result(upgradecheck.Code.WARNING,
                                   " ".join(problems))

    _upgrade_checks = (
        ("Configuration values", _check_values),
        ("Database schema", _reads_options(_check_schema)),
        ("Scheduling profiles", _reads_options(_check_plugins)),
        ("Liveness settings", _reads_options(_check_liveness_settings)),
        ("RPC version cap", _reads_options(_check_version_cap)),
        ("Topology levels", _reads_options(_check_topology)),
    )


def _stored_topology(conf):
    """(the levels the workers last started with or None, the stored
    locations ``[(host, text)]``); empty when the schema is not at head
    (the "Database schema" check says so).

    :raises: ConfigurationError when the database cannot be used
    """
    if common.schema_version(conf) != migration.head_version():
        return None, []
    db = db_api.Database.from_conf(conf)
    try:
        with db.begin() as conn:
            return db_levels.recorded(conn), db_levels.locations(conn)
    finally:
        db.dispose()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = common.make_conf()
    checks = Checks()
    checks.conf = conf
    # upgradecheck.main() parses the command line without a --version;
    # this is that function with one, as nova-status does it
    upgradecheck.register_cli_options(conf, checks)
    try:
        conf(argv, project="gantt",
             version=version.version_info.version_string_with_package())
    except cfg.Error as exc:
        # a config file that cannot be found or parsed: no check can run;
        # one line, no traceback (as gantt-scheduler and gantt-manage)
        print("gantt-status: %s" % exc, file=sys.stderr)
        return 2
    # read by upgrade check --json (upgradecheck.main() sets it too)
    upgradecheck.CONF = conf
    return upgradecheck.run(conf)


if __name__ == "__main__":
    sys.exit(main())
