"""Reserved slots of holistic groups, on SQLite, MariaDB and PostgreSQL:
claimed all or nothing, taken over once, expired once however many
sweepers race for them."""

import datetime
import threading

import pytest
from sqlalchemy import event as sa_event

from gantt import exception
from gantt.db import allocations
from gantt.db import reports
from gantt.db import reservations
from gantt.tests import factories

H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
GROUP = "6a1d9b63-4c2f-4e8b-8d77-1f3a5c9e2b48"
R1, R2, R3, VM1, VM2 = factories.uuids(5)
NOW = datetime.datetime(2026, 11, 25, 12, 0, 0)
LATER = NOW + datetime.timedelta(minutes=10)
RULE = allocations.GroupClaim(GROUP, "anti-affinity", 1)


@pytest.fixture
def db(any_db):
    for name in ("h1", "h2"):
        reports.save_report(any_db, factories.compute_node_obj(
            name, vcpus=8, memory_mb=8192, disk_gb=100))
    allocations.ensure_group(any_db, RULE)
    return any_db


def _reserve(db, *slots, expires_at=LATER):
    with db.begin() as conn:
        return reservations.reserve(
            conn, GROUP, [reservations.SlotClaim(i, "web", consumer, alloc)
                          for i, (consumer, alloc) in enumerate(slots)],
            expires_at, project_id="p", user_id="u", group=RULE, now=NOW)


def _held(db, consumer):
    with db.begin() as conn:
        return allocations.consumer_allocations(conn, consumer)


def _convert(db, slot, instance, now=NOW):
    """The member's allocations once it took the slot, or None."""
    with db.begin() as conn:
        row = reservations.slot_row(conn, GROUP, slot)
        if row is None or not reservations.convert(conn, row, instance,
                                                   now=now):
            return None
        return allocations.consumer_allocations(conn, instance)


def test_a_plan_is_claimed_whole_under_reservation_consumers(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}))
    assert _held(db, R1) == {H1: {"VCPU": 4}}
    assert _held(db, R2) == {H2: {"VCPU": 4}}


def test_a_plan_that_breaks_the_group_rule_claims_nothing(db):
    with pytest.raises(exception.GroupPolicyViolation):
        _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H1: {"VCPU": 4}}))
    assert _held(db, R1) == {} and _held(db, R2) == {}


def test_a_plan_without_room_claims_nothing(db):
    with pytest.raises(exception.CapacityExceeded):
        _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 40}}))
    assert _held(db, R1) == {}


def test_a_member_takes_its_slot_over_once(db):
    slot = {H2: {"VCPU": 4, "MEMORY_MB": 512}}
    _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, slot))
    assert _convert(db, 1, VM1) == slot
    assert _held(db, VM1) == slot and _held(db, R2) == {}
    assert _held(db, R1) == {H1: {"VCPU": 4}}
    with db.begin() as conn:
        # the reservation consumer became the member's: owner and group
        member = allocations.consumer_info(conn, VM1)
        gone = allocations.consumer_info(conn, R2)
    assert (member.project_id, member.group.uuid) == ("p", GROUP)
    assert gone == allocations.ConsumerInfo()
    # the same member again (a retried call): its claim, unchanged
    assert _convert(db, 1, VM1) == slot
    with pytest.raises(reservations.SlotTaken):
        _convert(db, 1, VM2)


def test_a_taken_over_slot_keeps_counting_for_the_group(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}))
    _convert(db, 0, VM1)
    with db.begin() as conn, pytest.raises(
            exception.GroupPolicyViolation):
        allocations.claim_new(conn, [allocations.NewClaim(
            VM2, {H1: {"VCPU": 1}})], group=RULE)


def test_reading_a_slot_says_what_it_holds_and_its_alternates(db):
    with db.begin() as conn:
        reservations.reserve(conn, GROUP, [
            reservations.SlotClaim(0, "web", R1, {H1: {"VCPU": 4}}, (H2,)),
            reservations.SlotClaim(1, "web", R2, {H2: {"VCPU": 4}})],
            LATER, project_id="p", user_id="u", group=RULE, now=NOW)
    _convert(db, 1, VM1)
    with db.begin() as conn:
        reservations.save_plan(conn, GROUP, [], "most-spread", "p", "u", NOW)
        first = reservations.read_slot(conn, GROUP, 0)
        taken = reservations.read_slot(conn, GROUP, 1)
        unknown = reservations.read_slot(conn, GROUP, 7)
        other = reservations.read_slot(conn, R3, 0)
        members = reservations.members_by_provider(conn, GROUP)
    assert first.row.instance_uuid is None and first.alternates() == (H2,)
    assert first.holds == {H1: {"VCPU": 4}}
    assert taken.row.instance_uuid == VM1 and taken.alternates() == ()
    assert taken.holds == {H2: {"VCPU": 4}}
    assert taken.stored.objective == "most-spread"
    assert unknown.stored.objective == "most-spread"
    assert unknown.row is None and unknown.alternates() is None
    assert other.stored is None
    assert members == {H1: 1, H2: 1}


def test_an_expired_or_unknown_slot_is_not_taken_over(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}), expires_at=NOW)
    assert _convert(db, 0, VM1, now=LATER) is None
    assert _convert(db, 7, VM1) is None
    assert _held(db, VM1) == {}


def test_release_and_expiry_free_only_unconverted_slots(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}),
             expires_at=NOW)
    _convert(db, 0, VM1, now=NOW)
    with db.begin() as conn:
        assert reservations.expired(conn, LATER) == [R2]
        assert reservations.expire(conn, R2, LATER)
        assert reservations.expire(conn, R2, LATER) is None
        assert reservations.drop(conn, R1) is None
    assert _held(db, R2) == {} and _held(db, VM1) == {H1: {"VCPU": 4}}


def test_extending_numbers_slots_after_the_recorded_ones(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}))
    with db.begin() as conn:
        assert reservations.next_slot(conn, GROUP) == 2
        assert reservations.next_slot(conn, R3) == 0


def test_two_reserves_of_one_slot_number_claim_once(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}))
    with pytest.raises(reservations.SlotTaken):
        _reserve(db, (R2, {H2: {"VCPU": 4}}))
    assert _held(db, R2) == {}


def _race(db, work, workers=4):
    """Run ``work(conn)`` in ``workers`` transactions started together."""
    start = threading.Barrier(workers)
    results, errors = [], []

    def run():
        start.wait()
        try:
            with db.begin() as conn:
                results.append(work(conn))
        except Exception as exc:  # a deadlock victim counts as a loser
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def test_racing_sweepers_release_each_slot_once(server_db):
    test_db = server_db
    for name in ("h1", "h2"):
        reports.save_report(test_db, factories.compute_node_obj(
            name, vcpus=8, memory_mb=8192, disk_gb=100))
    allocations.ensure_group(test_db, RULE)
    _reserve(test_db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}),
             expires_at=NOW)
    results, _ = _race(test_db, lambda conn: [
        reservations.expire(conn, c, LATER)
        for c in reservations.expired(conn, LATER)])
    freed = [s for result in results for s in result if s is not None]
    assert len(freed) == 2          # each slot by exactly one sweeper
    assert _held(test_db, R1) == {} and _held(test_db, R2) == {}


def test_a_sweeper_and_a_member_racing_for_a_slot_one_wins(server_db):
    test_db = server_db
    reports.save_report(test_db, factories.compute_node_obj(
        "h1", vcpus=8, memory_mb=8192, disk_gb=100))
    allocations.ensure_group(test_db, RULE)
    _reserve(test_db, (R1, {H1: {"VCPU": 4}}), expires_at=NOW)
    outcome = {}
    barrier = threading.Barrier(2)

    def member():
        barrier.wait()
        outcome["member"] = _convert(test_db, 0, VM1, now=NOW)

    def sweeper():
        barrier.wait()
        with test_db.begin() as conn:
            outcome["sweeper"] = reservations.expire(conn, R1, LATER)

    threads = [threading.Thread(target=member),
               threading.Thread(target=sweeper)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took, freed = outcome["member"] is not None, outcome["sweeper"] is not None
    assert took != freed
    assert _held(test_db, VM1) == ({H1: {"VCPU": 4}} if took else {})
    assert _held(test_db, R1) == {}


def test_a_plan_claimed_in_chunks_is_still_all_or_nothing(db, monkeypatch):
    monkeypatch.setattr(reservations, "CHUNK", 1)
    with pytest.raises(exception.GroupPolicyViolation):
        _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H1: {"VCPU": 4}}))
    assert _held(db, R1) == {}
    with pytest.raises(exception.CapacityExceeded):
        _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 9}}))
    assert _held(db, R1) == {} and _held(db, R2) == {}
    _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}))
    assert _held(db, R2) == {H2: {"VCPU": 4}}


def test_a_plan_in_chunks_counts_the_members_placed_before_it(db,
                                                             monkeypatch):
    _reserve(db, (R1, {H1: {"VCPU": 4}}))
    monkeypatch.setattr(reservations, "CHUNK", 1)
    with pytest.raises(exception.GroupPolicyViolation):
        with db.begin() as conn:
            reservations.reserve(
                conn, GROUP, [reservations.SlotClaim(1, "web", R2, {
                    H2: {"VCPU": 1}}), reservations.SlotClaim(2, "web", R3, {
                        H1: {"VCPU": 1}})],
                LATER, project_id="p", user_id="u", group=RULE, now=NOW)
    assert _held(db, R2) == {} and _held(db, R3) == {}


def test_a_plan_reads_the_group_once_however_many_chunks(db, monkeypatch):
    monkeypatch.setattr(reservations, "CHUNK", 1)
    statements = []

    def seen(conn, cursor, statement, *args):
        statements.append(statement)

    sa_event.listen(db.engine, "before_cursor_execute", seen)
    try:
        _reserve(db, (R1, {H1: {"VCPU": 4}}), (R2, {H2: {"VCPU": 4}}))
    finally:
        sa_event.remove(db.engine, "before_cursor_execute", seen)
    reads = [s for s in statements
             if s.lstrip().upper().startswith("SELECT")
             and "instance_groups" in s]
    assert len(reads) == 1


def test_a_member_holding_a_claim_already_takes_nothing_over(db):
    _reserve(db, (R1, {H1: {"VCPU": 4}}))
    with db.begin() as conn:
        allocations.claim_new(conn, [allocations.NewClaim(
            VM1, {H2: {"VCPU": 1}})])
    with pytest.raises(allocations.ConsumerExists):
        _convert(db, 0, VM1)
    assert _held(db, R1) == {H1: {"VCPU": 4}}
    assert _held(db, VM1) == {H2: {"VCPU": 1}}
    assert _convert(db, 0, VM2) == {H1: {"VCPU": 4}}
