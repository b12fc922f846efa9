"""gantt: the operator's view of a running scheduler, over RPC.

    gantt --config-file /etc/gantt/gantt.conf host-list [--cell UUID]
    gantt --config-file /etc/gantt/gantt.conf host-show HOST
    gantt --config-file /etc/gantt/gantt.conf stats
"""

import json
import sys

from oslo_config import cfg

from gantt.cmd import common
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


def main(argv=None):
    command = cfg.SubCommandOpt("command", title="Commands",
                                handler=_add_commands)
    conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                             description="Gantt operator CLI",
                             cli_opts=[command], log=False)
    return conf.command.func(conf) or 0


if __name__ == "__main__":
    sys.exit(main())
