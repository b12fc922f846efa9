"""Nova's own clients against a real gantt-scheduler (see
doc/source/admin/nova.rst, "What is proven").

The daemon, RabbitMQ, MariaDB and PostgreSQL fixtures are the functional
tests'. Nova's side is the real nova package: its configuration parsed
once, its RPC transport on the same RabbitMQ. Nova's scheduler topic is a
constant (``nova.scheduler.rpcapi.RPC_TOPIC``); each test sets it to a
topic of its own, and the daemon's ``[nova] topic`` to the same, so that
tests (and other users of the shared broker) never take each other's
messages.
"""

import os
import socket
import subprocess
import uuid

from nova import config as nova_config
from nova import rpc as nova_rpc
from nova.scheduler import rpcapi as nova_rpcapi
from nova.scheduler.client import query as nova_query
from oslo_config import cfg
import pytest

from gantt.db import allocations as db_allocations
from gantt.tests import factories
from gantt.tests.functional import waiting
from gantt.tests.functional.conftest import BIN
from gantt.tests.functional.conftest import RABBIT_URL
from gantt.tests.functional.conftest import daemon_factory  # noqa: F401
from gantt.tests.functional.conftest import rabbit  # noqa: F401
from gantt.tests.functional.conftest import server_db  # noqa: F401

#: the cell Selections name for hosts that report none
CELL = "8cd5c2a9-3f49-4c1e-9f1b-7a0c5f0e2b11"
HOSTS = ("nova-e2e-1", "nova-e2e-2", "nova-e2e-3")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: where the tests' gantt-api listens (one at a time), as nova.conf's
#: [placement] names it
API_PORT = _free_port()


@pytest.fixture(scope="session")
def nova_conf(tmp_path_factory):
    """Nova's CONF, parsed as a Nova service parses it; its RPC layer up;
    its Placement client pointed at the tests' gantt-api (keystoneauth's
    admin_token plugin: the token names the user, as gantt-api's noauth2
    reads it)."""
    path = tmp_path_factory.mktemp("nova") / "nova.conf"
    path.write_text(
        "[DEFAULT]\ntransport_url = %s\n"
        "[placement]\nauth_type = admin_token\ntoken = admin\n"
        "endpoint = http://127.0.0.1:%d\n" % (RABBIT_URL, API_PORT))
    if nova_rpc.TRANSPORT is None:
        nova_config.parse_args(["nova-e2e", "--config-file", str(path)],
                               configure_db=False, init_rpc=True)
    return cfg.CONF


class NovaGantt:
    """A gantt-scheduler serving Nova's topic, Nova's query client talking
    to it, and the hosts reported to it through Gantt's own reporting."""

    def __init__(self, daemon, database, topic):
        self.daemon = daemon
        self.database = database
        self.topic = topic
        nova_rpcapi.RPC_TOPIC = topic
        self.query = nova_query.SchedulerQueryClient()
        self.rpcapi = self.query.scheduler_rpcapi
        self.reported = set()

    def report(self, *names, **fields):
        """Hosts report as agents do; returns once the daemon has them."""
        for name in names:
            factories.cast_report(self.daemon.client, name, **fields)
        self.reported.update(names)
        return self.daemon.wait_for_hosts(len(self.reported))

    def allocations(self, *consumers):
        with self.database.db.begin() as conn:
            return db_allocations.allocations_of(conn, consumers)

    def log(self):
        return self.daemon.log()


@pytest.fixture
def gantt_with(nova_conf, server_db, daemon_factory):  # noqa: F811
    """``start(extra)``: a real daemon with ``[nova] enabled`` (and the
    config lines ``extra``) on MariaDB, then PostgreSQL."""
    def start(extra=""):
        topic = "scheduler-e2e-" + uuid.uuid4().hex[:8]
        daemon = daemon_factory(server_db.url, extra=(
            "[nova]\nenabled = true\ntopic = %s\ndefault_cell_uuid = %s\n"
            "%s" % (topic, CELL, extra)))
        return NovaGantt(daemon, server_db, topic)
    yield start
    nova_rpcapi.RPC_TOPIC = "scheduler"


@pytest.fixture
def gantt(gantt_with):
    """A real daemon with ``[nova] enabled``, Gantt's defaults otherwise."""
    return gantt_with()


class PlacementAPI:
    """A real ``gantt-api`` process on the daemon's configuration."""

    def __init__(self, conf_file, log_file):
        self.log_file = log_file
        self._log = open(log_file, "w")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "gantt-api"), "--config-file", conf_file],
            stdout=self._log, stderr=subprocess.STDOUT)
        self.url = "http://127.0.0.1:%d" % API_PORT

    def wait_ready(self):
        waiting.until("gantt-api serving on port %d" % API_PORT,
                      self._serving, log=self.log)
        return self

    def _serving(self):
        """Whether it logged that it serves (its listening line)."""
        if self.proc.poll() is not None:
            raise AssertionError("gantt-api exited:\n" + self.log())
        return waiting.API_SERVING in self.log()

    def log(self):
        with open(self.log_file) as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=waiting.WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture
def gantt_and_api(gantt_with, tmp_path):
    """The daemon with ``[nova] enabled`` and ``gantt-api`` on its
    database and bus (noauth2), where nova.conf's [placement] points."""
    gantt = gantt_with("[api]\nauth_strategy = noauth2\nport = %d\n"
                       % API_PORT)
    api = PlacementAPI(gantt.daemon.conf_file, str(tmp_path / "api.log"))
    gantt.api = api.wait_ready()
    yield gantt
    api.stop()
    assert "Traceback" not in api.log(), api.log()
