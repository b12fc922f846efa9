"""The claim transaction of gantt.db.allocations, on SQLite."""

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import models
from gantt.db import reports
from gantt.objects import compute_node
from gantt.tests import factories

RP = models.ResourceProvider.__table__
ALLOC = models.Allocation.__table__
CONSUMERS = models.Consumer.__table__
GROUPS = models.InstanceGroup.__table__
H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
VM3 = "33333333-3333-4333-8333-333333333333"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


def _host(db, name, **fields):
    reports.save_report(db, factories.compute_node_obj(name, **fields))


@pytest.fixture
def db(sqlite_db):
    _host(sqlite_db, "h1", vcpus=8, memory_mb=8192, disk_gb=100,
          extra_inventories=[compute_node.Inventory(
              resource_class="CUSTOM_GPU", total=8, reserved=2, min_unit=2,
              max_unit=4, step_size=2, allocation_ratio=1.0)])
    _host(sqlite_db, "h2", vcpus=4, cpu_ratio=2.0)
    return sqlite_db


def _claim(db, consumer, allocation_map, **kwargs):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, allocation_map, **kwargs)


def _release(db, consumer):
    with db.begin() as conn:
        return allocations.release(conn, consumer)


def _generation(db, uuid):
    with db.begin() as conn:
        return conn.execute(sa.select(RP.c.generation).where(
            RP.c.uuid == uuid)).scalar_one()


def _rows(db, table):
    with db.begin() as conn:
        return sorted(tuple(r) for r in conn.execute(sa.select(table)))


def _held(db, consumer):
    with db.begin() as conn:
        return allocations.consumer_allocations(conn, consumer)


# -- capacity -----------------------------------------------------------------


@pytest.mark.parametrize("already, rc, amount, reason", [
    ({}, "VCPU", 9, "0 used of capacity 8"),
    ({"VCPU": 6}, "VCPU", 3, "6 used of capacity 8"),
    ({}, "CUSTOM_GPU", 4, None),                       # fits: 4 <= 8 - 2
    ({"CUSTOM_GPU": 4}, "CUSTOM_GPU", 4, "4 used of capacity 6"),
    ({}, "CUSTOM_GPU", 1, "outside [2, 4]"),           # below min_unit
    ({}, "CUSTOM_GPU", 6, "outside [2, 4]"),           # above max_unit
    ({}, "CUSTOM_GPU", 3, "not a multiple of step size 2"),
    ({}, "VGPU", 1, "no inventory of that class"),
])
def test_capacity_rules(db, already, rc, amount, reason):
    if already:
        _claim(db, VM2, {H1: already})
    before = _rows(db, ALLOC)
    if reason is None:
        _claim(db, VM1, {H1: {rc: amount}})
        assert _held(db, VM1) == {H1: {rc: amount}}
        return
    with pytest.raises(exception.CapacityExceeded) as raised:
        _claim(db, VM1, {H1: {rc: amount}})
    assert reason in str(raised.value)
    assert rc in str(raised.value) and VM1 in str(raised.value)
    assert _rows(db, ALLOC) == before
    assert _held(db, VM1) == {}


def test_allocation_ratio_counts(db):
    # h2: 4 VCPU at ratio 2.0
    _claim(db, VM1, {H2: {"VCPU": 8}})
    with pytest.raises(exception.CapacityExceeded):
        _claim(db, VM2, {H2: {"VCPU": 1}})


def test_one_failing_class_refuses_the_whole_claim(db):
    with pytest.raises(exception.CapacityExceeded):
        _claim(db, VM1, {H1: {"VCPU": 1}, H2: {"VCPU": 9}})
    assert _rows(db, ALLOC) == []
    assert _rows(db, CONSUMERS) == []


def test_unknown_provider(db):
    unknown = factories.host_uuid("nowhere")
    with pytest.raises(exception.ProviderNotFound, match=unknown):
        _claim(db, VM1, {unknown: {"VCPU": 1}})
    assert _rows(db, ALLOC) == []


# -- generations --------------------------------------------------------------


def test_each_claim_bumps_the_generation_by_exactly_one(db):
    start, other = _generation(db, H1), _generation(db, H2)
    for i, consumer in enumerate((VM1, VM2, VM3), start=1):
        [state] = _claim(db, consumer, {H1: {"VCPU": 1}})
        assert _generation(db, H1) == start + i
        assert state.generation == start + i
        assert state.usages == {"VCPU": i}
    # a provider the claims did not touch keeps its generation
    assert _generation(db, H2) == other


def test_moving_a_consumer_bumps_both_providers(db):
    _claim(db, VM1, {H1: {"VCPU": 2}})
    g1, g2 = _generation(db, H1), _generation(db, H2)
    states = {s.uuid: s for s in _claim(db, VM1, {H2: {"VCPU": 2}})}
    assert (_generation(db, H1), _generation(db, H2)) == (g1 + 1, g2 + 1)
    assert states[H1].usages == {}
    assert states[H2].usages == {"VCPU": 2}
    assert _held(db, VM1) == {H2: {"VCPU": 2}}


def test_a_refused_claim_leaves_generations_alone(db):
    start = _generation(db, H1)
    with pytest.raises(exception.CapacityExceeded):
        _claim(db, VM1, {H1: {"VCPU": 100}})
    assert _generation(db, H1) == start


def test_a_stale_generation_raises_claim_conflict_and_rolls_back(db):
    """Two workers claim on h1; the second read the generation before the
    first committed. SQLite serialises writers, so the interleaving is
    replayed step by step: read, another claim commits, then the second
    transaction writes and compares-and-swaps with what it read."""
    with db.begin() as conn:
        read = allocations._snapshot(conn, uuids=[H1, H2])
    [rp_id] = [p.id for p in read.values() if p.uuid == H1]
    seen = read[rp_id].generation
    _claim(db, VM2, {H1: {"VCPU": 2}})           # the other worker wins

    with pytest.raises(exception.ClaimConflict) as raised, db.begin() as conn:
        # what claim() writes before its compare-and-swap
        conn.execute(ALLOC.insert().values(
            resource_provider_id=rp_id, consumer_uuid=VM1,
            resource_class="VCPU", used=8,
            created_at=sa.func.current_timestamp()))
        allocations._bump_generations(conn, read, VM1)

    assert H1 in str(raised.value) and VM1 in str(raised.value)
    assert f"generation {seen}" in str(raised.value)
    # the loser's allocation was rolled back; the winner's stays
    assert _held(db, VM1) == {}
    assert _held(db, VM2) == {H1: {"VCPU": 2}}
    assert _generation(db, H1) == seen + 1


def test_bump_generation_with_the_current_generation_succeeds(db):
    seen = _generation(db, H1)
    with db.begin() as conn:
        allocations._bump_generations(
            conn, allocations._snapshot(conn, uuids=[H1, H2]), VM1)
    assert _generation(db, H1) == seen + 1


# -- consumers ----------------------------------------------------------------


def _consumer_generation(db, consumer):
    with db.begin() as conn:
        return conn.execute(sa.select(CONSUMERS.c.generation).where(
            CONSUMERS.c.uuid == consumer)).scalar_one_or_none()


def test_reclaiming_a_consumer_replaces_and_bumps_its_generation(db):
    _claim(db, VM1, {H1: {"VCPU": 2}}, project_id="p", user_id="u")
    assert _consumer_generation(db, VM1) == 0
    _claim(db, VM1, {H1: {"VCPU": 3, "MEMORY_MB": 512}})
    assert _consumer_generation(db, VM1) == 1
    assert _held(db, VM1) == {H1: {"VCPU": 3, "MEMORY_MB": 512}}
    # its own old allocation does not count against the new one
    _claim(db, VM1, {H1: {"VCPU": 8}})
    assert _held(db, VM1) == {H1: {"VCPU": 8}}


@pytest.mark.parametrize("stale", [None, 0])
def test_consumer_compare_and_swap(db, stale):
    """A retried call racing the original: the one that read an older
    consumer generation (or none) must not commit."""
    _claim(db, VM1, {H1: {"VCPU": 1}})
    _claim(db, VM1, {H2: {"VCPU": 1}})          # generation 0 -> 1
    with (pytest.raises(exception.ConsumerConflict) as raised,
          db.begin() as conn):
        allocations._write_consumer(conn, VM1, stale, None, None, None,
                                    sa.func.current_timestamp())
    assert str(raised.value) == (
        "Consumer %s: its claim changed while this call was placing it "
        "(generation %s was read); nothing was changed"
        % (VM1, "none" if stale is None else stale))
    assert _consumer_generation(db, VM1) == 1


def test_a_reclaim_records_the_new_owner(db):
    _claim(db, VM1, {H1: {"VCPU": 1}}, project_id="p1", user_id="u1")
    _claim(db, VM1, {H1: {"VCPU": 1}}, project_id="p2", user_id="u2")
    with db.begin() as conn:
        info = allocations.consumer_info(conn, VM1)
        updated = conn.execute(sa.select(CONSUMERS.c.updated_at).where(
            CONSUMERS.c.uuid == VM1)).scalar_one()
    assert (info.project_id, info.user_id) == ("p2", "u2")
    assert updated is not None


def test_a_release_reports_what_the_others_still_use(db):
    _claim(db, VM1, {H1: {"VCPU": 2}})
    _claim(db, VM2, {H1: {"VCPU": 3, "MEMORY_MB": 512}})
    _claim(db, VM3, {H2: {"VCPU": 1}})
    [state] = _release(db, VM1)
    assert (state.uuid, state.usages) == (H1, {"VCPU": 3, "MEMORY_MB": 512})


def test_each_group_gets_its_own_row(db):
    other = "9d4e2c1b-7a6f-4e3d-8c2b-1a0f9e8d7c6b"
    for uuid in (GROUP, other):
        allocations.ensure_group(db, allocations.GroupClaim(uuid, "affinity"))
    with db.begin() as conn:
        rows = conn.execute(sa.select(GROUPS.c.uuid, GROUPS.c.generation))
        assert sorted(rows.all()) == sorted([(GROUP, 0), (other, 0)])


def test_release_is_idempotent_and_frees_room(db):
    _claim(db, VM1, {H1: {"VCPU": 8}})
    before = _generation(db, H1)
    [state] = _release(db, VM1)
    assert (state.uuid, state.generation, state.usages) == (
        H1, before + 1, {})
    assert _release(db, VM1) == []
    assert _generation(db, H1) == before + 1
    assert _rows(db, CONSUMERS) == []
    _claim(db, VM2, {H1: {"VCPU": 8}})


# -- server groups ------------------------------------------------------------


def _group_claim(db, consumer, host_uuid, policy, max_per_host=1):
    group = allocations.GroupClaim(GROUP, policy, max_per_host)
    allocations.ensure_group(db, group)
    return _claim(db, consumer, {host_uuid: {"VCPU": 1}}, group=group)


@pytest.mark.parametrize("policy, max_per_host, placements, refused", [
    ("anti-affinity", 1, [H1, H2], H1),
    ("anti-affinity", 2, [H1, H1], H1),
    ("affinity", 1, [H1, H1], H2),
])
def test_group_policy_is_enforced_in_the_claim(db, policy, max_per_host,
                                               placements, refused):
    for consumer, host in zip((VM1, VM2), placements, strict=True):
        _group_claim(db, consumer, host, policy, max_per_host)
    with pytest.raises(exception.GroupPolicyViolation, match=policy):
        _group_claim(db, VM3, refused, policy, max_per_host)
    assert _held(db, VM3) == {}
    with db.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == {
            h: n for h, n in (("h1", placements.count(H1)),
                              ("h2", placements.count(H2))) if n}
        assert allocations.consumer_info(conn, VM1).group == (
            allocations.GroupClaim(GROUP, policy, max_per_host))


def test_a_member_may_be_reclaimed_where_it_is(db):
    _group_claim(db, VM1, H1, "anti-affinity")
    # its own allocation does not count as another member
    _group_claim(db, VM1, H1, "anti-affinity")
    assert _held(db, VM1) == {H1: {"VCPU": 1}}


def test_a_member_holding_several_classes_counts_once(db):
    """Anti-affinity, two members a host: VM1 holds VCPU and memory on h1
    (two allocation rows), so VM2 is the second member there, not the
    third."""
    group = allocations.GroupClaim(GROUP, "anti-affinity", 2)
    allocations.ensure_group(db, group)
    _claim(db, VM1, {H1: {"VCPU": 1, "MEMORY_MB": 512}}, group=group)
    _claim(db, VM2, {H1: {"VCPU": 1}}, group=group)
    with db.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == {"h1": 2}


def test_a_violation_names_every_provider_the_consumer_asked_for(db):
    _group_claim(db, VM1, H1, "anti-affinity")
    group = allocations.GroupClaim(GROUP, "anti-affinity", 1)
    with pytest.raises(exception.GroupPolicyViolation) as raised:
        _claim(db, VM2, {H2: {"VCPU": 1}, H1: {"VCPU": 1}}, group=group)
    assert str(raised.value) == (
        "Placing consumer %s on %s would break the anti-affinity policy of "
        "server group %s" % (VM2, ",".join(sorted([H1, H2])), GROUP))


def test_a_claim_for_a_group_never_stored_is_refused(db):
    """The claim compares-and-swaps the group's row, which
    ``ensure_group`` creates: without it there is nothing to compare."""
    group = allocations.GroupClaim(GROUP, "affinity")
    with pytest.raises(exception.ClaimConflict) as raised:
        _claim(db, VM1, {H1: {"VCPU": 1}}, group=group)
    assert str(raised.value) == (
        "Resource provider group %s changed (generation None) while "
        "claiming for consumer -" % GROUP)
    assert _held(db, VM1) == {}


def test_group_claims_bump_the_group_generation(db):
    _group_claim(db, VM1, H1, "anti-affinity")
    _group_claim(db, VM2, H2, "anti-affinity")
    with db.begin() as conn:
        assert conn.execute(sa.select(GROUPS.c.generation).where(
            GROUPS.c.uuid == GROUP)).scalar_one() == 2


def test_hosts_of_consumers(db):
    _claim(db, VM1, {H1: {"VCPU": 1}})
    _claim(db, VM2, {H2: {"VCPU": 1}})
    with db.begin() as conn:
        assert allocations.hosts_of_consumers(conn, [VM1, VM3]) == {"h1"}
        assert allocations.hosts_of_consumers(conn, [VM1, VM2]) == {
            "h1", "h2"}
        assert allocations.hosts_of_consumers(conn, []) == set()


def test_a_lost_race_on_the_group_names_the_group_and_the_generation(db):
    """Another member's claim moved the group's generation: the loser's
    error (logged, and in an alternate's failure reason) says which group,
    what it had read and for which consumer."""
    _group_claim(db, VM1, H1, "anti-affinity")          # generation 0 -> 1
    with (pytest.raises(exception.ClaimConflict) as raised,
          db.begin() as conn):
        allocations._bump_group(conn, GROUP, 0, VM2)
    assert str(raised.value) == (
        "Resource provider group %s changed (generation 0) while claiming "
        "for consumer %s" % (GROUP, VM2))
