"""Claims of new consumers: one at a time (``new=True``) and many in one
transaction (``claim_new``), on SQLite, MariaDB and PostgreSQL."""

import threading

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import models
from gantt.db import reports
from gantt.scheduler import claims
from gantt.tests import factories

RP = models.ResourceProvider.__table__
CONSUMERS = models.Consumer.__table__
GROUPS = models.InstanceGroup.__table__
H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
VM1, VM2, VM3 = factories.uuids(3)
GROUP = "5f0c8a52-3b1e-4d7a-9c66-0e2f4b8d1a37"


def _two_hosts(db):
    for name in ("h1", "h2"):
        reports.save_report(db, factories.compute_node_obj(
            name, vcpus=8, memory_mb=8192, disk_gb=100))
    return db


@pytest.fixture
def db(any_db):
    return _two_hosts(any_db)


def _claim_new(db, placements, group=None):
    if group is not None:
        allocations.ensure_group(db, group)
    with db.begin() as conn:
        return allocations.claim_new(conn, [
            allocations.NewClaim(consumer, allocation)
            for consumer, allocation in placements], group=group)


def _held(db, consumer):
    with db.begin() as conn:
        return allocations.consumer_allocations(conn, consumer)


def _generations(db):
    with db.begin() as conn:
        return {r.uuid: r.generation for r in conn.execute(
            sa.select(RP.c.uuid, RP.c.generation))}


def _consumers(db):
    with db.begin() as conn:
        return sorted(r.uuid for r in conn.execute(sa.select(CONSUMERS)))


def test_many_consumers_are_claimed_in_one_transaction(db):
    before = _generations(db)
    states = _claim_new(db, [
        (VM1, {H1: {"VCPU": 3, "MEMORY_MB": 1024}}),
        (VM2, {H1: {"VCPU": 3}}),
        (VM3, {H2: {"VCPU": 8, "DISK_GB": 100}}),
    ])
    assert _held(db, VM1) == {H1: {"VCPU": 3, "MEMORY_MB": 1024}}
    assert _held(db, VM2) == {H1: {"VCPU": 3}}
    assert _held(db, VM3) == {H2: {"VCPU": 8, "DISK_GB": 100}}
    assert _consumers(db) == sorted([VM1, VM2, VM3])
    with db.begin() as conn:     # stored at generation 0, as one by one
        assert {r.generation for r in conn.execute(
            sa.select(CONSUMERS.c.generation))} == {0}
    # one compare-and-swap per provider, however many consumers it took
    assert _generations(db) == {u: g + 1 for u, g in before.items()}
    assert {s.uuid: (s.generation, s.usages) for s in states} == {
        H1: (before[H1] + 1, {"VCPU": 6, "MEMORY_MB": 1024}),
        H2: (before[H2] + 1, {"VCPU": 8, "DISK_GB": 100}),
    }


def test_the_consumers_of_a_batch_count_against_each_other(db):
    """5 + 4 VCPU on a host of 8: each fits alone, not both."""
    before = _generations(db)
    with pytest.raises(exception.CapacityExceeded) as raised:
        _claim_new(db, [(VM1, {H1: {"VCPU": 5}}), (VM2, {H1: {"VCPU": 4}}),
                        (VM3, {H2: {"VCPU": 1}})])
    assert VM2 in str(raised.value) and "5 used" in str(raised.value)
    # all or nothing
    assert [_held(db, vm) for vm in (VM1, VM2, VM3)] == [{}, {}, {}]
    assert _consumers(db) == []
    assert _generations(db) == before


def test_a_batch_sees_what_others_claimed(db):
    _claim_new(db, [(VM1, {H1: {"VCPU": 6}})])
    # 6 committed + VM2's 1 leaves 1 for VM3
    with pytest.raises(exception.CapacityExceeded, match="7 used") as raised:
        _claim_new(db, [(VM2, {H1: {"VCPU": 1}}), (VM3, {H1: {"VCPU": 2}})])
    assert VM3 in str(raised.value)
    assert _held(db, VM2) == {}


def test_an_unknown_provider_fails_the_batch(db):
    with pytest.raises(exception.ProviderNotFound):
        _claim_new(db, [(VM1, {H1: {"VCPU": 1}}),
                        (VM2, {factories.host_uuid("gone"): {"VCPU": 1}})])
    assert _consumers(db) == []


def test_a_stored_consumer_is_no_new_consumer(db):
    _claim_new(db, [(VM1, {H1: {"VCPU": 2}})])
    before = _generations(db)
    with pytest.raises(allocations.ConsumerExists) as raised:
        _claim_new(db, [(VM2, {H2: {"VCPU": 1}}), (VM1, {H2: {"VCPU": 1}})])
    # the batch's consumers, since the insert does not say which one
    assert str(raised.value) == (
        "Resource provider consumer changed (generation None) while "
        "claiming for consumer %s,%s" % (VM2, VM1))
    assert _held(db, VM1) == {H1: {"VCPU": 2}}
    assert _held(db, VM2) == {}
    assert _generations(db) == before


def test_the_claimer_says_when_a_consumer_believed_new_is_stored(db):
    """A retried request whose first claim did land: ``new=True`` must not
    add a second set of allocations, nor retry as if it lost a race."""
    claimer = claims.Claimer(db)
    claimer.claim(VM1, {H1: {"VCPU": 2}}, new=True)
    with pytest.raises(allocations.ConsumerExists):
        claimer.claim(VM1, {H2: {"VCPU": 3}}, new=True)
    assert claimer.conflicts == 0
    assert _held(db, VM1) == {H1: {"VCPU": 2}}
    claimer.claim(VM1, {H2: {"VCPU": 3}})
    assert _held(db, VM1) == {H2: {"VCPU": 3}}


@pytest.mark.parametrize("policy, max_per_host, placements, refused", [
    ("anti-affinity", 1, [H1, H1], VM2),
    ("anti-affinity", 2, [H1, H1, H1], VM3),
    ("affinity", 1, [H1, H2], VM2),
], ids=["anti-affinity-1", "anti-affinity-2", "affinity"])
def test_a_batch_keeps_its_group_policy(db, policy, max_per_host,
                                        placements, refused):
    group = allocations.GroupClaim(GROUP, policy, max_per_host)
    batch = [(vm, {host: {"VCPU": 1}})
             for vm, host in zip((VM1, VM2, VM3)[:len(placements)],
                                 placements, strict=True)]
    with pytest.raises(exception.GroupPolicyViolation) as raised:
        _claim_new(db, batch, group=group)
    assert refused in str(raised.value)
    assert _consumers(db) == []


@pytest.mark.parametrize("policy, max_per_host, placements", [
    ("anti-affinity", 1, [H1, H2]),
    ("anti-affinity", 2, [H1, H1, H2]),
    ("affinity", 1, [H2, H2, H2]),
])
def test_a_batch_within_its_group_policy_is_claimed(db, policy, max_per_host,
                                                    placements):
    group = allocations.GroupClaim(GROUP, policy, max_per_host)
    batch = [(vm, {host: {"VCPU": 1}})
             for vm, host in zip((VM1, VM2, VM3)[:len(placements)],
                                 placements, strict=True)]
    _claim_new(db, batch, group=group)
    with db.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == {
            name: placements.count(uuid)
            for name, uuid in (("h1", H1), ("h2", H2))
            if uuid in placements}
        assert conn.execute(sa.select(GROUPS.c.generation).where(
            GROUPS.c.uuid == GROUP)).scalar_one() == 1
    # the members placed before count for the next batch
    with pytest.raises(exception.GroupPolicyViolation):
        _claim_new(db, [(factories.uuids(1)[0], {
            (H1 if policy == "affinity" else placements[0]): {
                "VCPU": 1}})], group=group)


def test_a_new_consumer_claim_is_four_statements(db):
    """The round trips are what a claim costs on a loopback database:
    snapshot, compare-and-swap, consumer, allocations (then COMMIT); on
    PostgreSQL the last three are one statement, and both are prepared
    statements (a PREPARE is sent once per connection and shape)."""
    statements = []

    def count(conn, cursor, statement, *args):
        statements.append(statement.split()[0])

    sa.event.listen(db.engine, "before_cursor_execute", count)
    try:
        with db.begin() as conn:
            allocations.claim(conn, VM1, {H1: {"VCPU": 1, "DISK_GB": 5}},
                              new=True)
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", count)
    # SQLite's BEGIN IMMEDIATE is this test suite's, not the claim's
    assert [s for s in statements if s not in ("BEGIN", "PREPARE")] == (
        ["EXECUTE", "EXECUTE"] if db.backend == "postgresql" else
        ["SELECT", "UPDATE", "INSERT", "INSERT"])
    assert _held(db, VM1) == {H1: {"VCPU": 1, "DISK_GB": 5}}


@pytest.fixture
def sdb(server_db):
    return _two_hosts(server_db)


def test_a_batch_that_read_before_another_claim_committed_loses_whole(
        sdb, monkeypatch):
    """The batch reads h1 with 8 VCPUs free and pauses before writing; a
    claim of 6 commits; the batch's compare-and-swap (on PostgreSQL in
    the same statement as its inserts) must fail and leave nothing."""
    from gantt.tests.unit.db import test_moves

    seen = _generations(sdb)
    paused = test_moves.Paused(monkeypatch, allocations, "_take").start(
        lambda: _claim_new(sdb, [(VM1, {H1: {"VCPU": 2}}),
                                 (VM2, {H2: {"VCPU": 2}})]))
    _claim_new(sdb, [(VM3, {H1: {"VCPU": 6}})])
    before = _generations(sdb)
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), outcome
    # every provider the batch read, with what it read, and its first
    # consumer
    assert str(outcome["error"]) == (
        "Resource provider %s,%s changed (generation %d,%d) while claiming "
        "for consumer %s" % (H1, H2, seen[H1], seen[H2], VM1))
    assert _consumers(sdb) == [VM3]
    assert (_held(sdb, VM1), _held(sdb, VM2)) == ({}, {})
    assert _generations(sdb) == before
    # claimed again, it fits: 6 + 2 of 8
    _claim_new(sdb, [(VM1, {H1: {"VCPU": 2}}), (VM2, {H2: {"VCPU": 2}})])
    assert _held(sdb, VM1) == {H1: {"VCPU": 2}}


def test_a_member_that_read_before_another_member_committed_loses(
        sdb, monkeypatch):
    """Anti-affinity: VM1 reads the group (no member yet) and pauses; VM2
    of the same group is claimed on h1 and commits. VM1 asks for h2 (its
    providers did not move), but the group's generation did: it must lose
    (on PostgreSQL in the same statement as its inserts), and its retry
    sees VM2."""
    from gantt.tests.unit.db import test_moves

    group = allocations.GroupClaim(GROUP, "anti-affinity", 1)
    allocations.ensure_group(sdb, group)
    paused = test_moves.Paused(monkeypatch, allocations, "_take").start(
        lambda: _claim_new(sdb, [(VM1, {H1: {"VCPU": 1}})], group=group))
    _claim_new(sdb, [(VM2, {H2: {"VCPU": 1}})], group=group)
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), outcome
    assert str(outcome["error"]) == (
        "Resource provider group %s changed (generation 0) while claiming "
        "for consumer %s" % (GROUP, VM1))
    assert _consumers(sdb) == [VM2]
    with sdb.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == {"h2": 1}
    with pytest.raises(exception.GroupPolicyViolation):
        _claim_new(sdb, [(VM1, {H2: {"VCPU": 1}})], group=group)


def test_a_claim_whose_consumer_another_call_changed_is_not_retried(
        server_db, monkeypatch):
    """Two calls replace one consumer's claim at once: the one that read
    the consumer before the other committed must fail, typed, rather than
    retry and silently move the claim the other call has answered with."""
    db = _two_hosts(server_db)
    claimer = claims.Claimer(db)
    claimer.claim(VM1, {H1: {"VCPU": 1}})
    read = allocations._consumer_generation
    raced = []

    def read_then_lose_the_race(conn, uuid):
        seen = read(conn, uuid)
        if not raced:
            # the other call commits between this read and the write
            raced.append(threading.Thread(target=claims.Claimer(db).claim,
                                          args=(VM1, {H2: {"VCPU": 2}})))
            raced[0].start()
            raced[0].join(30)
        return seen

    monkeypatch.setattr(allocations, "_consumer_generation",
                        read_then_lose_the_race)
    with pytest.raises(exception.ConsumerConflict, match=VM1):
        claimer.claim(VM1, {H1: {"VCPU": 3}})
    # MariaDB finds the providers changed first (a race it retries); the
    # consumer's change is never retried
    assert claimer.conflicts <= 1
    assert _held(db, VM1) == {H2: {"VCPU": 2}}
