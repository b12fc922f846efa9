"""The Placement-grade model over RabbitMQ, claims in MariaDB and PostgreSQL.

Provider trees (NUMA cells and SR-IOV physical functions under a compute
node), a sharing storage pool registered by a non-compute service,
baremetal nodes, granular groups with isolate / same_subtree / root
traits, moves (migrate, resize on the same host, confirm, revert) and
inventory changes refused while in use: each checked in the database the
claims were written to.
"""

import uuid

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import rpcapi
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.objects import selection
from gantt.tests import factories as f
from gantt.tests.functional import invariants

POOL_AGG = str(uuid.UUID(int=0x5A))
POOL = str(uuid.UUID(int=0x9001))


def _inv(rc, total, **kwargs):
    return compute_node.Inventory(resource_class=rc, total=total, **kwargs)


def _uuid(name):
    return f.host_uuid(name)


def tree_node(name, physnets=("CUSTOM_PHYSNET_A", "CUSTOM_PHYSNET_B"),
              cpus_per_cell=8, mem_per_cell=16384, **kwargs):
    """A compute node whose CPUs and memory live in two NUMA cells, each
    with one SR-IOV physical function on its own physnet; the root keeps
    only DISK_GB."""
    root = _uuid(name)
    children = []
    for cell, physnet in enumerate(physnets):
        numa = _uuid("%s-numa%d" % (name, cell))
        children.append(provider.ResourceProvider(
            uuid=numa, name="%s_numa%d" % (name, cell),
            parent_provider_uuid=root,
            inventories=[_inv("VCPU", cpus_per_cell),
                         _inv("MEMORY_MB", mem_per_cell)],
            traits=["HW_NUMA_ROOT"]))
        children.append(provider.ResourceProvider(
            uuid=_uuid("%s-pf%d" % (name, cell)),
            name="%s_pf%d" % (name, cell), parent_provider_uuid=numa,
            inventories=[_inv("SRIOV_NET_VF", 4)], traits=[physnet]))
    node = f.compute_node_obj(name, zone="az1", **kwargs)
    node.inventories = [_inv("DISK_GB", 500)]
    node.child_providers = children
    return node


def _report_all(daemon, nodes):
    results = [daemon.client.report_resource_stats(None, n) for n in nodes]
    daemon.wait_for_hosts(len(nodes))
    return results


def _vm_with_vf(physnet, **fields):
    """2 VCPU + 2 GiB from one NUMA cell, a VF on ``physnet`` in the same
    subtree (Nova's request for a port with NUMA affinity)."""
    flavor = f.flavor(vcpus=0, memory_mb=0, root_gb=10)
    return f.request(flavor, request_groups=[
        request_spec.RequestGroup(suffix="_CPU",
                                  resources={"VCPU": 2, "MEMORY_MB": 2048}),
        request_spec.RequestGroup(suffix="_NET",
                                  resources={"SRIOV_NET_VF": 1},
                                  required_traits=[physnet]),
    ], group_policy="isolate", same_subtree=[["_CPU", "_NET"]], **fields)


def test_nested_numa_and_sriov_with_same_subtree(daemon):
    results = _report_all(daemon, [tree_node("nest1")])
    assert results[0].applied and results[0].refused == {}

    uuids = f.uuids(8)
    lists = [daemon.client.select_destinations(
        None, _vm_with_vf("CUSTOM_PHYSNET_B"), [u])[0] for u in uuids[:4]]

    held = invariants.allocations(daemon.database)
    numa1, pf1 = _uuid("nest1-numa1"), _uuid("nest1-pf1")
    for sels, consumer in zip(lists, uuids[:4], strict=True):
        want = {(_uuid("nest1"), "DISK_GB"): 10, (numa1, "VCPU"): 2,
                (numa1, "MEMORY_MB"): 2048, (pf1, "SRIOV_NET_VF"): 1}
        # the VF's physnet is only under NUMA cell 1: CPUs come from there
        assert held[consumer] == want
        assert sels[0].allocation_request.as_mapping() == {
            _uuid("nest1"): {"DISK_GB": 10},
            numa1: {"VCPU": 2, "MEMORY_MB": 2048}, pf1: {"SRIOV_NET_VF": 1}}
    # pf1 has 4 VFs: a fifth such instance has nowhere to go, and says why
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(
            None, _vm_with_vf("CUSTOM_PHYSNET_B"), [uuids[4]])
    assert "no allocation candidate in its provider tree" in str(
        err.value)
    # the other physnet still fits, in the other cell
    sels = daemon.client.select_destinations(
        None, _vm_with_vf("CUSTOM_PHYSNET_A"), [uuids[5]])[0]
    assert _uuid("nest1-pf0") in sels[0].allocation_request.as_mapping()


def test_root_traits_and_isolate_need_distinct_providers(daemon):
    plain = f.compute_node_obj("plain1", zone="az1", vcpus=32,
                               traits=["CUSTOM_GOLD"])
    _report_all(daemon, [tree_node("iso1", traits=["CUSTOM_GOLD"]), plain])
    flavor = f.flavor(vcpus=0, memory_mb=0, root_gb=0)
    spec = f.request(flavor, request_groups=[
        request_spec.RequestGroup(suffix="1", resources={"VCPU": 6}),
        request_spec.RequestGroup(suffix="2", resources={"VCPU": 6})],
        group_policy="isolate", root_required=["CUSTOM_GOLD"])
    sels = daemon.client.select_destinations(None, spec, f.uuids(1))[0]
    # a lone provider cannot isolate two groups: only the tree can
    chosen = sels[0].allocation_request.as_mapping()
    assert set(chosen) == {_uuid("iso1-numa0"), _uuid("iso1-numa1")}
    spec.root_required = []
    spec.root_forbidden = ["CUSTOM_GOLD"]
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(None, spec, f.uuids(1))
    assert "root had forbidden trait CUSTOM_GOLD" in str(err.value)


def _pool_report(total=1000, sequence=1, force=False):
    return provider.ProviderReport(
        provider=provider.ResourceProvider(
            uuid=POOL, name="ceph-pool-1",
            inventories=[_inv("DISK_GB", total)],
            traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[POOL_AGG]),
        report_sequence=sequence, force=force)


def test_sharing_pool_serves_its_aggregate_and_volumes(daemon):
    # diskless computes in the pool's aggregate, one elsewhere with disk
    diskless = []
    for i in range(3):
        node = f.compute_node_obj("dl%d" % i, zone="az1",
                                  aggregates=[POOL_AGG])
        node.inventories = [inv for inv in node.inventories
                            if inv.resource_class != "DISK_GB"]
        diskless.append(node)
    outside = f.compute_node_obj("outside1", zone="az1", disk_gb=50)
    _report_all(daemon, diskless + [outside])
    result = daemon.client.update_provider(None, _pool_report())
    assert result.applied and result.provider_uuid == POOL

    flavor = f.flavor(vcpus=1, memory_mb=1024, root_gb=100)
    uuids = f.uuids(3)
    lists = daemon.client.select_destinations(
        None, f.request(flavor, num_instances=3), uuids)
    held = invariants.allocations(daemon.database)
    for sels, consumer in zip(lists, uuids, strict=True):
        host = _uuid(sels[0].service_host)
        assert sels[0].service_host.startswith("dl")
        assert held[consumer] == {(host, "VCPU"): 1,
                                  (host, "MEMORY_MB"): 1024,
                                  (POOL, "DISK_GB"): 100}

    # a volume service asks for disk only: the pool can answer alone
    volume = f.request(f.flavor(vcpus=0, memory_mb=0, root_gb=600))
    found = daemon.client.get_allocation_candidates(None, volume)
    mappings = [c.allocation_request.as_mapping() for c in found]
    assert {POOL: {"DISK_GB": 600}} in mappings
    assert all(m != {_uuid("outside1"): {"DISK_GB": 600}}
               for m in mappings)        # 50 GB of local disk is too small
    volume_uuid = str(uuid.uuid4())
    assert daemon.client.claim_allocations(
        None, volume_uuid, selection.AllocationRequest(allocations=[
            selection.AllocationItem(resource_provider_uuid=POOL,
                                     resources={"DISK_GB": 600})]))
    # 300 + 600 of 1000 used: another 600 GB volume no longer fits
    with pytest.raises(exception.CapacityExceeded):
        daemon.client.claim_allocations(
            None, str(uuid.uuid4()), selection.AllocationRequest(
                allocations=[selection.AllocationItem(
                    resource_provider_uuid=POOL,
                    resources={"DISK_GB": 600})]))

    # shrinking the pool below its usage is refused, and said so
    shrink = daemon.client.update_provider(None, _pool_report(500, 2))
    assert "DISK_GB" in shrink.refused
    with pytest.raises(exception.ProviderInUse):
        daemon.client.delete_provider(None, POOL)
    assert daemon.client.release(None, volume_uuid)


def test_baremetal_nodes_are_whole_units(daemon):
    nodes = []
    for i in range(2):
        node = f.compute_node_obj("bm%d" % i, zone="az1")
        node.inventories = [_inv("CUSTOM_BAREMETAL_GOLD", 1, min_unit=1,
                                 max_unit=1)]
        nodes.append(node)
    _report_all(daemon, nodes)
    flavor = f.flavor(vcpus=0, memory_mb=0, root_gb=0, extra_specs={
        "resources:CUSTOM_BAREMETAL_GOLD": "1"})
    lists = daemon.client.select_destinations(
        None, f.request(flavor, num_instances=2), f.uuids(2))
    assert {sels[0].service_host for sels in lists} == {"bm0", "bm1"}
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(None, f.request(flavor),
                                          f.uuids(1))
    assert "lacked CUSTOM_BAREMETAL_GOLD" in str(err.value)


def test_migrate_confirm_and_resize_revert(daemon):
    _report_all(daemon, [f.compute_node_obj("mv%d" % i, zone="az1", vcpus=4)
                     for i in range(2)])
    flavor = f.flavor(vcpus=2, memory_mb=1024, root_gb=10)
    instance = str(uuid.uuid4())
    source = daemon.client.select_destinations(
        None, f.request(flavor), [instance])[0][0].service_host
    other = ({"mv0", "mv1"} - {source}).pop()

    # migrate: the source is ignored, as Nova asks
    migration = str(uuid.uuid4())
    spec = f.request(flavor, ignore_hosts=[source])
    sels = daemon.client.move_claim(None, spec, instance, migration)
    assert sels[0].service_host == other
    held = invariants.allocations(daemon.database)
    assert held[migration] == {(_uuid(source), "VCPU"): 2,
                               (_uuid(source), "MEMORY_MB"): 1024,
                               (_uuid(source), "DISK_GB"): 10}
    assert {rp for rp, _ in held[instance]} == {_uuid(other)}
    # a lost reply: the same call again replaces only the destination
    again = daemon.client.move_claim(None, spec, instance, migration)
    assert again[0].service_host == other
    now = invariants.allocations(daemon.database)
    assert now[migration] == held[migration]
    assert daemon.client.confirm_move(None, migration) is True
    assert daemon.client.confirm_move(None, migration) is False
    held = invariants.allocations(daemon.database)
    assert migration not in held
    assert {rp for rp, _ in held[instance]} == {_uuid(other)}
    # the move_claim delivered late, after the confirm: refused, typed,
    # and nothing is handed to the finished migration
    with pytest.raises(exception.InvalidRequest, match="confirmed already"):
        daemon.client.move_claim(None, spec, instance, migration)
    assert invariants.allocations(daemon.database) == held

    # resize up on the same host: room for old (2) and new (2 more) VCPUs
    bigger = f.flavor(vcpus=2, memory_mb=2048, root_gb=10)
    resize = str(uuid.uuid4())
    dest = request_spec.Destination(host=other)
    sels = daemon.client.move_claim(
        None, f.request(bigger, requested_destination=dest), instance,
        resize)
    assert sels[0].service_host == other
    held = invariants.allocations(daemon.database)
    assert held[resize][(_uuid(other), "VCPU")] == 2
    assert held[instance][(_uuid(other), "MEMORY_MB")] == 2048
    # 4 VCPUs on the host are now all held: a third 2-VCPU resize fails
    with pytest.raises(exception.NoValidHost):
        daemon.client.move_claim(
            None, f.request(f.flavor(vcpus=4, memory_mb=1024, root_gb=10),
                            requested_destination=dest),
            str(uuid.uuid4()), str(uuid.uuid4()))
    # revert: the instance gets its old size back, the new one is freed
    assert daemon.client.revert_move(None, instance, resize) is True
    assert daemon.client.revert_move(None, instance, resize) is False
    held = invariants.allocations(daemon.database)
    assert resize not in held
    assert held[instance] == {(_uuid(other), "VCPU"): 2,
                              (_uuid(other), "MEMORY_MB"): 1024,
                              (_uuid(other), "DISK_GB"): 10}


def test_inventory_in_use_is_refused_unless_forced(daemon):
    node = f.compute_node_obj("inuse1", zone="az1", memory_mb=8192)
    _report_all(daemon, [node])
    daemon.client.select_destinations(
        None, f.request(f.flavor(vcpus=1, memory_mb=6144, root_gb=10)),
        f.uuids(1))
    smaller = f.compute_node_obj("inuse1", zone="az1", memory_mb=4096)
    result = daemon.client.report_resource_stats(None, smaller)
    assert result.applied
    assert "6144 in use" in result.refused["MEMORY_MB"]
    # the scheduler keeps using what the database holds (8192)
    mem = {r.resource_class: r for r in daemon.client.get_host_states(
        None, ["inuse1"])[0].resources}["MEMORY_MB"]
    assert mem.total == 8192
    forced = f.compute_node_obj("inuse1", zone="az1", memory_mb=4096)
    result = daemon.client.report_resource_stats(None, forced, force=True)
    assert result.refused == {}
    with daemon.database.engine.connect() as conn:
        total = conn.execute(sa.text(
            "SELECT i.total FROM inventories i JOIN resource_providers rp "
            "ON rp.id = i.resource_provider_id WHERE rp.uuid = :u AND "
            "i.resource_class = 'MEMORY_MB'"), {"u": _uuid("inuse1")}
        ).scalar()
    assert total == 4096


def test_old_and_new_agents_report_to_one_scheduler(daemon):
    """A 1.2 agent (no child providers) and a 1.3 agent (a tree) both
    report; the old one's primitive is what a 1.2 agent really sends."""
    old = f.compute_node_obj("oldagent", zone="az1")
    primitive = old.obj_to_primitive(target_version="1.2")
    assert primitive["gantt_object.version"] == "1.2"
    assert "child_providers" not in primitive["gantt_object.data"]
    # sent as raw primitives, without Gantt's serializer, as an old agent
    target = messaging.Target(exchange=rpcapi.EXCHANGE, topic=daemon.topic,
                              version="1.0", fanout=True)
    raw = messaging.get_rpc_client(daemon.transport, target)
    raw.cast({"request_id": "req-old-agent"}, "update_resource_stats",
             compute_node=primitive)
    daemon.client.update_resource_stats(None, tree_node("newagent"))
    states = {s.host: s for s in daemon.wait_for_hosts(2)}
    assert set(states) >= {"oldagent", "newagent"}
    vcpu = {r.resource_class: r.total for r in states["newagent"].resources}
    assert vcpu["VCPU"] == 16        # the tree's sum, for operators


def test_invalid_trees_are_refused_with_a_reason(daemon):
    node = tree_node("bad1")
    node.child_providers[1].parent_provider_uuid = str(uuid.uuid4())
    with pytest.raises(exception.InvalidRequest) as err:
        daemon.client.report_resource_stats(None, node)
    assert "not reported before it" in str(err.value)
