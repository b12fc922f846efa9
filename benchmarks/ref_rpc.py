"""The messaging ceiling: a no-op oslo.messaging server on the same broker.

The server is a child process (``python ref_rpc.py server --topic T``)
with oslo.messaging's defaults and the ``threading`` executor, as Gantt's
workers use. It runs in the Gantt venv on purpose: the very oslo.messaging
and kombu that Gantt uses, so that the only difference with Gantt's numbers
is the work Gantt does. Its endpoint answers a call with nothing and counts
casts; ``update_resource_stats`` takes the message Gantt's agents send
(same method, same payload) and drops it.
"""

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

import harness  # noqa: E402
from oslo_config import cfg  # noqa: E402
import oslo_messaging as messaging  # noqa: E402

SERVER = "noop-server"
_PARSED = []


def transport(url=None):
    # oslo.messaging registers its [oslo_messaging_tracing] options on the
    # global CONF only: a private ConfigOpts fails on the first call()
    conf = cfg.CONF
    if not _PARSED:
        conf([], project="gantt_bench_noop", default_config_files=[])
        _PARSED.append(True)
    return messaging.get_rpc_transport(conf, url=url or harness.RABBIT_URL)


class Endpoint:
    target = messaging.Target(version="1.0")

    def __init__(self, work_us=0):
        self.lock = threading.Lock()
        self.casts = 0
        self.work = work_us / 1e6

    def ping(self, ctxt):
        return os.getpid()

    def noop(self, ctxt, **kwargs):
        return None

    def update_resource_stats(self, ctxt, compute_node=None):
        if self.work:  # diagnostics: hold the GIL as a real handler would
            end = time.perf_counter() + self.work
            while time.perf_counter() < end:
                pass
        with self.lock:
            self.casts += 1

    def cast_count(self, ctxt):
        with self.lock:
            return self.casts


def run_server(topic, work_us=0):
    trans = transport()
    server = messaging.get_rpc_server(
        trans, messaging.Target(topic=topic, server=SERVER),
        [Endpoint(work_us)],
        executor="threading", access_policy=messaging.DefaultRPCAccessPolicy)
    server.start()
    print("ready %d" % os.getpid(), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    stop.wait()
    server.stop()
    server.wait()
    trans.cleanup()


class NoopServer:
    """The no-op server as a child process, stopped by its pid."""

    def __init__(self, topic, work_us=0):
        self.topic = topic
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "server", "--topic",
             topic, "--work-us", str(work_us)], stdout=subprocess.PIPE,
            text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError("no-op server failed: %r" % line)
        self.pid = self.proc.pid

    def client(self, timeout=30):
        trans = transport()
        client = messaging.get_rpc_client(
            trans, messaging.Target(topic=self.topic, server=SERVER),
            timeout=timeout)
        started = time.monotonic()
        while True:  # the server's queues exist once it answers a ping
            try:
                client.prepare(timeout=2).call({}, "ping")
                return client, trans
            except messaging.MessagingTimeout:
                if time.monotonic() - started > 60:
                    raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["server"])
    parser.add_argument("--topic", required=True)
    parser.add_argument("--work-us", type=float, default=0,
                        help="CPU time each stats cast costs (diagnostics)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    run_server(args.topic, args.work_us)
    return 0


if __name__ == "__main__":
    sys.exit(main())
