"""A cache loaded in bulk from the database holds what reports give it.

``HostStateCache.load`` writes whole columns; it must leave the cache as
``apply_report(stored report, persisted=True)`` and ``apply_usage`` of
each host (and its providers) would, and as the agents' reports would.
"""

import uuid

import numpy as np

from gantt.db import allocations
from gantt.db import host_load
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa as numa_obj
from gantt.objects import pci as pci_obj
from gantt.objects import provider as provider_obj
from gantt.scheduler.state import aggregates
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import load as load_mod
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

ZONE_AGG = str(uuid.UUID(int=0xA1))
RACK_AGG = str(uuid.UUID(int=0xA2))
LISTED_AGG = str(uuid.UUID(int=0xA3))
CHILD_AGG = str(uuid.UUID(int=0xA4))
CELL = str(uuid.UUID(int=0xC1))


def _numa_cell(cell_id, pcpus):
    return numa_obj.NUMACell(
        id=cell_id, cpuset=list(range(8)),
        pcpuset=list(range(100, 100 + pcpus)), memory_mb=16384,
        mempages=[numa_obj.NUMAPagePool(size_kb=4, total=4096),
                  numa_obj.NUMAPagePool(size_kb=2048, total=cell_id)])


def _child(name, parent, inventories, traits=(), aggs=()):
    return provider_obj.ResourceProvider(
        uuid=factories.host_uuid(name), name=name,
        parent_provider_uuid=parent,
        inventories=[cn_obj.Inventory(resource_class=rc, total=total)
                     for rc, total in inventories.items()],
        traits=list(traits), aggregates=list(aggs))


def _nodes():
    """Hosts unlike each other in every way a report can differ."""
    custom = cn_obj.Inventory(resource_class="CUSTOM_FPGA", total=7,
                              reserved=1, min_unit=2, max_unit=6,
                              step_size=2, allocation_ratio=1 / 3)
    nodes = [
        factories.compute_node_obj(
            "plain", zone="az1", cell_uuid=CELL, traits=["HW_CPU_X86_AVX2"],
            aggregates=[ZONE_AGG, RACK_AGG], num_instances=3,
            num_io_ops=1, instance_uuids=factories.uuids(3),
            capabilities={"hypervisor_type": "QEMU"},
            stats={"failed_builds": "1"}, metrics={"cpu.percent": 0.25}),
        factories.compute_node_obj(
            "same-as-plain", zone="az1", cell_uuid=CELL,
            traits=["HW_CPU_X86_AVX2"], aggregates=[ZONE_AGG, RACK_AGG],
            capabilities={"hypervisor_type": "QEMU"},
            stats={"failed_builds": "1"}, metrics={"cpu.percent": 0.25}),
        factories.compute_node_obj(
            "odd", vcpus=7, cpu_ratio=0.1, ram_ratio=1.5,
            reserved_memory_mb=512, disabled=True,
            extra_inventories=[custom], traits=["CUSTOM_X", "CUSTOM_Y"],
            instance_uuids=[]),
        factories.compute_node_obj(
            "numa", numa_cells=[_numa_cell(0, 2), _numa_cell(1, 4)],
            pci_pools=[pci_obj.PciDevicePool(
                vendor_id="8086", product_id="154d", count=2,
                tags={"physical_network": "physnet1"})],
            aggregates=[ZONE_AGG]),
        factories.compute_node_obj("listed", aggregates=[]),
        factories.compute_node_obj("bare", traits=[], aggregates=[]),
    ]
    tree = factories.compute_node_obj("tree", aggregates=[ZONE_AGG])
    tree.child_providers = [
        _child("tree-numa0", tree.uuid, {"VCPU": 4}, ["CUSTOM_NUMA"]),
        _child("tree-pf0", factories.host_uuid("tree-numa0"),
               {"SRIOV_NET_VF": 8}, ["CUSTOM_PHYSNET_A"], [CHILD_AGG])]
    return nodes + [tree]


def _stored_world(scheduler):
    nodes = _nodes()
    for node in nodes:
        scheduler.stats.report_resource_stats(node)
    with scheduler.stats.db.begin() as conn:
        allocations.claim(conn, str(uuid.uuid4()), {
            factories.host_uuid("plain"): {"VCPU": 2, "MEMORY_MB": 1024},
            factories.host_uuid("tree-pf0"): {"SRIOV_NET_VF": 1}})
        allocations.claim(conn, str(uuid.uuid4()), {
            factories.host_uuid("odd"): {"CUSTOM_FPGA": 2}})
    return nodes, host_load.load_host_columns(scheduler.stats.db)


def _aggregate_set():
    return aggregates.AggregateSet([
        aggregate_obj.Aggregate(uuid=ZONE_AGG, name="z", hosts=[],
                                metadata={"availability_zone": "az1"}),
        aggregate_obj.Aggregate(uuid=LISTED_AGG, name="l",
                                hosts=["listed", "plain"], metadata={})])


def _applied(stored):
    """The reference: each stored host applied as a report."""
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_aggregates(_aggregate_set())
    for i in range(len(stored)):
        cache.apply_report(load_mod.stored_report(stored, i),
                           persisted=True)
        cache.apply_usage(stored.uuids[i], int(stored.generation[i]),
                          stored.usage_of(i))
        for child in stored.children.get(i, ()):
            cache.apply_usage(child.uuid, child.generation, child.usage)
    return cache


def _loaded(stored):
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_aggregates(_aggregate_set())
    cache.load(stored)
    return cache


def _snapshot(cache):
    """Everything a filter, a weigher or an operator can see of each host,
    by uuid (row numbers and column orders may differ)."""
    table = cache.table
    view = host_view.HostView(table, helpers.NOW, 3600)
    out = {}
    for uuid_, row in table.row_by_uuid.items():
        record = view.record(row)
        by_rc = {rc: (int(table.used[row, col]), bool(
            table.has_inventory[row, col]), float(table.capacity[row, col]),
            table.rc_bounds.get(col),
            # the room kept with inventory and usage (rows.write_room)
            tuple(float(getattr(table, kept)[row, col]) for kept in (
                "free", "free_unreserved", "free_overcommitted")))
            for col, rc in enumerate(table.resource_classes.names)
            if table.has_inventory[row, col] or table.used[row, col]}
        keyed = {
            name: {key: family.evaluate(key, table.n, str, None, object)[row]
                   for key in family.keys.names}
            for name, family in (("caps", table.capability_columns),
                                 ("stats", table.stat_columns))}
        metrics = {key: float(table.metric_columns.column(key, table.n)[row])
                   for key in table.metric_columns.keys.names}
        keyed["metrics"] = {k: None if np.isnan(v) else v
                            for k, v in metrics.items()}
        out[uuid_] = {
            "state": table.host_state(row, helpers.NOW, 3600).obj_to_dict(),
            "record": {k: v for k, v in vars(record).items() if k != "row"},
            "resources": by_rc, "keyed": keyed,
            "numa": {name: arr[row, :len(record.numa_cells)].tolist()
                     for name, arr, _f in table.numa._arrays()},
            "pci": {k: int(table.pci.counts[row, table.pci.keys.get(k)])
                    for k in table.pci.keys.names},
            "fingerprint": table.fingerprints[row],
            "seen": (float(table.last_seen[row]),
                     float(table.persisted_at[row])),
            "generation": int(table.generation[row]),
            "in": {a: bool(view.in_aggregate(a)[row])
                   for a in table.aggregates_index.names},
            "tree": table.providers.tree(uuid_),
            "by_host": row in table.rows_by_host[table.hosts[row]],
        }
    return out


def test_a_bulk_load_holds_what_the_reports_would(scheduler):
    _nodes_, stored = _stored_world(scheduler)
    assert len(stored) == 7 and list(stored.children) == [6]
    applied, loaded = _applied(stored), _loaded(stored)
    assert _snapshot(loaded) == _snapshot(applied)
    assert loaded.table.n == applied.table.n == 7
    # listed by an aggregate's host list: a member too
    view = loaded.view(60)
    assert view.in_aggregate(LISTED_AGG)[
        loaded.table.row_by_uuid[factories.host_uuid("listed")]]


def test_a_loaded_host_need_not_be_stored_again(scheduler):
    nodes, stored = _stored_world(scheduler)
    loaded = _loaded(stored)
    for node in nodes:
        row = loaded.table.row_by_uuid[node.uuid]
        report = update_mod.HostUpdate.from_compute_node(
            node, received_at=float(loaded.table.persisted_at[row]) + 1)
        # the fingerprint of what the agent sent equals the stored one's
        assert not loaded.needs_persisting(report, interval=60), node.host


def test_a_bulk_load_leaves_no_spare_rows_and_grows_by_an_eighth(scheduler):
    for i in range(100):
        scheduler.stats.report_resource_stats(factories.compute_node_obj(
            "h%03d" % i))
    loaded = _loaded(host_load.load_host_columns(scheduler.stats.db))
    assert loaded.table.n == loaded.table.row_capacity == 100
    loaded.apply_report(update_mod.HostUpdate.from_compute_node(
        factories.compute_node_obj("one-more"), received_at=helpers.NOW))
    # not doubled: a 100k-host table must not take 100k spare rows
    assert loaded.table.row_capacity == 100 + 64
    assert loaded.table.n == 101


def test_a_report_cast_while_loading_is_kept_when_newer(scheduler):
    newer = factories.compute_node_obj("newer", vcpus=8, sequence=10)
    older = factories.compute_node_obj("older", vcpus=8, sequence=10)
    scheduler.stats.report_resource_stats(newer)
    scheduler.stats.report_resource_stats(older)
    stored = host_load.load_host_columns(scheduler.stats.db)
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    # casts that reached this worker before the load wrote its rows
    cache.apply_report(update_mod.HostUpdate.from_compute_node(
        factories.compute_node_obj("newer", vcpus=32, sequence=11),
        received_at=helpers.NOW))
    cache.apply_report(update_mod.HostUpdate.from_compute_node(
        factories.compute_node_obj("older", vcpus=32, sequence=9),
        received_at=helpers.NOW))
    cache.load(stored)
    totals = {s.host: {r.resource_class: r.total for r in s.resources}
              for s in cache.host_states(3600)}
    assert totals["newer"]["VCPU"] == 32
    assert totals["older"]["VCPU"] == 8
    assert cache.table.n == 2


def test_a_loaded_cache_takes_newer_usage_and_reports(scheduler):
    _nodes_, stored = _stored_world(scheduler)
    loaded = _loaded(stored)
    plain = factories.host_uuid("plain")
    row = loaded.table.row_by_uuid[plain]
    generation = int(loaded.table.generation[row])
    assert not loaded.apply_usage(plain, generation, {"VCPU": 99})
    assert loaded.apply_usage(plain, generation + 1, {"VCPU": 5})
    vcpu = loaded.table.resource_classes.get("VCPU")
    assert loaded.table.used[row, vcpu] == 5
    node = factories.compute_node_obj("plain", traits=["CUSTOM_NEW"],
                                      aggregates=[])
    assert loaded.apply_report(update_mod.HostUpdate.from_compute_node(
        node, received_at=helpers.NOW))
    view = loaded.view(60)
    assert view.record(row).traits == {"CUSTOM_NEW"}
    assert view.record(row).aggregates == {LISTED_AGG}
    assert not view.in_aggregate(RACK_AGG)[row]
    assert np.count_nonzero(view.in_aggregate(RACK_AGG)) == 1


def test_hosts_with_children_are_loaded_as_reports_into_room_made_once(
        scheduler):
    for i in range(100):
        node = factories.compute_node_obj("t%03d" % i)
        node.child_providers = [_child("t%03d-numa0" % i, node.uuid,
                                       {"VCPU": 4})]
        scheduler.stats.report_resource_stats(node)
    stored = host_load.load_host_columns(scheduler.stats.db)
    loaded = _loaded(stored)
    assert loaded.table.n == loaded.table.row_capacity == 100
    assert _snapshot(loaded) == _snapshot(_applied(stored))
