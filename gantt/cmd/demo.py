"""gantt-demo: the real daemon with a simulated fleet, end to end.

It starts ``gantt-scheduler`` as a separate process (its own database
unless one is given), then plays a small cloud against it over RabbitMQ,
one flow after another (``--flow``; all of them by default):

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
scheduling profile. This module is the command: its options, the daemon
and the order of the flows; :mod:`gantt.cmd.demo_flows` says how a flow
plugs in.
"""

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

from gantt import rpc
from gantt import version
from gantt.cmd import common
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
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/")
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


def _broker_reachable(url):
    parsed = urllib.parse.urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 5672
    try:
        with socket.create_connection((host, port), timeout=3):
            return True, (host, port)
    except OSError:
        return False, (host, port)


class Daemon:
    """gantt-scheduler as a child process, with its own config."""

    def __init__(self, workdir, transport_url, database, workers, topic,
                 flows=()):
        self.workdir = workdir
        self.conf_file = os.path.join(workdir, "gantt.conf")
        self.log_file = os.path.join(workdir, "gantt-scheduler.log")
        sections = demo_flows.merge_config(*(
            flow.config(topic) for flow in flows))
        profiles = ",".join(flow.PROFILE for flow in flows if flow.PROFILE)
        with open(self.conf_file, "w") as f:
            f.write("[DEFAULT]\ntransport_url = %s\n"
                    "[database]\nconnection = %s\n"
                    "[scheduler]\ntopic = %s\nworkers = %d\n"
                    "profiles = %s\n"
                    "[filter_scheduler]\nhost_subset_size = 3\n"
                    % (transport_url, database, topic, workers, profiles))
            for section, text in sections.items():
                f.write("[%s]\n%s" % (section, text))
        self.proc = None

    def _bin(self, name):
        return os.path.join(os.path.dirname(sys.executable), name)

    def start(self):
        subprocess.run([self._bin("gantt-manage"), "--config-file",
                        self.conf_file, "db", "sync"], check=True,
                       stdout=subprocess.DEVNULL)
        log = open(self.log_file, "w")
        self.proc = subprocess.Popen(
            [self._bin("gantt-scheduler"), "--config-file", self.conf_file],
            stdout=log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return None
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return time.monotonic() - started


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    reachable, (host, port) = _broker_reachable(args.transport_url)
    if not reachable:
        print("gantt-demo: RabbitMQ is not reachable at %s:%d.\n"
              "Start it with:  rabbitmq-server -detached\n"
              "(or pass --transport-url for another broker)" % (host, port),
              file=sys.stderr)
        return 1
    if args.workers is None:
        args.workers = 2 if args.database else 1
    names = list(FLOWS) if args.flow == "all" else [args.flow]
    workdir = args.workdir or tempfile.mkdtemp(prefix="gantt-demo-")
    os.makedirs(workdir, exist_ok=True)
    db_url = args.database
    if db_url is None:
        # the demo's own database: fresh each run, whatever a previous
        # run in the same work directory left in it
        sqlite_file = os.path.join(workdir, "gantt.sqlite")
        if os.path.exists(sqlite_file):
            os.remove(sqlite_file)
        db_url = "sqlite:///" + sqlite_file
    topic = "gantt-demo-%d" % os.getpid()
    print("Gantt demo (%s): %d scheduler worker(s); work directory %s"
          % (", ".join(_describe(args, name) for name in names),
             args.workers, workdir))
    daemon = Daemon(workdir, args.transport_url, db_url, args.workers, topic,
                    [FLOWS[name] for name in names])
    daemon.start()
    print("  started gantt-scheduler (pid %d), log %s" % (
        daemon.proc.pid, daemon.log_file))
    ok = False
    try:
        ok = _run(args, daemon, topic, db_url, names)
    finally:
        took = daemon.stop()
        if took is not None:
            print("  gantt-scheduler stopped on SIGTERM in %.1f s" % took)
        if args.workdir is None and ok:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


def _describe(args, name):
    if name == "compute":
        return "%d hosts, %d instances" % (args.hosts, args.instances)
    return "%d %s" % (getattr(args, name), name)


def _run(args, daemon, topic, db_url, names):
    """Each flow in turn, on one daemon; True when every one was OK."""
    conf = common.parse_args(["--config-file", daemon.conf_file], log=False)
    transport = rpc.get_transport(conf)
    client = rpc_client.SchedulerClient(transport, topic, timeout=60)
    time.sleep(1.0)  # let the workers bind their queues
    if daemon.proc.poll() is not None:
        print("gantt-scheduler exited early; see %s" % daemon.log_file)
        return False
    results = {}
    for name in names:
        # each flow its own generator: a flow plays the same alone or
        # after the others
        rng = random.Random(args.seed)
        _wait_for_daemon(transport, topic)
        started = time.monotonic()
        results[name] = FLOWS[name].run(demo_flows.Context(
            client, transport, conf, db_url, rng, args, topic))
        print("(%s flow: %.1f s)" % (name, time.monotonic() - started))
    if len(names) > 1:
        print("\nflows          %s" % ", ".join(
            "%s %s" % (name, "OK" if ok else "INCONSISTENT")
            for name, ok in results.items()))
    return all(results.values())


def _wait_for_daemon(transport, topic, timeout=60):
    """Until a worker answers: a call sent before any worker has bound
    the topic's queue is dropped, and would wait out the whole timeout."""
    quick = rpc_client.SchedulerClient(transport, topic, timeout=3)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return quick.get_statistics(None)
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("no gantt-scheduler worker answered in %ds" % timeout)


if __name__ == "__main__":
    sys.exit(main())
