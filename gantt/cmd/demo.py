"""gantt-demo: the real daemon with a simulated fleet, end to end.

It starts ``gantt-scheduler`` as a separate process (its own database
unless one is given), then plays a small cloud against it over RabbitMQ,
one flow after another (``--flow``; all of them by default). With no
broker at the default URL and none named, it plays in one process on
oslo.messaging's fake transport instead, the same worker serving; a
broker it cannot use is one line and exit code 1
(:mod:`gantt.cmd.demo_bus`, :mod:`gantt.cmd.demo_daemons`). The flows:

* **compute** (:mod:`gantt.cmd.demo_flows.compute`): compute agents
  report, conductors ask for instances of mixed flavors, failed builds
  are re-claimed on the alternates;
* **containers** (:mod:`gantt.cmd.demo_flows.containers`): containers
  fill instances one after another, a new instance when all are full,
  vacant instances retired;
* **volumes** (:mod:`gantt.cmd.demo_flows.volumes`): volumes on thin
  provisioned pools, by Cinder's filters and weighers;

and each flow ends with a summary read back from the scheduler and the
database. One daemon serves every flow: its config has each flow's
scheduling profile. This module is the command: its options, the choice
of bus and daemon, and the order of the flows;
:mod:`gantt.cmd.demo_flows` says how a flow plugs in.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import oslo_messaging as messaging

from gantt import version
from gantt.cmd import demo_bus
from gantt.cmd import demo_daemons
from gantt.cmd import demo_flows
from gantt.cmd.demo_flows import compute as compute_flow
from gantt.cmd.demo_flows import containers as containers_flow
from gantt.cmd.demo_flows import volumes as volumes_flow
from gantt.rpcapi import client as rpc_client

#: every flow, in the order ``all`` runs them
FLOWS = {"compute": compute_flow, "containers": containers_flow,
         "volumes": volumes_flow}


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="gantt-demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--flow", default="all",
                        choices=tuple(FLOWS) + ("all",),
                        help="which story to play (default: all, compute "
                             "first)")
    parser.add_argument("--hosts", type=int, default=500,
                        help="compute flow: hosts")
    parser.add_argument("--instances", type=int, default=3000,
                        help="compute flow: instances asked for")
    parser.add_argument("--containers", type=int, default=60,
                        help="container flow: containers asked for")
    parser.add_argument("--volumes", type=int, default=120,
                        help="volume flow: volumes asked for")
    parser.add_argument("--conductors", type=int, default=8,
                        help="concurrent callers of select_destinations")
    parser.add_argument("--workers", type=int, default=None,
                        help="gantt-scheduler worker processes (default: 1 "
                             "on the embedded SQLite, which takes one "
                             "writer at a time; 2 with --database)")
    parser.add_argument("--failure-rate", type=float, default=0.03,
                        help="share of builds that fail and are re-claimed")
    parser.add_argument(
        "--transport-url", default=None,
        help="the broker to play on, and nothing else (default: %s, or "
             "$%s; when nothing answers there, oslo.messaging's in-process "
             "fake transport)" % (demo_bus.DEFAULT_URL,
                                  demo_bus.DEFAULT_URL_ENV))
    parser.add_argument("--database", default=None,
                        help="SQLAlchemy URL (default: SQLite in the work "
                             "directory)")
    parser.add_argument("--workdir", default=None,
                        help="where config, database and logs go "
                             "(default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--version", action="version",
        version=version.version_info.version_string_with_package())
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        bus = demo_bus.choose(args.transport_url, os.environ)
    except demo_bus.BrokerError as exc:
        print(exc, file=sys.stderr)
        return 1
    if bus.note:
        print("gantt-demo: " + bus.note, flush=True)
    _default_workers(args, bus)
    return 0 if _play(args, bus) else 1


def _play(args, bus):
    """The daemon on ``bus``, every flow asked for, the daemon stopped;
    True when every flow was OK (the work directory then goes, unless
    the user gave it)."""
    names = list(FLOWS) if args.flow == "all" else [args.flow]
    workdir = args.workdir or tempfile.mkdtemp(prefix="gantt-demo-")
    os.makedirs(workdir, exist_ok=True)
    db_url = args.database or _fresh_sqlite(workdir)
    topic = "gantt-demo-%d" % os.getpid()
    print("Gantt demo (%s): %d scheduler worker(s); work directory %s"
          % (", ".join(_describe(args, name) for name in names),
             args.workers, workdir))
    kind = (demo_daemons.InProcessDaemon if bus.embedded
            else demo_daemons.ChildDaemon)
    daemon = kind(workdir, bus.url, db_url, args.workers, topic,
                  [FLOWS[name] for name in names])
    ok = False
    try:
        print("  " + daemon.start(), flush=True)
        ok = _run(args, daemon, topic, db_url, names)
    except subprocess.CalledProcessError as exc:
        print("gantt-demo: gantt-manage db sync failed (exit code %d); "
              "see above" % exc.returncode, file=sys.stderr)
    finally:
        stopped = daemon.stop()
        if stopped:
            print("  " + stopped)
        if args.workdir is None and ok:
            shutil.rmtree(workdir, ignore_errors=True)
    return ok


def _default_workers(args, bus):
    """Two workers on a database server, one on the embedded SQLite
    (one writer at a time) and always one in-process (the fake bus)."""
    if bus.embedded:
        if args.workers not in (None, 1):
            print("gantt-demo: --workers %d ignored: the in-process "
                  "transport serves one worker" % args.workers)
        args.workers = 1
    elif args.workers is None:
        args.workers = 2 if args.database else 1


def _fresh_sqlite(workdir):
    """The demo's own database: fresh each run, whatever a previous run
    in the same work directory left in it."""
    sqlite_file = os.path.join(workdir, "gantt.sqlite")
    if os.path.exists(sqlite_file):
        os.remove(sqlite_file)
    return "sqlite:///" + sqlite_file


def _describe(args, name):
    if name == "compute":
        return "%d hosts, %d instances" % (args.hosts, args.instances)
    return "%d %s" % (getattr(args, name), name)


def _run(args, daemon, topic, db_url, names):
    """Each flow in turn, on one daemon; True when every one was OK."""
    results = {}
    for name in names:
        # each flow its own generator: a flow plays the same alone or
        # after the others
        rng = random.Random(args.seed)
        if not _wait_for_daemon(daemon, topic):
            return False
        started = time.monotonic()
        results[name] = FLOWS[name].run(demo_flows.Context(
            rpc_client.SchedulerClient(daemon.transport, topic, timeout=60),
            daemon.transport, daemon.notifications, daemon.conf, db_url,
            rng, args, topic))
        print("(%s flow: %.1f s)" % (name, time.monotonic() - started))
    if len(names) > 1:
        print("\nflows          %s" % ", ".join(
            "%s %s" % (name, "OK" if ok else "INCONSISTENT")
            for name, ok in results.items()))
    return all(results.values())


def _wait_for_daemon(daemon, topic, timeout=60):
    """Until a worker answers: a call sent before any worker has bound
    the topic's queue is dropped, and would wait out the whole timeout.
    A daemon that exited is said at once, not after the timeout."""
    quick = rpc_client.SchedulerClient(daemon.transport, topic, timeout=3)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not daemon.alive():
            print("gantt-demo: " + daemon.exited(), file=sys.stderr)
            return False
        try:
            quick.get_statistics(None)
            return True
        except messaging.MessagingException:
            time.sleep(0.5)
    print("gantt-demo: no scheduler worker answered in %ds; see %s"
          % (timeout, daemon.log_file), file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main())
