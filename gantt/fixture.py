"""GanttFixture: a whole Gantt scheduler inside a caller's test process.

For the tests of a service that calls Gantt (a Magnum, a Cinder, a
conductor): no RabbitMQ, no database server, no ``gantt-scheduler``
process. As ``oslo_messaging.conffixture`` and Placement's ``PlacementFixture``
do for their callers, it gives the test what production gives the service,
built from the same parts:

* a transport on oslo.messaging's in-memory ``fake:`` driver
  (:attr:`GanttFixture.transport`); only clients made on this very
  transport object reach the scheduler, so pass it into the code under
  test;
* a database: SQLite in a temporary file, migrated to head (or the
  ``database_url`` given, migrated likewise);
* one scheduler worker (``gantt.service.SchedulerWorker``, what
  ``gantt-scheduler`` runs) serving the scheduler and stats topics on that
  transport, started before the test and stopped after it;
* a :class:`~gantt.rpcapi.client.SchedulerClient` on it
  (:attr:`GanttFixture.client`), through which reports are cast and calls
  made, and :meth:`GanttFixture.report_host`, which reports a host and
  returns once the worker has it.

Everything crosses the real wire code: arguments are validated and
serialized, replies deserialized, and Gantt's exceptions reach the caller
typed (``gantt.exception.NoValidHost``, ``InvalidRequest``...), as they do
over RabbitMQ. It needs the ``fixtures`` package, which Gantt's own
install does not: a test suite that uses it has it already.
"""

import os

import fixtures
from oslo_config import cfg

from gantt import conf as gantt_conf
from gantt import objects
from gantt import rpc
from gantt import service
from gantt.db import api as db_api
from gantt.db import migration
from gantt.rpcapi import client as rpc_client

#: the transport every GanttFixture serves on (a fresh in-memory bus each)
FAKE_TRANSPORT_URL = "fake:/"
#: seconds a call through the fixture's client waits for its reply
DEFAULT_TIMEOUT = 30


class GanttFixture(fixtures.Fixture):
    """A started scheduler worker on a fake transport and SQLite.

    :param options: ``{"group.option": value}`` set on the worker's
        configuration before it starts, e.g.
        ``{"filter_scheduler.enabled_filters": ["ComputeFilter"]}``
        (``DEFAULT.option`` for an option of no group)
    :param database_url: a database to migrate and use instead of a
        temporary SQLite file (it must exist and may be empty)
    :param timeout: seconds a call through :attr:`client` waits

    After ``setUp``: :attr:`conf` (the worker's ``ConfigOpts``, private:
    never ``cfg.CONF``), :attr:`transport`, :attr:`client`,
    :attr:`database_url` and :attr:`worker` (the running
    ``SchedulerWorker``).
    """

    def __init__(self, options=None, database_url=None,
                 timeout=DEFAULT_TIMEOUT):
        super().__init__()
        self.options = dict(options or {})
        self.database_url = database_url
        self.timeout = timeout

    def _setUp(self):
        objects.register_all()
        self.conf = self._conf()
        self._migrate()
        self.transport = rpc.get_transport(self.conf,
                                           url=FAKE_TRANSPORT_URL)
        self.addCleanup(self.transport.cleanup)
        self._start_worker()
        self.client = rpc_client.SchedulerClient.from_conf(
            self.conf, self.transport, timeout=self.timeout)

    def _conf(self):
        """The worker's options: Gantt's defaults, then ``options``."""
        conf = cfg.ConfigOpts()
        gantt_conf.register_opts(conf)
        conf([], project="gantt", default_config_files=[])
        self.addCleanup(conf.reset)
        for key, value in self.options.items():
            group, name = key.split(".", 1)
            conf.set_override(name, value,
                              None if group == "DEFAULT" else group)
        return conf

    def _migrate(self):
        """The schema at head, in a temporary file unless a URL was
        given; the worker opens its own engine on it."""
        if self.database_url is None:
            tmp = self.useFixture(fixtures.TempDir()).path
            self.database_url = "sqlite:///" + os.path.join(
                tmp, "gantt.sqlite")
        self.conf.set_override("connection", self.database_url, "database")
        db = db_api.Database(self.database_url)
        try:
            migration.upgrade(db)
        finally:
            db.dispose()

    def _start_worker(self):
        """The worker ``gantt-scheduler`` runs, on the fake transport; it
        answers calls once its cache is loaded, when ``start`` returns."""
        worker = service.SchedulerWorker(self.conf, transport=self.transport)
        self.addCleanup(self._stop, worker)
        worker.start()
        self.worker = worker

    @staticmethod
    def _stop(worker):
        worker.stop()
        if getattr(worker, "db", None) is not None:
            worker.db.dispose()

    def report_host(self, compute_node, force=False):
        """Report ``compute_node`` as its agent would and return the
        ``ReportResult`` once the worker has stored and applied it (the
        synchronous ``report_resource_stats``, RPC API 1.3).

        :raises: InvalidRequest for a report the wire refuses
        """
        return self.client.report_resource_stats(None, compute_node,
                                                 force=force)
