"""gantt: the operator's view of a running scheduler, over RPC.

A cliff application, shaped like python-openstackclient::

    gantt [--config-file FILE]... [--config-dir DIR]... [--timeout SECONDS]
          COMMAND [OPTIONS] [-f table|json|yaml|value|csv] [-c COLUMN]...

The commands are in :data:`COMMANDS` (and the ``gantt.cli`` entry point
namespace, for plugins); doc/source/admin/cli.rst documents each. Only the
configuration's transport, topic and upgrade-level options matter here.
"""

import logging
import sys

from cliff import app
from cliff import commandmanager

from gantt import version
from gantt.cmd.cli import aggregates
from gantt.cmd.cli import base
from gantt.cmd.cli import explain
from gantt.cmd.cli import groups
from gantt.cmd.cli import hosts

COMMANDS = {
    "host list": hosts.HostList,
    "host show": hosts.HostShow,
    "host retire": hosts.HostRetire,
    "stats show": explain.StatsShow,
    "explain": explain.Explain,
    "group-plan": groups.GroupPlan,
    "aggregate list": aggregates.AggregateList,
    "aggregate show": aggregates.AggregateShow,
    "aggregate create": aggregates.AggregateCreate,
    "aggregate set": aggregates.AggregateSet,
    "aggregate unset": aggregates.AggregateUnset,
    "aggregate add host": aggregates.AggregateAddHost,
    "aggregate remove host": aggregates.AggregateRemoveHost,
    "aggregate delete": aggregates.AggregateDelete,
    # the old argument shape; hidden from help (deprecated)
    "aggregate-set": aggregates.LegacyAggregateSet,
}

#: names of release 0.1 that still work, hidden from help
LEGACY = {
    "host-list": "host list",
    "host-show": "host show",
    "stats": "stats show",
    "aggregate-list": "aggregate list",
    "aggregate-delete": "aggregate delete",
}

def command_manager():
    manager = commandmanager.CommandManager("gantt.cli")
    for name, cls in COMMANDS.items():
        manager.add_command(name, cls)
    for old, new in LEGACY.items():
        manager.add_legacy_command(old, new)
    return manager


class GanttApp(app.App):
    NAME = "gantt"

    def __init__(self):
        super().__init__(
            description="Gantt operator CLI: hosts, aggregates, statistics "
                        "and dry runs of a running scheduler, over RPC.",
            version=version.version_info.version_string_with_package(),
            command_manager=command_manager(), deferred_help=True)
        self._rpc = None

    def build_option_parser(self, description, version, argparse_kwargs=None):
        parser = super().build_option_parser(
            description, version, {"conflict_handler": "resolve"})
        # the version alone, as every Gantt command prints it
        parser.add_argument("--version", action="version", version=version)
        parser.add_argument(
            "--config-file", action="append", metavar="PATH",
            help="a configuration file (repeat for more; default: "
                 "oslo.config's search, e.g. /etc/gantt/gantt.conf)")
        parser.add_argument(
            "--config-dir", action="append", metavar="DIR",
            help="a directory of *.conf files read after --config-file")
        parser.add_argument(
            "--timeout", type=base.positive_seconds, default=30.0,
            metavar="SECONDS",
            help="how long to wait for the scheduler or the broker "
                 "(default 30)")
        return parser

    def configure_logging(self):
        super().configure_logging()
        if self.options.debug or self.options.verbose_level > 1:
            return
        # oslo.messaging logs each failed broker connection: the command
        # says it once instead (see base.Rpc); and Python's last-resort
        # handler must not print them either
        for name in base.QUIET_LOGGERS:
            logger = logging.getLogger(name)
            logger.propagate = False
            logger.addHandler(logging.NullHandler())

    @property
    def rpc(self):
        """The scheduler's client, built on first use (``help`` and
        ``explain --example`` need no configuration)."""
        if self._rpc is None:
            conf = base.load_conf(self.options.config_file,
                                  self.options.config_dir)
            self._rpc = base.Rpc(conf, self.options.timeout)
        return self._rpc

    def clean_up(self, cmd, result, err):
        if self._rpc is not None:
            self._rpc.close()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # a closed stdout (gantt host list | head -1) is cliff's to handle:
    # no traceback, exit code 141 as after SIGPIPE
    return GanttApp().run(argv or ["help"])


if __name__ == "__main__":
    sys.exit(main())
