"""Moves with a migration consumer: claim, confirm, revert, and their races.

Every move test runs on SQLite, MariaDB and PostgreSQL (``any_db``); the
races need concurrent writers and run on MariaDB and PostgreSQL.
"""

import random
import threading

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import host_load
from gantt.db import models
from gantt.db import moves
from gantt.db import reports
from gantt.tests import factories
from gantt.tests.functional import invariants

RP = models.ResourceProvider.__table__
CONSUMERS = models.Consumer.__table__
H1, H2, H3 = (factories.host_uuid(h) for h in ("h1", "h2", "h3"))
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
VM3 = "33333333-3333-4333-8333-333333333333"
MIG = "99999999-9999-4999-8999-999999999999"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


@pytest.fixture
def db(any_db):
    return _hosts(any_db)


@pytest.fixture
def sdb(server_db):
    return _hosts(server_db)


def _hosts(db):
    for name in ("h1", "h2", "h3"):
        reports.save_report(db, factories.compute_node_obj(
            name, vcpus=8, memory_mb=8192, disk_gb=100))
    return db


def claim(db, consumer, allocation_map, **kwargs):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, allocation_map, **kwargs)


def move_claim(db, allocation_map, instance=VM1, migration=MIG, **kwargs):
    with db.begin() as conn:
        return moves.move_claim(conn, instance, migration, allocation_map,
                                **kwargs)


def confirm(db, migration=MIG):
    with db.begin() as conn:
        return moves.confirm_move(conn, migration)


def revert(db, instance=VM1, migration=MIG):
    with db.begin() as conn:
        return moves.revert_move(conn, instance, migration)


def held(db, consumer):
    with db.begin() as conn:
        return allocations.consumer_allocations(conn, consumer)


def generations(db):
    with db.begin() as conn:
        return {u: g for u, g in conn.execute(
            sa.select(RP.c.uuid, RP.c.generation))}


def usage(db):
    return {u: used for u, (_, used) in host_load.usages_by_uuid(db).items()}


def consumer_row(db, consumer):
    with db.begin() as conn:
        return conn.execute(sa.select(
            CONSUMERS.c.generation, CONSUMERS.c.project_id,
            CONSUMERS.c.user_id, CONSUMERS.c.instance_group_uuid).where(
            CONSUMERS.c.uuid == consumer)).first()


def everything(db):
    rows = {}
    with db.begin() as conn:
        for name, table in models.Base.metadata.tables.items():
            rows[name] = sorted(tuple(str(v) for v in r)
                                for r in conn.execute(sa.select(table)))
    return rows


def summary(states):
    return {s.uuid: (s.generation, s.usages) for s in states}


SOURCE = {"VCPU": 2, "MEMORY_MB": 1024}
DEST = {"VCPU": 4, "MEMORY_MB": 2048}


# -- claim, confirm, revert ---------------------------------------------------


def test_move_claim_then_confirm(db):
    claim(db, VM1, {H1: SOURCE}, project_id="p", user_id="u")
    before = generations(db)
    states = move_claim(db, {H2: DEST}, project_id="p", user_id="u")
    # only the destination's usage changed; the source stays counted
    assert summary(states) == {H2: (before[H2] + 1, DEST)}
    assert generations(db) == dict(before, **{H2: before[H2] + 1})
    assert held(db, VM1) == {H2: DEST}
    assert held(db, MIG) == {H1: SOURCE}
    assert usage(db)[H1] == SOURCE
    assert tuple(consumer_row(db, MIG))[1:] == ("p", "u", None)

    states = confirm(db)
    assert summary(states) == {H1: (before[H1] + 1, {})}
    assert held(db, MIG) == {} and consumer_row(db, MIG) is None
    assert held(db, VM1) == {H2: DEST}
    assert usage(db)[H1] == {}

    # again: nothing left to confirm or revert
    after = everything(db)
    assert confirm(db) == []
    assert revert(db) == []
    assert everything(db) == after


def test_move_claim_then_revert(db):
    claim(db, VM1, {H1: SOURCE}, project_id="p", user_id="u")
    move_claim(db, {H2: DEST}, project_id="p", user_id="u")
    mid = generations(db)
    instance_generation = consumer_row(db, VM1).generation

    states = revert(db)
    assert summary(states) == {H2: (mid[H2] + 1, {})}
    assert generations(db) == dict(mid, **{H2: mid[H2] + 1})
    assert held(db, VM1) == {H1: SOURCE}
    assert held(db, MIG) == {} and consumer_row(db, MIG) is None
    assert tuple(consumer_row(db, VM1)) == (instance_generation + 1, "p",
                                            "u", None)
    assert usage(db)[H2] == {} and usage(db)[H1] == SOURCE

    after = everything(db)
    assert revert(db) == []
    assert confirm(db) == []
    assert everything(db) == after


@pytest.mark.parametrize("other, old, new, fits", [
    (0, 2, 6, True),        # resize up: 2 + 6 = 8, exactly enough
    (0, 2, 7, False),       # one short
    (3, 4, 1, True),        # resize down: 3 + 4 + 1 = 8, exactly enough
    (4, 3, 2, False),       # one short: 4 + 3 + 2 = 9
])
def test_a_resize_on_the_same_host_needs_room_for_both(db, other, old, new,
                                                       fits):
    if other:
        claim(db, VM2, {H1: {"VCPU": other}})
    claim(db, VM1, {H1: {"VCPU": old}})
    before, rows = generations(db), everything(db)
    if not fits:
        with pytest.raises(exception.CapacityExceeded, match=H1):
            move_claim(db, {H1: {"VCPU": new}})
        assert everything(db) == rows     # the source is still the VM's
        return
    states = move_claim(db, {H1: {"VCPU": new}})
    assert summary(states) == {H1: (before[H1] + 1,
                                    {"VCPU": other + old + new})}
    assert held(db, VM1) == {H1: {"VCPU": new}}
    assert held(db, MIG) == {H1: {"VCPU": old}}
    # a revert gives the old size back and frees the new one
    assert summary(revert(db)) == {H1: (before[H1] + 2,
                                        {"VCPU": other + old})}
    assert held(db, VM1) == {H1: {"VCPU": old}}


def test_a_second_move_claim_replaces_only_the_destination(db):
    claim(db, VM1, {H1: SOURCE})
    move_claim(db, {H2: DEST})
    migration = tuple(consumer_row(db, MIG))
    first = generations(db)

    # a retry with the same destination: same allocations
    states = move_claim(db, {H2: DEST})
    assert summary(states) == {H2: (first[H2] + 1, DEST)}
    assert (held(db, VM1), held(db, MIG)) == ({H2: DEST}, {H1: SOURCE})

    # another destination: the first is freed, the source is untouched
    states = move_claim(db, {H3: {"VCPU": 1}})
    assert summary(states) == {H2: (first[H2] + 2, {}),
                               H3: (first[H3] + 1, {"VCPU": 1})}
    assert (held(db, VM1), held(db, MIG)) == ({H3: {"VCPU": 1}},
                                              {H1: SOURCE})
    # each retry compared-and-swapped the migration (the move must still
    # be going on), nothing else about it changed
    assert tuple(consumer_row(db, MIG)) == (migration[0] + 2,) + migration[1:]
    assert generations(db)[H1] == first[H1]
    assert usage(db) == {H1: SOURCE, H2: {}, H3: {"VCPU": 1}}


def test_a_move_claim_for_an_instance_holding_nothing_is_a_claim(db):
    move_claim(db, {H2: DEST})
    assert (held(db, VM1), held(db, MIG)) == ({H2: DEST}, {})
    assert consumer_row(db, MIG) is None
    assert revert(db) == []
    assert held(db, VM1) == {H2: DEST}


def test_the_migration_must_be_another_consumer(db):
    claim(db, VM1, {H1: SOURCE})
    with pytest.raises(exception.InvalidRequest, match=VM1):
        move_claim(db, {H2: DEST}, migration=VM1)
    assert held(db, VM1) == {H1: SOURCE}


def move_row(db, migration=MIG):
    with db.begin() as conn:
        return conn.execute(sa.select(
            moves.MOVES.c.instance_uuid, moves.MOVES.c.state).where(
            moves.MOVES.c.migration_uuid == migration)).first()


@pytest.mark.parametrize("finish, outcome", [(confirm, "confirmed"),
                                              (revert, "reverted")])
def test_a_move_is_recorded_until_it_finishes(db, finish, outcome):
    claim(db, VM1, {H1: SOURCE})
    move_claim(db, {H2: DEST})
    assert tuple(move_row(db)) == (VM1, "active")
    move_claim(db, {H3: DEST})               # a retry: still one row
    assert tuple(move_row(db)) == (VM1, "active")
    finish(db)
    assert tuple(move_row(db)) == (VM1, outcome)
    # an instance that held nothing was not moved: no row
    move_claim(db, {H2: {"VCPU": 1}}, instance=VM2, migration=VM3)
    assert move_row(db, VM3) is None


@pytest.mark.parametrize("finish, outcome", [(confirm, "confirmed"),
                                              (revert, "reverted")])
def test_a_late_move_claim_for_a_finished_move_is_refused(db, finish,
                                                          outcome):
    # a duplicate move_claim delivered after the move finished must not
    # hand the instance's allocations to the finished migration again
    claim(db, VM1, {H1: SOURCE})
    move_claim(db, {H2: DEST})
    finish(db)
    rows = everything(db)
    with pytest.raises(exception.InvalidRequest,
                       match="%s was %s already" % (MIG, outcome)):
        move_claim(db, {H3: DEST})
    assert everything(db) == rows
    assert held(db, MIG) == {}
    # the instance moves again under a new migration uuid
    other = "88888888-8888-4888-8888-888888888888"
    source = held(db, VM1)
    move_claim(db, {H3: DEST}, migration=other)
    assert (held(db, VM1), held(db, other)) == ({H3: DEST}, source)


def test_a_moving_member_keeps_its_group_policy(db):
    group = allocations.GroupClaim(GROUP, "anti-affinity")
    allocations.ensure_group(db, group)
    claim(db, VM1, {H1: SOURCE}, group=group)
    claim(db, VM2, {H2: SOURCE}, group=group)
    rows = everything(db)
    with pytest.raises(exception.GroupPolicyViolation):
        move_claim(db, {H2: DEST}, group=group)
    assert everything(db) == rows
    move_claim(db, {H3: DEST}, group=group)
    with db.begin() as conn:
        # the migration consumer is no member: h1 is free for the group
        assert allocations.group_hosts(conn, GROUP) == {"h2": 1, "h3": 1}
        assert allocations.hosts_of_consumers(conn, [VM1, MIG]) == {
            "h1", "h3"}


# -- races --------------------------------------------------------------------


class Paused:
    """Run ``work`` in a thread that stops when it first calls
    ``module.name``, until ``finish``."""

    def __init__(self, monkeypatch, module, name):
        self.reached = threading.Event()
        self.go = threading.Event()
        self.thread = None
        self.outcome = {}
        original = getattr(module, name)

        def held(*args, **kwargs):
            if (threading.current_thread() is self.thread
                    and not self.reached.is_set()):
                self.reached.set()
                assert self.go.wait(30)
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, held)

    def start(self, work):
        def run():
            try:
                self.outcome["result"] = work()
            except Exception as exc:
                self.outcome["error"] = exc

        self.thread = threading.Thread(target=run)
        self.thread.start()
        assert self.reached.wait(30), self.outcome
        return self

    def finish(self):
        self.go.set()
        self.thread.join(30)
        assert not self.thread.is_alive()
        return self.outcome


def test_a_move_claim_paused_before_its_swap_loses_to_a_claim(sdb,
                                                              monkeypatch):
    """Both read h2 with 2 VCPUs free; the plain claim commits while the
    move waits before its compare-and-swap: the move must lose, whole."""
    claim(sdb, VM1, {H1: {"VCPU": 2}})
    claim(sdb, VM2, {H2: {"VCPU": 6}})
    paused = Paused(monkeypatch, allocations, "_bump_generations").start(
        lambda: move_claim(sdb, {H2: {"VCPU": 2}}))
    claim(sdb, VM3, {H2: {"VCPU": 2}})
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict)
    assert (held(sdb, VM1), held(sdb, MIG)) == ({H1: {"VCPU": 2}}, {})
    assert consumer_row(sdb, MIG) is None
    assert usage(sdb)[H2] == {"VCPU": 8}
    assert invariants.check(sdb).violations() == {}


def _after_move(db):
    claim(db, VM1, {H1: SOURCE})
    move_claim(db, {H2: DEST})


MOVED_TO_H3 = ({H3: {"VCPU": 1}}, {H1: SOURCE})
REVERTED = ({H1: SOURCE}, {})
CONFIRMED = ({H2: DEST}, {})


@pytest.mark.parametrize("paused_op, paused_at, winner, final", [
    # a retried move_claim (to h3) waits; a revert commits: the revert wins
    ("move", (allocations, "_bump_generations"), "revert", REVERTED),
    # a revert waits; a retried move_claim commits: the move wins
    ("revert", (moves, "_bump_providers"), "move", MOVED_TO_H3),
    # a confirm waits; a revert commits
    ("confirm", (moves, "_bump_providers"), "revert", REVERTED),
    # a revert waits; a confirm commits
    ("revert", (moves, "_bump_providers"), "confirm", CONFIRMED),
])
def test_racing_moves_leave_one_state_never_a_mix(sdb, monkeypatch,
                                                  paused_op, paused_at,
                                                  winner, final):
    _after_move(sdb)
    ops = {"move": lambda: move_claim(sdb, {H3: {"VCPU": 1}}),
           "revert": lambda: revert(sdb), "confirm": lambda: confirm(sdb)}
    paused = Paused(monkeypatch, *paused_at).start(ops[paused_op])
    ops[winner]()
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), (
        outcome)
    assert (held(sdb, VM1), held(sdb, MIG)) == final
    expected = {H1: {}, H2: {}, H3: {}}
    for holding in final:
        for uuid, used in holding.items():
            expected[uuid] = used
    assert usage(sdb) == expected
    assert invariants.check(sdb).violations() == {}


@pytest.mark.parametrize("finish, outcome", [(confirm, "confirmed"),
                                              (revert, "reverted")])
def test_a_late_move_claim_racing_the_finish_is_refused(sdb, monkeypatch,
                                                        finish, outcome):
    """The duplicate passes the "finished already?" check, then the move
    finishes and frees the migration before the duplicate reads who holds
    what: it must still be refused, and change nothing."""
    _after_move(sdb)
    paused = Paused(monkeypatch, allocations, "_consumer_generation").start(
        lambda: move_claim(sdb, {H3: {"VCPU": 1}}))
    finish(sdb)
    rows = everything(sdb)
    error = paused.finish().get("error")
    # PostgreSQL (read committed) sees the finish and is refused by the
    # moves row; MariaDB's snapshot predates it and loses the consumer's
    # compare-and-swap instead (its retry meets the early check)
    assert isinstance(error, (exception.InvalidRequest,
                              exception.ClaimConflict)), error
    if isinstance(error, exception.InvalidRequest):
        assert "%s was %s already" % (MIG, outcome) in str(error)
    assert everything(sdb) == rows
    assert tuple(move_row(sdb)) == (VM1, outcome)
    assert invariants.check(sdb).violations() == {}


STORM_VMS = ["%08d-0000-4000-8000-%012d" % (i, i) for i in range(12)]
# three migrations per instance: a finished migration cannot be moved
# again (a late duplicate is refused), so later moves take the next one
STORM_MIGRATIONS = {vm: [vm[:-12] + "%012d" % (int(vm[:8]) + 500 * k)
                         for k in (1, 2, 3)]
                    for vm in STORM_VMS}


def _attempt(db, work):
    """Run ``work(conn)`` as the scheduler's Claimer does: again after a
    lost race, and not at all when it cannot fit."""
    for _ in range(20):
        try:
            with db.begin() as conn:
                return work(conn)
        except (exception.ClaimConflict, exception.CapacityExceeded):
            return None
        except exception.InvalidRequest as exc:
            if "already" not in str(exc):    # a finished migration
                raise
            return None
        except Exception as exc:
            if not db_api.is_conflict(exc):
                raise
    return None


def _storm_op(rng):
    """One random operation as ``work(conn)``."""
    vm = rng.choice(STORM_VMS)
    mig = rng.choice(STORM_MIGRATIONS[vm])
    target = {rng.choice((H1, H2, H3)): {"VCPU": rng.choice((1, 2, 3))}}
    return rng.choice((
        lambda conn: allocations.claim(conn, vm, target),
        lambda conn: moves.move_claim(conn, vm, mig, target),
        lambda conn: moves.move_claim(conn, vm, mig, target),
        lambda conn: moves.confirm_move(conn, mig),
        lambda conn: moves.revert_move(conn, vm, mig),
    ))


def _storm(db, threads=8, operations=25):
    errors = []

    def run(seed):
        rng = random.Random(seed)
        try:
            for _ in range(operations):
                _attempt(db, _storm_op(rng))
        except Exception as exc:       # pragma: no cover - reported below
            errors.append(exc)

    started = [threading.Thread(target=run, args=(i,))
               for i in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join(120)
    return errors


def test_a_storm_of_claims_and_moves_never_overcommits(sdb):
    """Threads claim, move, confirm and revert on three small hosts with
    retries, as the scheduler's workers would; afterwards no provider is
    over capacity, every migration holds one host only while its instance
    holds one too, and each provider's usage is what its allocations say."""
    assert _storm(sdb) == []
    assert invariants.check(sdb).violations() == {}
    with sdb.begin() as conn:
        holders = allocations.allocations_of(
            conn, STORM_VMS + [m for ms in STORM_MIGRATIONS.values()
                               for m in ms])
    assert holders, "the storm placed nothing"
    for vm in STORM_VMS:
        for mig in STORM_MIGRATIONS[vm]:
            if mig in holders:
                assert vm in holders
                assert len(holders[mig]) == 1
    sums = {H1: 0, H2: 0, H3: 0}
    for consumer in holders.values():
        for uuid, amounts in consumer.items():
            sums[uuid] += amounts["VCPU"]
    assert {u: used.get("VCPU", 0) for u, used in usage(sdb).items()} == sums
    assert all(total <= 8 for total in sums.values())
