"""Standalone providers (a shared storage pool): save, guard, delete, load."""

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import host_load
from gantt.db import models
from gantt.db import reports
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories
from gantt.tests import stored_hosts

RP = models.ResourceProvider.__table__
PROVIDER_REPORTS = models.ProviderReport.__table__
POOL = factories.host_uuid("provider/pool")
H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
NUMA = factories.host_uuid("provider/numa")
AGG = "5a1e0c52-4a39-4c0a-9d5e-0d3b1e8b7a11"
SHARES = "MISC_SHARES_VIA_AGGREGATE"
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


def report(sequence, disk=1000, reserved=0, traits=(SHARES,),
           aggregates=(AGG,), force=False, uuid=POOL, name="pool",
           parent=None):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=uuid, name=name, parent_provider_uuid=parent,
            inventories=[compute_node.Inventory(
                resource_class="DISK_GB", total=disk, reserved=reserved)],
            traits=list(traits), aggregates=list(aggregates)),
        report_sequence=sequence, force=force)


def save(db, *args, **kwargs):
    return reports.save_provider(db, report(*args, **kwargs))


def stored(db):
    return {p.uuid: p for p in host_load.load_standalone_providers(db)}


def claim(db, consumer, allocation_map, **kwargs):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, allocation_map, **kwargs)


def test_a_pool_round_trips(any_db):
    result = save(any_db, 7)
    assert (result.applied, result.generations, result.generation,
            result.refused, result.stored_inventories) == (
        True, {POOL: 0}, 0, {}, None)
    claim(any_db, VM1, {POOL: {"DISK_GB": 40}})
    [pool] = host_load.load_standalone_providers(any_db)
    assert (pool.uuid, pool.name, pool.parent_uuid, pool.report_sequence) == (
        POOL, "pool", None, 7)
    assert pool.inventories == {"DISK_GB": (1000, 0, 1, 2147483647, 1, 1.0)}
    assert (pool.traits, pool.aggregates) == ({SHARES}, {AGG})
    assert (pool.generation, pool.usage) == (1, {"DISK_GB": 40})
    # it is its own root, and no host
    with any_db.begin() as conn:
        row = conn.execute(sa.select(RP.c.id, RP.c.root_provider_id,
                                     RP.c.parent_provider_id)).one()
    assert (row.root_provider_id, row.parent_provider_id) == (row.id, None)
    assert stored_hosts.load_hosts(any_db) == []


def test_hosts_and_pools_are_loaded_apart(sqlite_db):
    reports.save_report(sqlite_db, factories.compute_node_obj("h1"))
    save(sqlite_db, 1)
    assert [h.uuid for h in stored_hosts.load_hosts(sqlite_db)] == [H1]
    assert list(stored(sqlite_db)) == [POOL]


@pytest.mark.parametrize("sequence, applied", [(5, False), (10, False),
                                               (11, True)])
def test_the_sequence_guard(any_db, sequence, applied):
    save(any_db, 10, disk=1000)
    result = save(any_db, sequence, disk=2000, traits=())
    assert result.applied is applied
    pool = stored(any_db)[POOL]
    assert pool.inventories["DISK_GB"][0] == (2000 if applied else 1000)
    assert pool.traits == (set() if applied else {SHARES})
    assert pool.report_sequence == (sequence if applied else 10)
    assert result.generations == {POOL: 1 if applied else 0}
    if applied:
        assert result.stored_inventories is None
    else:
        # what the database holds, so the caller's cache can take it
        assert result.stored_inventories == {POOL: {
            "DISK_GB": (1000, 0, 1, 2147483647, 1, 1.0)}}


@pytest.mark.parametrize("change, bumped", [
    ({}, False),
    ({"disk": 1001}, True),
    ({"reserved": 10}, True),
    ({"traits": ()}, True),
    ({"aggregates": ()}, True),
    ({"name": "renamed"}, False),
])
def test_generation_moves_only_on_change(sqlite_db, change, bumped):
    save(sqlite_db, 1)
    result = save(sqlite_db, 2, **change)
    assert result.generation == (1 if bumped else 0)
    assert stored(sqlite_db)[POOL].generation == result.generation
    assert stored(sqlite_db)[POOL].name == change.get("name", "pool")


@pytest.mark.parametrize("force, total_after, refused", [
    (False, 1000, {POOL: {"DISK_GB": "600 in use exceeds the new "
                                     "capacity 500"}}),
    (True, 500, {}),
])
def test_a_cut_below_usage(any_db, force, total_after, refused):
    save(any_db, 1)
    claim(any_db, VM1, {POOL: {"DISK_GB": 600}})
    result = save(any_db, 2, disk=500, force=force)
    assert result.applied is True
    assert result.refused == refused
    assert stored(any_db)[POOL].inventories["DISK_GB"][0] == total_after
    assert result.stored_inventories == ({POOL: {"DISK_GB": (
        1000, 0, 1, 2147483647, 1, 1.0)}} if refused else None)


@pytest.mark.parametrize("uuid, parent, what", [
    (H1, None, "compute node"),
    (NUMA, None, "child"),
    (POOL, H1, "cannot have a parent"),
])
def test_what_is_not_standalone_is_rejected(any_db, uuid, parent, what):
    numa = provider_obj.ResourceProvider(uuid=NUMA, name="numa",
                                         parent_provider_uuid=H1)
    reports.save_report(any_db, factories.compute_node_obj(
        "h1", child_providers=[numa]))
    with any_db.begin() as conn:
        before = sorted(tuple(r) for r in conn.execute(sa.select(RP)))
    with pytest.raises(exception.InvalidRequest, match=what) as raised:
        save(any_db, 1, uuid=uuid, parent=parent)
    assert uuid in str(raised.value)
    with any_db.begin() as conn:
        assert sorted(tuple(r) for r in conn.execute(sa.select(RP))) == (
            before)
    assert stored(any_db) == {}


# -- delete -------------------------------------------------------------------


def test_delete_refused_while_in_use_then_done_then_idempotent(any_db):
    save(any_db, 1)
    claim(any_db, VM1, {POOL: {"DISK_GB": 10}})
    claim(any_db, VM2, {POOL: {"DISK_GB": 10}})
    with pytest.raises(exception.ProviderInUse) as raised:
        reports.delete_provider(any_db, POOL)
    assert POOL in str(raised.value)
    assert raised.value.kwargs == {"uuid": POOL, "consumers": 2}
    assert POOL in stored(any_db)
    for consumer in (VM1, VM2):
        with any_db.begin() as conn:
            allocations.release(conn, consumer)
    assert reports.delete_provider(any_db, POOL) is True
    assert stored(any_db) == {}
    with any_db.begin() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            PROVIDER_REPORTS)).scalar_one() == 0
        assert conn.execute(sa.select(sa.func.count()).select_from(
            models.Inventory.__table__)).scalar_one() == 0
    assert reports.delete_provider(any_db, POOL) is False
    # and it may come back, as new
    assert save(any_db, 1).generations == {POOL: 0}


def test_delete_does_not_take_compute_nodes(sqlite_db):
    reports.save_report(sqlite_db, factories.compute_node_obj("h1"))
    with pytest.raises(exception.InvalidRequest, match=H1):
        reports.delete_provider(sqlite_db, H1)
    assert [h.uuid for h in stored_hosts.load_hosts(sqlite_db)] == [H1]


# -- a shared pool and the hosts of consumers ---------------------------------


def test_a_shared_pool_is_no_host_of_a_group(any_db):
    """Anti-affinity members on different hosts may all take disk from
    the one pool their hosts share: the pool is not a host."""
    for name in ("h1", "h2"):
        reports.save_report(any_db, factories.compute_node_obj(
            name, aggregates=[AGG]))
    save(any_db, 1)
    group = allocations.GroupClaim(GROUP, "anti-affinity")
    allocations.ensure_group(any_db, group)
    claim(any_db, VM1, {H1: {"VCPU": 1}, POOL: {"DISK_GB": 10}},
          group=group)
    claim(any_db, VM2, {H2: {"VCPU": 1}, POOL: {"DISK_GB": 10}},
          group=group)
    with any_db.begin() as conn:
        assert allocations.hosts_of_consumers(conn, [VM1]) == {"h1"}
        assert allocations.group_hosts(conn, GROUP) == {"h1": 1, "h2": 1}
    # the policy still holds on the hosts themselves
    with pytest.raises(exception.GroupPolicyViolation):
        claim(any_db, "33333333-3333-4333-8333-333333333333",
              {H1: {"VCPU": 1}, POOL: {"DISK_GB": 10}}, group=group)


def test_a_shared_pool_does_not_split_an_affinity_group(sqlite_db):
    reports.save_report(sqlite_db, factories.compute_node_obj(
        "h1", aggregates=[AGG]))
    reports.save_report(sqlite_db, factories.compute_node_obj(
        "h2", aggregates=[AGG]))
    save(sqlite_db, 1)
    group = allocations.GroupClaim(GROUP, "affinity")
    allocations.ensure_group(sqlite_db, group)
    for consumer in (VM1, VM2):
        claim(sqlite_db, consumer, {H1: {"VCPU": 1}, POOL: {"DISK_GB": 10}},
              group=group)
    with pytest.raises(exception.GroupPolicyViolation):
        claim(sqlite_db, "33333333-3333-4333-8333-333333333333",
              {H2: {"VCPU": 1}, POOL: {"DISK_GB": 10}}, group=group)
