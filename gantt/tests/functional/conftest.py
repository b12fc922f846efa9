"""Functional fixtures: the real daemon, RabbitMQ, MariaDB and PostgreSQL.

Nothing here is faked. A test that needs a service this machine does not
run fails with a message saying how to start it; it is never skipped.
"""

import os
import signal
import socket
import subprocess
import sys
import uuid

import oslo_messaging as messaging
import pytest

from gantt import rpc
from gantt import rpcapi
from gantt.cmd import common
from gantt.rpcapi import client as rpc_client
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests import rabbit_node
from gantt.tests.functional import waiting

RABBIT_URL = os.environ.get("GANTT_TEST_TRANSPORT_URL",
                            "rabbit://guest:guest@127.0.0.1:5672/")
BIN = os.path.dirname(sys.executable)


def _require_port(port, what, how):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            return
    except OSError:
        pytest.fail("%s is not reachable on 127.0.0.1:%d; start it with: %s"
                    % (what, port, how), pytrace=False)


@pytest.fixture
def closed_port():
    """A loopback port that refuses connections for the whole test: bound
    by the test, never listened on, so nothing else can take it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(scope="session")
def rabbit():
    _require_port(5672, "RabbitMQ", "rabbitmq-server -detached")
    return RABBIT_URL


def _database(backend):
    if backend == "mysql":
        _require_port(3306, "MariaDB", "start-stop-daemon --start --oknodo "
                      "--background --exec /usr/sbin/mariadbd")
    elif backend == "postgresql":
        _require_port(5432, "PostgreSQL", "pg_ctlcluster "
                      "--skip-systemctl-redirect $(ls /etc/postgresql) main "
                      "start")
    fx = gantt_fixtures.Database(backend)
    fx.setUp()
    return fx


@pytest.fixture(params=["mysql", "postgresql"])
def server_db(request):
    """A fresh, migrated database on MariaDB, then on PostgreSQL."""
    fx = _database(request.param)
    yield fx
    fx.cleanUp()


def raw_fanout(daemon, topic):
    """A fanout caster with no serializer: raw primitives on the wire, as
    agents' serializers send them (or as a forger on the broker would)."""
    client = messaging.get_rpc_client(
        daemon.transport, messaging.Target(
            exchange=rpcapi.EXCHANGE, topic=topic, version="1.0"))
    return client.prepare(fanout=True)


class Daemon:
    """A real ``gantt-scheduler`` process and a client talking to it."""

    def __init__(self, tmpdir, rabbit_url, db_url, workers=1, extra=""):
        self.topic = "gantt-test-" + uuid.uuid4().hex[:10]
        self.db_url = db_url
        self.conf_file = os.path.join(tmpdir, "gantt.conf")
        self.log_file = os.path.join(tmpdir, "scheduler.log")
        with open(self.conf_file, "w") as f:
            f.write("[DEFAULT]\ntransport_url = %s\n"
                    "[database]\nconnection = %s\n"
                    "[scheduler]\ntopic = %s\nworkers = %d\n%s\n"
                    % (rabbit_url, db_url, self.topic, workers, extra))
        self.workers = workers
        self.proc = None
        # loggers whose tracebacks a fault test provokes on purpose
        self.tracebacks_allowed_from = set()
        self.conf = common.parse_args(["--config-file", self.conf_file],
                                      log=False)
        self.transport = rpc.get_transport(self.conf)
        self.client = rpc_client.SchedulerClient(self.transport, self.topic,
                                                 timeout=waiting.CALL)

    def start(self, wait=True):
        self._log = open(self.log_file, "w")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "gantt-scheduler"), "--config-file",
             self.conf_file], stdout=self._log, stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self):
        """Until every worker logged that it serves (its cache loaded);
        then the statistics of one of them."""
        waiting.until("%d worker(s) of gantt-scheduler serving topic %s"
                      % (self.workers, self.topic), self._all_serving,
                      log=self.log)
        return self.client.get_statistics(None)

    def _all_serving(self):
        if self.proc.poll() is not None:
            raise AssertionError("gantt-scheduler exited with %s:\n%s"
                                 % (self.proc.returncode,
                                    waiting.tail(self.log())))
        return self.log().count(waiting.SCHEDULER_SERVING) >= self.workers

    def log(self):
        with open(self.log_file) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=waiting.WAIT):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("gantt-scheduler ignored SIGTERM for %ds"
                                 % timeout) from None

    def wait_for_hosts(self, count):
        """The host states of a worker that holds ``count`` hosts."""
        return waiting.until(
            "a worker holding %d hosts" % count,
            lambda: _at_least(self.client.get_host_states(None), count),
            log=self.log)


def _at_least(states, count):
    return states if len(states) >= count else None


def _make_db_manage(db_url, tmpdir):
    conf_file = os.path.join(tmpdir, "manage.conf")
    with open(conf_file, "w") as f:
        f.write("[database]\nconnection = %s\n" % db_url)
    return conf_file


@pytest.fixture
def daemon_factory(rabbit, tmp_path, server_db):
    """Start daemons on a given database; stopped (SIGTERM) at the end.

    It asks for ``server_db`` so that pytest tears it down *after* this
    fixture: the daemons must be stopped before their database is dropped,
    or a thread still writing (the stats intake flushing on stop) would
    log a traceback about vanished tables.
    """
    started = []

    def start(db_url, workers=1, extra="", wait=True, transport_url=None):
        d = Daemon(str(tmp_path / ("d%d" % len(started))),
                   transport_url or rabbit, db_url, workers, extra)
        started.append(d)
        return d.start(wait=wait)

    for i in range(4):
        os.makedirs(str(tmp_path / ("d%d" % i)), exist_ok=True)
    yield start
    for d in started:
        code = d.stop()
        d.transport.cleanup()
        log = d.log()
        assert code in (0, None), "exit code %s:\n%s" % (code, log)
        assert not _tracebacks(log, d.tracebacks_allowed_from), log


def _tracebacks(log, allowed):
    """Traceback lines of the log, but those of the allowed loggers."""
    found = []
    for line in log.splitlines():
        if "Traceback" not in line:
            continue
        words = line.split()
        # "<date> <time> <pid> <LEVEL> <logger> ..."
        logger = words[4] if len(words) > 4 else ""
        if logger not in allowed:
            found.append(line)
    return found


@pytest.fixture
def private_broker():
    """A RabbitMQ node of the test's own, to stop and start (see
    gantt.tests.rabbit_node); ask for it before ``daemon_factory`` so
    that it outlives the daemons."""
    node = rabbit_node.RabbitNode()
    node.setUp()
    yield node
    node.cleanUp()


@pytest.fixture
def daemon(server_db, daemon_factory):
    """One real daemon on MariaDB, then on PostgreSQL."""
    d = daemon_factory(server_db.url)
    d.database = server_db.db
    return d
