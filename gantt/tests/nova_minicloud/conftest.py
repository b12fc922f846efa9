"""The mini-cloud fixture (see :mod:`.cloud`): built once per test
module, in the order a deployment would bring it up, and torn down in
reverse."""

import os
import re

from nova import config as nova_config
from nova import context as nova_context
from nova import objects as nova_objects
from nova.scheduler.client import report
import pytest

from gantt.db import allocations as db_allocations
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional.conftest import RABBIT_URL
from gantt.tests.functional.conftest import Daemon
from gantt.tests.functional.conftest import _tracebacks
from gantt.tests.functional.conftest import rabbit  # noqa: F401
from gantt.tests.nova_minicloud import cloud
from gantt.tests.nova_minicloud import neutron

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                  r"[0-9a-f]{12}")


class MiniCloud:
    """The processes, Nova's cell and the Gantt database of one cloud."""

    def __init__(self, tmpdir):
        self.tmpdir = tmpdir
        self.names = cloud.Names.new()
        self.hosts = (self.names.host("a"), self.names.host("b"))
        self.processes = []
        self.cleanups = []

    def setup_databases(self):
        dbs = cloud.NovaDatabases(self.names)
        self.cleanups.append(dbs.drop)
        self.gantt_db = gantt_fixtures.Database("mysql")
        self.gantt_db.setUp()
        self.cleanups.append(self.gantt_db.cleanUp)
        return dbs

    def write_nova_conf(self, dbs):
        self.neutron = neutron.NoPortsNeutron()
        self.cleanups.append(self.neutron.stop)
        self.api_port = cloud.free_port()
        self.conf_file = os.path.join(self.tmpdir, "nova.conf")
        with open(self.conf_file, "w") as f:
            f.write(cloud.nova_conf(self.names, self.api_port,
                                    self.neutron.port, self.tmpdir))
        self.db_conf_file = os.path.join(self.tmpdir, "nova-db.conf")
        with open(self.db_conf_file, "w") as f:
            f.write(cloud.db_conf(dbs))
        self.with_db = (self.conf_file, self.db_conf_file)
        self.dbs = dbs

    def make_cells(self):
        cloud.nova_manage(self.with_db, "api_db", "sync")
        cloud.nova_manage(self.with_db, "cell_v2", "map_cell0",
                          "--database_connection", self.dbs.url("cell0"))
        out = cloud.nova_manage(self.with_db, "cell_v2", "create_cell",
                                "--name", "cell1", "--verbose")
        self.cell_uuid = UUID.search(out).group(0)
        cloud.nova_manage(self.with_db, "db", "sync")

    def start_gantt(self):
        extra = cloud.gantt_conf(self.names, self.dbs.url("api"),
                                 self.api_port, self.cell_uuid)
        gantt_dir = os.path.join(self.tmpdir, "gantt")
        os.makedirs(gantt_dir)
        self.daemon = Daemon(gantt_dir, RABBIT_URL, self.gantt_db.url,
                             extra=extra).start()
        self.cleanups.append(self._stop_daemon)
        self.api = self._start("gantt-api", "--config-file",
                               self.daemon.conf_file)
        cloud.wait_for("gantt-api listening", self._api_listens,
                       [self.api], interval=0.2)

    def _api_listens(self):
        try:
            cloud.socket.create_connection(("127.0.0.1", self.api_port),
                                           1).close()
            return True
        except OSError:
            return False

    def _stop_daemon(self):
        self.daemon.stop()
        self.daemon.transport.cleanup()

    def _start(self, name, *args, env=None, module=None):
        process = cloud.Process(name, args, os.path.join(
            self.tmpdir, "%s-%d.log" % (name, len(self.processes))), env,
            module)
        self.processes.append(process)
        self.cleanups.append(process.stop)
        return process

    def _nova_service(self, name, host, conf_files, env=None, module=None):
        files = list(conf_files) + [cloud.host_conf(self.tmpdir, host)]
        return self._start(name, *cloud.config_args(files), env=env,
                           module=module)

    def start_nova(self):
        self.fails_dir = os.path.join(self.tmpdir, "fails")
        os.makedirs(self.fails_dir)
        env = dict(os.environ, GANTT_MINICLOUD_FAILS=self.fails_dir)
        self.conductor = self._nova_service(
            "nova-conductor", self.names.host("conductor"), self.with_db)
        self.computes = {host: self._nova_service(
            "nova-compute", host, [self.conf_file], env,
            "gantt.tests.nova_minicloud.compute")
            for host in self.hosts}

    def wait_for_hosts(self):
        """Until both computes' nodes are hosts in Gantt, then maps them
        in Nova's API database as an operator would."""
        cloud.wait_for("the computes' nodes as Gantt hosts",
                       self._gantt_has_hosts, self.processes, interval=1)
        cloud.nova_manage(self.with_db, "cell_v2", "discover_hosts",
                          "--verbose")

    def _gantt_has_hosts(self):
        states = self.daemon.client.get_host_states(None)
        return set(self.hosts) <= {s.host for s in states}

    def connect_nova(self):
        """Nova's configuration, databases and RPC in the test process."""
        nova_config.parse_args(["minicloud"] + cloud.config_args(
            self.with_db), init_rpc=True)
        nova_objects.register_all()
        self.context = nova_context.RequestContext(
            user_id="minicloud-user", project_id="minicloud-project",
            is_admin=True, roles=["admin"])
        self.cell = nova_objects.CellMapping.get_by_uuid(self.context,
                                                         self.cell_uuid)
        self.report = report.SchedulerReportClient()

    def gantt_allocations(self, consumer):
        """What Gantt's database holds for ``consumer``."""
        with self.gantt_db.db.begin() as conn:
            return db_allocations.allocations_of(conn, [consumer]).get(
                consumer, {})

    def placement_allocations(self, consumer):
        """What ``GET /allocations/{consumer}`` answers through Nova's
        report client and gantt-api."""
        allocs = self.report.get_allocs_for_consumer(self.context, consumer)
        return {rp: a["resources"]
                for rp, a in allocs["allocations"].items()}

    def node_uuid(self, instance):
        """The uuid of the compute node (and its provider) ``instance``
        runs on, from Nova's cell database."""
        with nova_context.target_cell(self.context, self.cell) as cctx:
            return nova_objects.ComputeNode.get_by_host_and_nodename(
                cctx, instance.host, instance.node).uuid

    def gantt_tracebacks(self):
        logs = [self.daemon.log(), self.api.log()]
        return [line for log in logs for line in _tracebacks(log, set())]

    def close(self):
        for cleanup in reversed(self.cleanups):
            cleanup()


@pytest.fixture(scope="module")
def minicloud(rabbit, tmp_path_factory):  # noqa: F811
    """A running mini-cloud; Gantt's logs free of tracebacks at the end."""
    mc = MiniCloud(str(tmp_path_factory.mktemp("minicloud")))
    try:
        mc.write_nova_conf(mc.setup_databases())
        mc.make_cells()
        mc.start_gantt()
        mc.start_nova()
        mc.wait_for_hosts()
        mc.connect_nova()
        yield mc
        assert not mc.gantt_tracebacks(), mc.gantt_tracebacks()
    finally:
        mc.close()
