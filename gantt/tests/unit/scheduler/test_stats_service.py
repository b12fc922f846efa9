"""StatsService end to end on SQLite: reports, their rules, peers' usage,
a restarted worker's cache."""


import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.objects import usage
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h


@pytest.mark.parametrize("problem, named", [
    ("reserved > total", "VCPU: reserved 33 exceeds total 32"),
    ("unknown class", "'FOO_BAR'"),
    ("duplicate class", "VCPU reported twice"),
    ("bad trait", "'NOT_A_TRAIT'"),
    ("min_unit 0", "min_unit"),
    ("max_unit < min_unit", "max_unit"),
    ("step_size 0", "step_size"),
    ("allocation_ratio 0", "allocation_ratio must be positive"),
    ("no report_sequence", "report_sequence is required"),
])
def test_invalid_report_is_refused_and_changes_nothing(scheduler, problem,
                                                       named):
    h.report(scheduler, "h1", vcpus=16, sequence=1)
    before_db = h.db_snapshot(scheduler.stats.db)
    before_cache = [s.obj_to_dict(
        ) for s in scheduler.operator.get_host_states()]

    with pytest.raises(exception.InvalidRequest) as raised:
        scheduler.stats.update_resource_stats(h.bad_node(problem))

    assert named in str(raised.value)
    assert h.db_snapshot(scheduler.stats.db) == before_db
    assert [s.obj_to_dict() for s in scheduler.operator.get_host_states()] == (
        before_cache)
    assert scheduler.operator.get_statistics().reports_applied == 1


def test_invalid_report_of_a_new_host_stores_nothing(scheduler):
    # the worker's start wrote its topology levels, and nothing else
    before = h.db_snapshot(scheduler.stats.db)
    assert [table for table, rows in before.items() if rows] == [
        "topology_levels"]
    with pytest.raises(exception.InvalidRequest):
        scheduler.stats.update_resource_stats(h.bad_node("reserved > total"))
    assert h.db_snapshot(scheduler.stats.db) == before
    assert len(scheduler.stats.cache) == 0


@pytest.mark.parametrize("second, applied", [(5, False), (10, False),
                                             (11, True)])
def test_report_sequence_orders_reports(scheduler, second, applied):
    assert h.report(scheduler, "h1", vcpus=8, sequence=10) is True
    assert h.report(scheduler, "h1", vcpus=32, sequence=second) is applied
    expected = 32 if applied else 8
    assert h.inventory(scheduler.stats.db, "h1")["VCPU"] == expected
    assert h.cache_total(scheduler, "h1")["VCPU"] == expected


def test_reducing_inventory_below_usage_is_refused_for_that_class(scheduler):
    h.report(scheduler, "h1", vcpus=8, memory_mb=8192, disk_gb=100, sequence=1)
    scheduler.placer.select_destinations(h.make_spec(factories.flavor(
        vcpus=4, memory_mb=4096, root_gb=50)), factories.uuids(1))
    node = factories.compute_node_obj(
        "h1", vcpus=2, memory_mb=16384, sequence=2,
        extra_inventories=[h.inv("CUSTOM_NEW", 3)])
    node.inventories = [i for i in node.inventories
                        if i.resource_class != "DISK_GB"]
    scheduler.stats.update_resource_stats(node)
    # VCPU (4 used > 2) and DISK_GB (50 used, removed) keep their old
    # inventory; the other classes take the new one
    assert h.inventory(scheduler.stats.db, "h1") == {
        "VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100, "CUSTOM_NEW": 3}
    assert h.used(scheduler.stats.db) == {"h1": {"VCPU": 4, "MEMORY_MB": 4096,
                                        "DISK_GB": 50}}


def test_peer_usage_reaches_the_cache(scheduler):
    h.report(scheduler, "h1")
    [state] = scheduler.operator.get_host_states(["h1"])
    scheduler.stats.apply_peer_usage([usage.ProviderUsage(
        resource_provider_uuid=factories.host_uuid("h1"),
        generation=state.generation + 1, usages={"VCPU": 5})])
    assert h.cache_used(scheduler, "h1") == {"VCPU": 5}


def test_a_restarted_worker_sees_the_same_hosts(conf, scheduler):
    h.report(scheduler, "h1", zone="az1", traits=["CUSTOM_A"],
            aggregates=[h.AGG], cell_uuid=h.CELL_A, disabled=True)
    h.sized(scheduler, "h2", 2)
    h.select(scheduler, 3)
    fresh = scheduler_mod.build(conf, scheduler.stats.db)
    fresh.stats.load_cache()
    assert fresh.ready.is_set()

    def comparable(states):
        return [dict(s.obj_to_dict(), updated_at=None) for s in states]

    assert comparable(fresh.operator.get_host_states()) == comparable(
        scheduler.operator.get_host_states())


def test_cache_holds_the_database_inventory_when_a_cut_is_refused(scheduler):
    scheduler.stats.update_resource_stats(
        factories.compute_node_obj("cut", vcpus=8))
    spec = factories.request(factories.flavor(vcpus=6, memory_mb=1, root_gb=1))
    scheduler.placer.select_destinations(spec, factories.uuids(1))
    # the agent reports 2 VCPUs while 6 are allocated: refused, kept at 8
    scheduler.stats.update_resource_stats(
        factories.compute_node_obj("cut", vcpus=2))
    [state] = scheduler.operator.get_host_states()
    vcpu = {r.resource_class: r for r in state.resources}["VCPU"]
    assert (vcpu.total, vcpu.used, vcpu.free) == (8, 6, 2)


@pytest.mark.parametrize("field, value", [
    ("aggregates", ["not-a-uuid"]),
    ("availability_zone", "z" * 256),
    ("nodename", "n" * 201),
    ("host", ""),
])
def test_reports_the_database_cannot_store_are_rejected(scheduler, field,
                                                        value):
    node = factories.compute_node_obj("long")
    setattr(node, field, value)
    with pytest.raises(exception.InvalidRequest, match=field[:-1]):
        scheduler.stats.update_resource_stats(node)
    assert scheduler.operator.get_host_states() == []


def test_a_restarted_worker_keeps_numa_cells_and_pci_pools(conf, sqlite_db):
    from gantt.objects import numa
    from gantt.objects import pci
    first = scheduler_mod.build(conf, sqlite_db)
    first.stats.load_cache()
    node = factories.compute_node_obj("numa-host")
    node.numa_cells = [numa.NUMACell(id=0, cpuset=[0, 1], memory_mb=1024)]
    node.pci_pools = [pci.PciDevicePool(vendor_id="8086", product_id="1520",
                                        numa_node=0, count=4)]
    first.stats.update_resource_stats(node)
    second = scheduler_mod.build(conf, sqlite_db)
    second.stats.load_cache()
    table = second.stats.cache.table
    row = table.row_by_uuid[node.uuid]
    assert [c.id for c in table.numa_cells[row]] == [0]
    assert [p.count for p in table.pci_pools[row]] == [4]
