"""Host reports in SQL: sequence guard, inventory replacement, generations."""

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import host_load
from gantt.db import models
from gantt.db import reports
from gantt.objects import compute_node
from gantt.tests import factories
from gantt.tests import stored_hosts

RP = models.ResourceProvider.__table__
REPORTS = models.HostReport.__table__
H1 = factories.host_uuid("h1")
VM1 = "11111111-1111-4111-8111-111111111111"


def _save(db, **fields):
    return reports.save_report(db, factories.compute_node_obj("h1",
                                                                **fields))


def _generation(db):
    with db.begin() as conn:
        return conn.execute(sa.select(RP.c.generation).where(
            RP.c.uuid == H1)).scalar_one()


def _stored(db):
    [host] = [h for h in stored_hosts.load_hosts(db) if h.uuid == H1]
    return host


def test_a_new_host_is_inserted_at_generation_zero(sqlite_db):
    result = _save(sqlite_db, sequence=1, traits=["CUSTOM_A"],
                   aggregates=["agg1"], zone="az1")
    assert (result.applied, result.generation, result.refused) == (
        True, 0, {})
    host = _stored(sqlite_db)
    assert host.inventories["VCPU"] == (16, 0, 1, 2147483647, 1, 1.0)
    assert (host.traits, host.aggregates) == ({"CUSTOM_A"}, {"agg1"})
    assert host.report["availability_zone"] == "az1"
    assert host.report["report_sequence"] == 1


@pytest.mark.parametrize("sequence", [5, 10])
def test_a_report_not_newer_than_the_stored_one_is_ignored(sqlite_db,
                                                           sequence):
    _save(sqlite_db, sequence=10, vcpus=8)
    result = _save(sqlite_db, sequence=sequence, vcpus=32,
                   traits=["CUSTOM_B"])
    assert result.applied is False
    host = _stored(sqlite_db)
    assert host.inventories["VCPU"][0] == 8
    assert host.traits == set()
    assert host.report["report_sequence"] == 10


@pytest.mark.parametrize("change, bumped", [
    ({}, False),                                   # the periodic re-send
    ({"num_instances": 3, "capabilities": {"k": "v"}}, False),
    ({"vcpus": 32}, True),
    ({"cpu_ratio": 2.0}, True),
    ({"reserved_memory_mb": 512}, True),
    ({"extra_inventories": [compute_node.Inventory(
        resource_class="CUSTOM_X", total=1)]}, True),
    ({"traits": ["CUSTOM_A", "CUSTOM_B"]}, True),
    ({"aggregates": []}, True),
])
def test_generation_moves_only_when_the_provider_changes(sqlite_db, change,
                                                         bumped):
    """Claims compare-and-swap on the generation: it must move when
    inventory, traits or aggregates change (a claim that read the old
    inventory must fail), and only then (else every periodic report would
    make concurrent claims conflict)."""
    base = {"traits": ["CUSTOM_A"], "aggregates": ["agg1"]}
    _save(sqlite_db, sequence=1, **base)
    before = _generation(sqlite_db)
    result = _save(sqlite_db, sequence=2, **dict(base, **change))
    assert result.applied is True
    assert _generation(sqlite_db) == before + (1 if bumped else 0)
    assert result.generation == _generation(sqlite_db)


def test_inventory_below_usage_is_refused_for_that_class_only(sqlite_db):
    _save(sqlite_db, sequence=1, vcpus=8, memory_mb=8192)
    with sqlite_db.begin() as conn:
        allocations.claim(conn, VM1, {H1: {"VCPU": 6, "MEMORY_MB": 1024}})
    result = _save(sqlite_db, sequence=2, vcpus=4, memory_mb=2048,
                   disk_gb=50)
    assert result.applied is True
    assert set(result.refused) == {H1}
    assert set(result.refused[H1]) == {"VCPU"}
    assert "6 in use exceeds the new capacity 4" in result.refused[H1]["VCPU"]
    # the cache must learn what the database kept
    assert result.stored_inventories[H1]["VCPU"][0] == 8
    assert result.stored_inventories[H1]["MEMORY_MB"][0] == 2048
    host = _stored(sqlite_db)
    assert {rc: inv[0] for rc, inv in host.inventories.items()} == {
        "VCPU": 8, "MEMORY_MB": 2048, "DISK_GB": 50}
    # the report itself (sequence, details) is stored
    assert host.report["report_sequence"] == 2


def test_removing_a_class_in_use_is_refused(sqlite_db):
    _save(sqlite_db, sequence=1, extra_inventories=[compute_node.Inventory(
        resource_class="CUSTOM_GPU", total=2)])
    with sqlite_db.begin() as conn:
        allocations.claim(conn, VM1, {H1: {"CUSTOM_GPU": 1}})
    result = _save(sqlite_db, sequence=2)
    assert result.refused == {H1: {
        "CUSTOM_GPU": "1 in use; a class cannot be removed while allocated"}}
    assert "CUSTOM_GPU" in _stored(sqlite_db).inventories


def test_load_hosts_and_usages(sqlite_db):
    _save(sqlite_db, sequence=1)
    with sqlite_db.begin() as conn:
        allocations.claim(conn, VM1, {H1: {"VCPU": 2, "DISK_GB": 10}})
    host = _stored(sqlite_db)
    assert host.usage == {"VCPU": 2, "DISK_GB": 10}
    assert host_load.usages_by_uuid(sqlite_db) == {
        H1: (host.generation, {"VCPU": 2, "DISK_GB": 10})}
    assert host_load.usages_by_uuid(sqlite_db, [H1]) == {
        H1: (host.generation, {"VCPU": 2, "DISK_GB": 10})}
    assert host_load.usages_by_uuid(
        sqlite_db, [factories.host_uuid("other")]) == {}


@pytest.mark.parametrize("fields,what", [
    ({"stats": {"blob": "x" * reports.TEXT_MAX}},
     "capabilities, stats, metrics, NUMA cells and PCI pools take"),
    ({"instance_uuids": factories.uuids(2000)}, "instance_uuids take"),
])
def test_detail_longer_than_a_text_column_is_refused_and_not_stored(
        sqlite_db, fields, what):
    # MariaDB would refuse the statement (an internal error); PostgreSQL
    # and SQLite would take it: the rule is the same on all three
    with pytest.raises(exception.InvalidRequest) as info:
        _save(sqlite_db, sequence=1, **fields)
    assert what in str(info.value)
    assert stored_hosts.load_hosts(sqlite_db) == []
