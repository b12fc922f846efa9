"""A worker learns compute nodes the REST API writes (gantt-api in
process, a worker on the same SQLite database, a clock of the test's):
the trees_changed reload, the resync, the liveness rule."""

import time
import uuid

import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.api import app as app_mod
from gantt.db import allocations
from gantt.tests import factories as f
from gantt.tests.unit.api.conftest import Client

LATEST = "1.39"


class Clock:
    def __init__(self):
        self.now = time.time()

    def __call__(self):
        return self.now


@pytest.fixture
def api_conf(conf):
    conf.set_override("auth_strategy", "noauth2", "api")
    conf.set_override("notify_workers", False, "api")
    return conf


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def worker(api_conf, sqlite_db, clock):
    api_conf.set_override("connection", sqlite_db.url, "database")
    api_conf.set_override("compute_node_down_time", 300, "api")
    mgr = scheduler_mod.build(api_conf, sqlite_db, clock=clock)
    mgr.stats.load_cache()
    return mgr


@pytest.fixture
def api(api_conf, sqlite_db):
    return Client(app_mod.make_app(api_conf, db=sqlite_db))


def _ok(resp, status=200):
    assert resp.status_int == status, resp.body
    return resp.json if resp.body else None


def _gen(api, node):
    return _ok(api.get("/resource_providers/" + node,
                       version=LATEST))["generation"]


def _inventory(api, node, vcpus):
    _ok(api.put("/resource_providers/%s/inventories" % node, {
        "resource_provider_generation": _gen(api, node), "inventories": {
            "VCPU": {"total": vcpus}, "MEMORY_MB": {"total": 4096},
            "DISK_GB": {"total": 100}}}, version=LATEST))


def _traits(api, node, traits):
    _ok(api.put("/resource_providers/%s/traits" % node, {
        "resource_provider_generation": _gen(api, node),
        "traits": traits}, version=LATEST))


def _node(api, name, vcpus=8):
    node = str(uuid.uuid4())
    _ok(api.post("/resource_providers", {"name": name, "uuid": node},
                 version=LATEST))
    _inventory(api, node, vcpus)
    _traits(api, node, ["COMPUTE_NODE"])
    return node


def _state(worker, node):
    found = [s for s in worker.operator.get_host_states() if s.uuid == node]
    return found[0] if found else None


def _vcpus(state):
    return [r.total for r in state.resources
            if r.resource_class == "VCPU"][0]


def _place(worker, vcpus=1):
    [[sel]] = worker.placer.select_destinations(
        f.request(f.flavor(vcpus=vcpus, memory_mb=512, root_gb=1)),
        f.uuids(1))
    return sel


def test_a_cast_makes_a_rest_node_a_host_with_its_writes(worker, api):
    node = _node(api, "cn1")
    assert _state(worker, node) is None
    worker.stats.reload_trees([node])
    state = _state(worker, node)
    assert (state.host, state.up, _vcpus(state)) == ("cn1", True, 8)
    assert _place(worker).compute_node_uuid == node
    _inventory(api, node, 2)
    worker.stats.reload_trees([node])
    assert _vcpus(_state(worker, node)) == 2


def test_a_rest_node_lives_by_its_window_and_casts(worker, api, clock,
                                                   api_conf):
    node = _node(api, "cn2")
    worker.stats.reload_trees([node])
    clock.now += 299
    assert _state(worker, node).up
    clock.now += 2
    assert not _state(worker, node).up
    with pytest.raises(exception.NoValidHost):
        _place(worker)
    # Nova's instance-info cast naming the compute service
    worker.stats.host_seen("cn2")
    assert _state(worker, node).up
    worker.stats.host_seen("no-such-host")
    # a host an agent reports keeps service_down_time
    f.cast_report(_Direct(worker), "agent-host")
    clock.now += 61
    states = {s.host: s.up for s in worker.operator.get_host_states()}
    assert states == {"cn2": True, "agent-host": False}


def test_a_window_of_0_never_downs_a_rest_node(worker, api, clock,
                                                api_conf):
    api_conf.set_override("compute_node_down_time", 0, "api")
    node = _node(api, "cn3")
    worker.stats.reload_trees([node])
    clock.now += 10 ** 6
    assert _state(worker, node).up


def test_the_cast_s_time_is_stored_for_a_starting_worker(
        worker, api, api_conf, sqlite_db, clock):
    node = _node(api, "cn4")
    worker.stats.reload_trees([node])
    clock.now = time.time() + 200
    worker.stats.host_seen("cn4")
    later = Clock()
    later.now = clock.now + 250      # 450 s after the REST write
    starting = scheduler_mod.build(api_conf, sqlite_db, clock=later)
    starting.stats.load_cache()
    assert _state(starting, node).up
    later.now += 60
    assert not _state(starting, node).up


def test_the_resync_repairs_lost_casts_even_behind_a_claim(worker, api):
    node = _node(api, "cn5")
    worker.stats.resync()
    assert _vcpus(_state(worker, node)) == 8
    _inventory(api, node, 3)
    # a claim after the write moves the generation the worker then sees
    with worker.stats.db.begin() as conn:
        allocations.claim(conn, str(uuid.uuid4()), {node: {"VCPU": 1}})
    worker.stats.sync_usage()
    worker.stats.resync()
    assert _vcpus(_state(worker, node)) == 3


def test_forgotten_when_deleted_or_no_longer_a_compute_node(worker, api):
    node, other = _node(api, "cn6"), _node(api, "cn7")
    worker.stats.reload_trees([node, other])
    _traits(api, other, [])
    worker.stats.reload_trees([other])
    assert _state(worker, other) is None
    _ok(api.delete("/resource_providers/" + node, version=LATEST), 204)
    worker.stats.resync()
    assert _state(worker, node) is None
    with pytest.raises(exception.NoValidHost):
        _place(worker)


def test_a_restarted_worker_loads_rest_nodes(api, api_conf, sqlite_db,
                                             clock):
    node = _node(api, "cn8")
    api_conf.set_override("connection", sqlite_db.url, "database")
    mgr = scheduler_mod.build(api_conf, sqlite_db, clock=clock)
    mgr.stats.load_cache()
    assert _state(mgr, node).up
    clock.now += 301
    assert not _state(mgr, node).up


class _Direct:
    """A client whose casts reach one worker directly."""

    def __init__(self, worker):
        self.worker = worker

    def update_resource_stats(self, ctxt, node):
        self.worker.stats.update_resource_stats(node)
