"""A compute node made only through the Placement REST API is a host.

Real ``gantt-api`` and ``gantt-scheduler`` processes (two workers) on
MariaDB, then PostgreSQL, over RabbitMQ; no Gantt agent reports. The
node is made as nova-compute's report client makes it: ``POST
/resource_providers`` with the node's name and uuid, ``PUT`` of its
inventories, then of its traits with ``COMPUTE_NODE``. Gantt's own
``select_destinations`` places on it and the claim is what ``GET
/allocations`` shows; an inventory cut, Nova's ``COMPUTE_STATUS_DISABLED``
trait, the provider's deletion reach every worker's next decision; a lost
cast is repaired by the periodic resync; the node is down once its last
sign of life (a REST write, or Nova's ``sync_instance_info`` cast) is
older than ``[api] compute_node_down_time``; a Gantt agent reporting the
same node takes it over. With ``[nova] api_database_connection``, the
node's service host and hypervisor capabilities are read from Nova's
tables, there on the same database server.
"""

import json
import uuid

import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt.objects import request_spec
from gantt.tests import factories as f
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional import test_placement_api as placement
from gantt.tests.functional import waiting

INVENTORY = {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100}
#: requests per check: each lands on one of the two workers
TRIES = 6


def _inventories(totals):
    return {rc: {"total": total, "max_unit": total}
            for rc, total in totals.items()}


def _written(status_body, want=200):
    status, body = status_body
    assert status == want, body
    return body


def make_node(api, name, totals=INVENTORY, traits=("COMPUTE_NODE",),
              node_uuid=None):
    """A compute node as nova-compute's report client makes it."""
    node_uuid = node_uuid or str(uuid.uuid4())
    rp = _written(api.call("POST", "/resource_providers",
                           {"name": name, "uuid": node_uuid}))
    inv = _written(api.call(
        "PUT", "/resource_providers/%s/inventories" % node_uuid,
        {"resource_provider_generation": rp["generation"],
         "inventories": _inventories(totals)}))
    set_traits(api, node_uuid, traits, inv["resource_provider_generation"])
    return node_uuid


def generation(api, node_uuid):
    return _written(api.call("GET", "/resource_providers/%s" %
                             node_uuid))["generation"]


def set_traits(api, node_uuid, traits, gen=None):
    gen = generation(api, node_uuid) if gen is None else gen
    _written(api.call("PUT", "/resource_providers/%s/traits" % node_uuid,
                      {"resource_provider_generation": gen,
                       "traits": sorted(traits)}))


def set_inventory(api, node_uuid, totals):
    _written(api.call(
        "PUT", "/resource_providers/%s/inventories" % node_uuid,
        {"resource_provider_generation": generation(api, node_uuid),
         "inventories": _inventories(totals)}))


def _spec(vcpus=1):
    return f.request(f.flavor(vcpus=vcpus, memory_mb=512, root_gb=1))


def place(daemon, vcpus=1):
    """One instance placed: its uuid and Selection."""
    (consumer,) = f.uuids(1)
    [[selection]] = daemon.client.select_destinations(
        None, _spec(vcpus), [consumer], return_alternates=False)
    return consumer, selection


def placed_everywhere(daemon):
    """Every worker places (each claim released: the node does not
    fill)."""
    for _ in range(TRIES):
        consumer, _selection = place(daemon)
        daemon.client.release(None, consumer)


def refused_everywhere(daemon, vcpus=1):
    """The request fails on every worker; the reasons given."""
    reasons = set()
    for _ in range(TRIES):
        consumers = f.uuids(1)
        try:
            placed = daemon.client.select_destinations(None, _spec(vcpus),
                                                       consumers)
        except exception.NoValidHost as exc:
            reasons.add(str(exc))
        else:
            # not yet: what it holds must not fill the node
            daemon.client.release(None, consumers[0])
            raise AssertionError("placed: %s" % placed)
    return reasons


def eventually(check):
    """``check()``'s value once it no longer fails (the workers learn
    of a REST write by a cast, each in its own time)."""
    return waiting.until(
        getattr(check, "__name__", "a check"), lambda: (check(),),
        ignoring=(AssertionError, exception.NoValidHost), interval=0.2)[0]


def up_states(daemon, node_uuid):
    """The node's HostState on each of TRIES answers."""
    return [[s for s in daemon.client.get_host_states(None)
             if s.uuid == node_uuid] for _ in range(TRIES)]


@pytest.fixture
def cloud(daemon_factory, server_db, tmp_path):
    """Two workers that learn REST writes only from gantt-api's casts (no
    periodic resync), and the API."""
    daemon = daemon_factory(server_db.url, workers=2,
                            extra="usage_sync_interval = 0\n")
    api = placement.ApiProcess(str(tmp_path), daemon).start()
    yield daemon, api
    api.stop()
    assert "Traceback" not in api.log(), api.log()


def test_a_rest_made_node_is_placed_on_and_follows_its_writes(cloud):
    daemon, api = cloud
    node = make_node(api, "rest-node-1")

    # every worker knows it as a host, up and enabled, named as the RP
    for states in eventually(lambda: _all_known(daemon, node)):
        (state,) = states
        assert (state.host, state.nodename, state.up, state.disabled) == (
            "rest-node-1", "rest-node-1", True, False)

    consumer, selection = place(daemon, vcpus=6)
    assert (selection.compute_node_uuid, selection.service_host) == (
        node, "rest-node-1")
    held = _written(api.call("GET", "/allocations/" + consumer))
    assert held["allocations"][node]["resources"] == {
        "VCPU": 6, "MEMORY_MB": 512, "DISK_GB": 1}

    # the inventory shrinks through REST: 6 of 7 VCPU used, 2 asked
    set_inventory(api, node, dict(INVENTORY, VCPU=7))
    assert any("VCPU" in r for r in eventually(
        lambda: refused_everywhere(daemon, vcpus=2)))
    # and grows again
    set_inventory(api, node, INVENTORY)
    eventually(lambda: place(daemon, vcpus=2))


def _all_known(daemon, node):
    states = up_states(daemon, node)
    assert all(len(s) == 1 for s in states), states
    return states


def test_nova_disabling_the_compute_service_stops_placement(cloud):
    daemon, api = cloud
    node = make_node(api, "rest-node-2")
    eventually(lambda: _all_known(daemon, node))
    place(daemon)

    # as Nova's compute does when its service is disabled
    set_traits(api, node, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])
    assert any("COMPUTE_STATUS_DISABLED" in r for r in eventually(
        lambda: refused_everywhere(daemon)))
    assert {s.disabled for [s] in up_states(daemon, node)} == {True}
    set_traits(api, node, ["COMPUTE_NODE"])
    eventually(lambda: placed_everywhere(daemon))

    # without COMPUTE_NODE it is no host; deleted, it is gone
    set_traits(api, node, [])
    eventually(lambda: _none_known(daemon, node))


def _none_known(daemon, node):
    assert up_states(daemon, node) == [[]] * TRIES


def test_a_deleted_node_is_forgotten(cloud):
    daemon, api = cloud
    node = make_node(api, "rest-node-3")
    eventually(lambda: _all_known(daemon, node))
    assert _written(api.call("DELETE", "/resource_providers/" + node),
                    204) is None
    eventually(lambda: _none_known(daemon, node))
    refused_everywhere(daemon)


def test_a_lost_cast_is_repaired_by_the_resync(daemon_factory, server_db,
                                               tmp_path):
    daemon = daemon_factory(server_db.url, workers=2,
                            extra="usage_sync_interval = 1\n")
    # an API that tells no worker: only the resync can
    api = placement.ApiProcess(str(tmp_path), daemon,
                               extra="notify_workers = False").start()
    try:
        node = make_node(api, "rest-node-4")
        eventually(lambda: _all_known(daemon, node))
        set_traits(api, node, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])
        eventually(lambda: refused_everywhere(daemon))
        set_traits(api, node, ["COMPUTE_NODE"])
        eventually(lambda: placed_everywhere(daemon))
        _written(api.call("DELETE", "/resource_providers/" + node), 204)
        eventually(lambda: _none_known(daemon, node))
    finally:
        api.stop()


def _nova_caster(daemon, topic):
    """Nova's scheduler client, as far as its instance-info casts go
    (exchange ``nova``, fanout, RPC 4.2; no Nova code needed)."""
    return messaging.get_rpc_client(
        daemon.transport, messaging.Target(
            exchange="nova", topic=topic, version="4.2")).prepare(
        fanout=True)


def test_a_rest_node_lives_by_its_writes_and_novas_casts(
        daemon_factory, server_db, tmp_path):
    topic = "nova-sched-%s" % uuid.uuid4().hex[:8]
    daemon = daemon_factory(
        server_db.url, workers=2, extra="usage_sync_interval = 0\n"
        "[api]\ncompute_node_down_time = 4\n"
        "[nova]\nenabled = True\ntopic = %s\n" % topic)
    api = placement.ApiProcess(str(tmp_path), daemon).start()
    try:
        node = make_node(api, "rest-node-5")
        eventually(lambda: _all_known(daemon, node))
        place(daemon)
        # no sign of life for longer than the window: down everywhere
        assert any("down" in r for r in eventually(
            lambda: refused_everywhere(daemon)))
        # a REST write is one
        set_traits(api, node, ["COMPUTE_NODE", "HW_CPU_X86_AVX2"])
        eventually(lambda: placed_everywhere(daemon))
        eventually(lambda: refused_everywhere(daemon))
        # and so is Nova's instance sync for the compute service
        _nova_caster(daemon, topic).cast(
            {}, "sync_instance_info", host_name="rest-node-5",
            instance_uuids=[])
        eventually(lambda: placed_everywhere(daemon))
    finally:
        api.stop()
    assert "Traceback" not in api.log(), api.log()


def test_a_gantt_agent_reporting_the_node_takes_it_over(cloud):
    daemon, api = cloud
    name = "rest-node-6"
    node = make_node(api, name, node_uuid=f.host_uuid(name))
    eventually(lambda: _all_known(daemon, node))
    f.cast_report(daemon.client, name, vcpus=32, sequence=1)

    def agents():
        states = up_states(daemon, node)
        vcpus = {[r.total for r in s.resources
                  if r.resource_class == "VCPU"][0] for [s] in states}
        assert vcpus == {32}
    eventually(agents)
    inv = _written(api.call("GET", "/resource_providers/%s/inventories"
                            % node))
    assert inv["inventories"]["VCPU"]["total"] == 32
    # a REST write now changes the contents, not who describes the node
    set_traits(api, node, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])
    eventually(lambda: refused_everywhere(daemon))


@pytest.fixture
def nova_tables(server_db):
    """Nova's API and cell1 databases, beside Gantt's on its server."""
    dbs = [gantt_fixtures.Database(server_db.backend, migrate=False)
           for _ in range(2)]
    for db in dbs:
        db.setUp()
    yield gantt_fixtures.NovaRecords(dbs[0].url, dbs[1].url)
    for db in dbs:
        db.cleanUp()


def _image_for(arch):
    return request_spec.ImageMeta(id="img-" + arch,
                                  properties={"hw_architecture": arch})


def test_the_service_host_and_hypervisor_come_from_nova_s_tables(
        daemon_factory, server_db, tmp_path, nova_tables):
    """A short service host with a fully qualified hypervisor host name,
    as libvirt computes often have: Gantt places on the node, its
    Selection names the service host (where Nova's conductor casts the
    build), and ImagePropertiesFilter reads the node's hypervisor."""
    daemon = daemon_factory(server_db.url, workers=2,
                            extra="usage_sync_interval = 0\n")
    api = placement.ApiProcess(
        str(tmp_path), daemon, extra="[nova]\napi_database_connection = "
        "%s\n" % nova_tables.api_url).start()
    try:
        node = str(uuid.uuid4())
        nova_tables.add_node(
            node, "cmp7", "cmp7.rack2.example.org", hypervisor_type="QEMU",
            hypervisor_version=8002000,
            supported_instances=json.dumps([["x86_64", "qemu", "hvm"]]))
        make_node(api, "cmp7.rack2.example.org", node_uuid=node)

        for [state] in eventually(lambda: _all_known(daemon, node)):
            assert (state.host, state.nodename) == (
                "cmp7", "cmp7.rack2.example.org")
            assert state.capabilities["hypervisor_type"] == "QEMU"
        spec = f.request(f.flavor(vcpus=1, memory_mb=512, root_gb=1),
                         image=_image_for("x86_64"))
        [[selection]] = daemon.client.select_destinations(
            None, spec, f.uuids(1), return_alternates=False)
        assert (selection.service_host, selection.nodename) == (
            "cmp7", "cmp7.rack2.example.org")
        with pytest.raises(exception.NoValidHost,
                           match="ImagePropertiesFilter"):
            daemon.client.select_destinations(
                None, f.request(f.flavor(vcpus=1, memory_mb=512,
                                         root_gb=1),
                                image=_image_for("aarch64")), f.uuids(1))
    finally:
        api.stop()
    assert "Traceback" not in api.log(), api.log()
