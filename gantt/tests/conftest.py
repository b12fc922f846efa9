"""pytest glue: expose the fixtures.Fixture classes as pytest fixtures."""

import pytest

from gantt import rpc
from gantt.tests import fixtures as gantt_fixtures


def _use(fixture):
    fixture.setUp()
    return fixture


@pytest.fixture
def conf():
    fx = _use(gantt_fixtures.Conf())
    yield fx.conf
    fx.cleanUp()


@pytest.fixture
def nova_spreading(conf):
    """Nova's weighers as configured (``[filter_scheduler] packing`` empty)
    instead of Gantt's default packing policy: for tests whose expected
    hosts are those spreading picks (the roomiest first). Ask for it
    before ``scheduler`` (``pytestmark = pytest.mark.usefixtures(...)``).
    """
    conf.set_override("packing", "", "filter_scheduler")
    return conf


@pytest.fixture
def sqlite_db():
    fx = _use(gantt_fixtures.Database("sqlite"))
    yield fx.db
    fx.cleanUp()


@pytest.fixture
def scheduler(conf, sqlite_db):
    """A worker's Scheduler on SQLite with an empty, ready cache."""
    from gantt import scheduler as scheduler_mod
    conf.set_override("connection", sqlite_db.url, "database")
    mgr = scheduler_mod.build(conf, sqlite_db)
    mgr.stats.load_cache()
    return mgr


@pytest.fixture
def fake_transport():
    """An oslo.messaging transport on the in-process fake driver."""
    conf = gantt_fixtures.make_conf()
    transport = rpc.get_transport(conf, url="fake:///")
    yield transport
    transport.cleanup()
