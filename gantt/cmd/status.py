"""gantt-status upgrade check: is this deployment ready for this code?"""

import sys

from oslo_upgradecheck import upgradecheck

from gantt import exception
from gantt import rpcapi
from gantt import version
from gantt.cmd import common
from gantt.db import api as db_api
from gantt.db import migration
from gantt.rpcapi import versions
from gantt.scheduler import plugins


class Checks(upgradecheck.UpgradeCommands):
    """Each check says what is wrong and how to fix it."""

    def _check_schema(self):
        db = db_api.Database.from_conf(self.conf)
        try:
            current = migration.current_version(db)
        finally:
            db.dispose()
        try:
            head = migration.head_version()
        except migration.SchemaError as exc:
            return upgradecheck.Result(upgradecheck.Code.FAILURE, str(exc))
        if current == head:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        return upgradecheck.Result(
            upgradecheck.Code.FAILURE,
            "Database schema is at %s but this code needs %s. Run "
            "'gantt-manage db sync'." % (current or "empty", head))

    def _check_plugins(self):
        fs = self.conf.filter_scheduler
        try:
            plugins.load(plugins.FILTERS, fs.enabled_filters, self.conf)
            plugins.load(plugins.WEIGHERS, fs.enabled_weighers, self.conf)
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

    _upgrade_checks = (
        ("Database schema", _check_schema),
        ("Enabled filters and weighers", _check_plugins),
        ("Liveness settings", _check_liveness_settings),
        ("RPC version cap", _check_version_cap),
    )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = common.make_conf()
    checks = Checks()
    checks.conf = conf
    # upgradecheck.main() parses the command line without a --version;
    # this is that function with one, as nova-status does it
    upgradecheck.register_cli_options(conf, checks)
    conf(argv, project="gantt",
         version=version.version_info.version_string_with_package())
    # read by upgrade check --json (upgradecheck.main() sets it too)
    upgradecheck.CONF = conf
    return upgradecheck.run(conf)


if __name__ == "__main__":
    sys.exit(main())
