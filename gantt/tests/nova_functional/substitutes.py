"""Gantt in the places of Placement and nova-scheduler, inside Nova's own
functional tests.

This is test-harness code that patches Nova's and Placement's test
fixtures, on purpose: Nova's functional tests (``nova/tests/functional``
of the nova package) build their cloud in ``setUp`` from
``nova.tests.functional.fixtures.PlacementFixture`` (whose base class,
Placement's own fixture, runs Placement's WSGI application behind
wsgi-intercept) and ``self.start_service('scheduler')`` (nova-scheduler's
manager on oslo.messaging's fake transport). Those tests cannot be told
to use something else, so :func:`install` swaps the two, once, before
they are imported:

* Placement's fixture (``placement.tests.functional.fixtures.placement.
  PlacementFixture.setUp``) is replaced by :func:`gantt_placement_setup`:
  ``gantt-api``'s WSGI application (``gantt.api.app.make_app``, ``[api]
  auth_strategy = noauth2``, the token Nova's fixture passes) on a fresh,
  migrated Gantt database in a temporary SQLite file, behind
  wsgi-intercept at the endpoint Nova's report client is pointed at. It
  reads Nova's record of each compute node (its service host, its
  hypervisor's capabilities) with Nova's objects (:class:`NovaObjectNodes`),
  where a real gantt-api reads Nova's tables.
  Nova's subclass keeps the rest (its report client's HTTP verbs sent to
  that endpoint, its ``PlacementApiClient``), so every provider, inventory
  and allocation nova-compute and nova-conductor write lands in Gantt.
* ``nova.test.TestCase.start_service('scheduler')`` starts a
  :class:`gantt.fixture.GanttFixture` worker on the same database with
  ``[nova] enabled`` instead: it serves Nova's scheduler topic on the
  fake transport (oslo.messaging's fake exchanges are process-wide, so
  Nova's conductor reaches it), its Selections name the test's cell1.
  Every other service is Nova's own.

What Nova's tests reach into that nova-scheduler has and Gantt has not
(``self.scheduler_service.manager``, its host manager, its filters by
Python class) fails those tests, and the report says so.
"""

import dataclasses
import json
import os
import sys

import fixtures
from oslo_config import cfg
from oslo_middleware import cors
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils
from wsgi_intercept import interceptor

from gantt import fixture as gantt_fixture
from gantt.api import app as app_mod
from gantt.api import notify
from gantt.db import api as db_api
from gantt.nova import compute_nodes
from gantt.tests import fixtures as gantt_fixtures

#: the Gantt database of the running test (Placement's fixture makes it,
#: the scheduler's start uses it) and its scheduler; one test runs at a
#: time
_CURRENT = {}


@dataclasses.dataclass(frozen=True)
class GanttCloud:
    """The running test's Gantt: its database URL and the API's conf."""
    url: str
    conf: cfg.ConfigOpts


def _api_conf(url):
    """gantt-api's options for the test: the database and noauth2 (the
    worker is told of writes in-process, :class:`InProcessCasts`)."""
    conf = gantt_fixtures.make_conf(**{"database.connection": url})
    conf.register_opts(cors.CORS_OPTS, "cors")
    policy_opts.set_defaults(conf)
    conf.set_override("auth_strategy", "noauth2", "api")
    return conf


class InProcessCasts:
    """What gantt-api's notifier casts to the workers, handed to the
    test's worker in-process: to its ``stats``, which Gantt's RPC endpoint
    calls for these casts (``gantt.rpcapi.server``). Nova's
    ``CastAsCallFixture``, which 40 of Nova's functional test modules use,
    patches oslo.messaging's call contexts process-wide and cannot prepare
    a context that was prepared already, as Gantt's RPC client does (the
    REST write then failed with a 500). Nova's own calls to the scheduler
    still cross oslo.messaging; Gantt's own functional tests cover these
    casts over RabbitMQ."""

    @staticmethod
    def _stats():
        scheduler = _CURRENT.get("scheduler")
        worker = scheduler and scheduler.worker
        return worker.scheduler.stats if worker is not None else None

    def trees_changed(self, ctxt, root_uuids):
        stats = self._stats()
        if stats is not None:
            stats.reload_trees(root_uuids)

    def provider_usage_changed(self, ctxt, usages, sender=None):
        stats = self._stats()
        if stats is not None:
            stats.apply_peer_usage(usages)


def _placement_database(fixture):
    """A fresh Gantt database; with ``db=False`` and a ``conf_fixture``
    (Nova's tests that keep Placement's database themselves, across
    several Placement fixtures), the one kept on that conf fixture for
    as long as it lives."""
    if fixture.db or fixture.conf_fixture is None:
        return fixture.useFixture(gantt_fixtures.Database("sqlite"))
    shared = getattr(fixture.conf_fixture, "gantt_database", None)
    if shared is None:
        shared = gantt_fixtures.Database("sqlite")
        shared.setUp()
        fixture.conf_fixture.addCleanup(shared.cleanUp)
        fixture.conf_fixture.gantt_database = shared
    return shared


def gantt_placement_setup(self):
    """``setUp`` of Placement's fixture, serving gantt-api instead."""
    fixtures.Fixture.setUp(self)
    database = _placement_database(self)
    conf = _api_conf(database.url)
    self.addCleanup(conf.reset)
    db = db_api.Database(database.url)
    self.addCleanup(db.dispose)
    app = app_mod.make_app(conf, db=db,
                           notifier=notify.Workers(InProcessCasts()),
                           nova_nodes=NovaObjectNodes())
    self.endpoint = "http://%s/placement" % uuidutils.generate_uuid()
    intercept = interceptor.RequestsInterceptor(lambda: app,
                                                url=self.endpoint)
    intercept.install_intercept()
    self.addCleanup(intercept.uninstall_intercept)
    _CURRENT["cloud"] = GanttCloud(database.url, conf)
    self.addCleanup(_CURRENT.pop, "cloud", None)
    scheduler = _CURRENT.get("scheduler")
    if scheduler is not None and scheduler.worker is not None:
        # the test started the scheduler before Placement: it moves to
        # this database
        scheduler.stop()
        scheduler.start()


class GanttScheduler:
    """What ``start_service('scheduler')`` returns: a Gantt worker that
    ``stop`` and ``start`` stop and restart, as Nova's tests do with the
    scheduler service."""

    def __init__(self, options):
        self.options = options
        self._fixture = None

    def start(self):
        if self._fixture is None:
            # a test with no Placement fixture (it never schedules) gets
            # a worker on a database of its own
            cloud = _CURRENT.get("cloud")
            self._fixture = gantt_fixture.GanttFixture(
                options=self.options,
                database_url=cloud.url if cloud is not None else None)
            self._fixture.setUp()

    @property
    def worker(self):
        """The running worker (None while stopped)."""
        return self._fixture.worker if self._fixture is not None else None

    def stop(self):
        if self._fixture is not None:
            fixture, self._fixture = self._fixture, None
            fixture.cleanUp()

    def follow(self, testcase):
        """A Nova option the test set after the start, set here too (as
        an operator would set it in gantt.conf; nova-scheduler reads its
        options live, and so does Gantt but for what it builds at start,
        such as its filters)."""
        if self._fixture is None:
            return
        conf, nova_conf = self._fixture.conf, cfg.CONF
        for group in SHARED_GROUPS:
            for name in set(nova_conf[group]) & set(conf[group]):
                if nova_conf[group][name] == _default(nova_conf, group,
                                                      name):
                    conf.clear_override(name, group)
                else:
                    conf.set_override(name, nova_conf[group][name], group)


def worker_options(testcase):
    """Gantt's options for the test's worker, as the operator guide
    (doc/source/admin/nova.rst) sets them for Nova: Nova's topic served,
    Nova's weighing (no packing policy), the cell Nova's test made as the
    default cell, and the Nova scheduler options the test changed that
    Gantt has under the same group and name."""
    nova_conf = cfg.CONF
    options = {
        # Nova's weighing: the weighers as Nova's options set them, no
        # packing policy over them (the operator guide's setting)
        "filter_scheduler.packing": "",
        "nova.enabled": True,
        "nova.default_cell_uuid": testcase.cell_mappings["cell1"].uuid,
        "nova.default_availability_zone":
            nova_conf.default_availability_zone,
    }
    for group in SHARED_GROUPS:
        options.update(_changed(nova_conf, group))
    return options


#: Nova's option groups Gantt has options of the same names in
SHARED_GROUPS = ("filter_scheduler", "scheduler")


def _changed(nova_conf, group):
    """``{"group.name": value}`` of the options of ``group`` the test set
    in Nova's conf that Gantt's conf has too."""
    gantt_names = set(gantt_fixtures.make_conf()[group])
    return {"%s.%s" % (group, name): nova_conf[group][name]
            for name in set(nova_conf[group]) & gantt_names
            if nova_conf[group][name] != _default(nova_conf, group, name)}


def _default(conf, group, name):
    """The default of an option (oslo.config has no public way)."""
    return conf._get_opt_info(name, group)["opt"].default


def paste_config_in_prefix():
    """Nova's ``ConfFixture`` looks for ``etc/nova/api-paste.ini`` next
    to the nova package (a source checkout's layout); the wheel installs
    it under the virtualenv's prefix instead."""
    from nova.tests.fixtures import conf as conf_fixture
    real_setup = conf_fixture.ConfFixture.setUp
    path = os.path.join(sys.prefix, "etc", "nova", "api-paste.ini")

    def setUp(self):
        real_setup(self)
        self.conf.set_default("api_paste_config", path, group="wsgi")

    conf_fixture.ConfFixture.setUp = setUp


class NovaObjectNodes:
    """Nova's records of its compute nodes (what ``[nova]
    api_database_connection`` reads in a real cloud) read with Nova's own
    objects: the test's Nova databases are in-process SQLite that only
    Nova's fixtures reach (``CellDatabases`` routes each cell)."""

    def lookup(self, node_uuid):
        from nova import context as nova_context
        from nova import exception as nova_exc
        from nova import objects as nova_objects
        ctx = nova_context.get_admin_context()
        for cell in nova_objects.CellMappingList.get_all(ctx):
            if cell.is_cell0():
                continue
            with nova_context.target_cell(ctx, cell) as cctx:
                try:
                    node = nova_objects.ComputeNode.get_by_uuid(cctx,
                                                                node_uuid)
                except nova_exc.ComputeHostNotFound:
                    continue
            return _record(node, cell.uuid)
        return None


def _record(node, cell_uuid):
    """A Nova ``ComputeNode`` as Gantt reads it from Nova's table."""
    specs = [spec.to_list() for spec in node.supported_hv_specs]
    return compute_nodes.NodeRecord(
        host=node.host, nodename=node.hypervisor_hostname,
        cell_uuid=cell_uuid, hypervisor_type=node.hypervisor_type,
        hypervisor_version=node.hypervisor_version,
        supported_instances=json.dumps(specs))


class _OnTheWire(Exception):
    """A failure as a real transport carries it: serialized."""

    def __init__(self, data):
        super().__init__(data)
        self.data = data


def round_trip_rpc_failures():
    """oslo.messaging's fake transport hands an RPC caller the very
    exception object the server raised; a real transport (RabbitMQ)
    serializes it and the caller rebuilds it from its own allowed modules
    (``oslo_messaging._drivers.common``). Gantt's Nova errors are Nova's
    only by module and name (``gantt.nova.exception``), so with Gantt in
    the scheduler's place each failure takes that round trip, as it does
    on Nova's bus. Private oslo.messaging API, in this harness only
    (its version is pinned by ``gantt/tests/nova_diff/constraints.txt``).
    """
    from oslo_messaging._drivers import common
    from oslo_messaging._drivers import impl_fake

    real_reply = impl_fake.FakeIncomingMessage.reply
    real_send = impl_fake.FakeDriver._send

    def reply(self, reply=None, failure=None):
        if failure:
            failure = (None, _OnTheWire(
                common.serialize_remote_exception(failure)), None)
        real_reply(self, reply, failure)

    def _send(self, *args, **kwargs):
        try:
            return real_send(self, *args, **kwargs)
        except _OnTheWire as wire:
            raise common.deserialize_remote_exception(
                wire.data, self._allowed_remote_exmods) from None

    impl_fake.FakeIncomingMessage.reply = reply
    impl_fake.FakeDriver._send = _send


def tolerate_noload_deprecation():
    """Nova's ``WarningsFixture`` turns SQLAlchemy's deprecation warnings
    raised from nova's code into errors; SQLAlchemy 2.1 (the version
    pinned with nova 34 here) deprecates ``orm.noload``, which
    ``nova/db/main/api.py`` (``_build_instance_get``) uses on every
    instance save that skips a relationship: each build Nova buries in
    cell0 (a NoValidHost) then fails in Nova's own code, with Nova's own
    scheduler too. That one warning is let through."""
    import warnings

    from nova.tests import fixtures as nova_fixtures
    from sqlalchemy import exc as sqla_exc
    real_setup = nova_fixtures.WarningsFixture.setUp

    def setUp(self):
        real_setup(self)
        warnings.filterwarnings(
            "ignore", message=r"The noload\(\) option is deprecated",
            category=sqla_exc.SADeprecationWarning)

    nova_fixtures.WarningsFixture.setUp = setUp


def install():
    """Patch Placement's fixture and Nova's ``start_service`` (once)."""
    from nova import test
    from placement.tests.functional.fixtures import placement

    placement.PlacementFixture.setUp = gantt_placement_setup
    round_trip_rpc_failures()
    real_start = test.TestCase.start_service

    def start_service(self, name, host=None, cell_name=None, **kwargs):
        if name != "scheduler":
            return real_start(self, name, host=host, cell_name=cell_name,
                              **kwargs)
        scheduler = GanttScheduler(worker_options(self))
        scheduler.start()
        self.addCleanup(scheduler.stop)
        _CURRENT["scheduler"] = scheduler
        self.addCleanup(_CURRENT.pop, "scheduler", None)
        return scheduler

    real_flags = test.TestCase.flags

    def flags(self, **kw):
        real_flags(self, **kw)
        if "scheduler" in _CURRENT:
            _CURRENT["scheduler"].follow(self)

    test.TestCase.start_service = start_service
    test.TestCase.flags = flags
