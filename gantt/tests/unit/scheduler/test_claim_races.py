"""Claims that keep losing their race: to a deadlock, a lost connection
or a moved generation. How often each transaction is tried, how long it
backs off between tries, and what the caller and the log are told when
it gives up (the database's races themselves are in
gantt/tests/unit/db)."""

import logging

from oslo_db import exception as db_exc
import pytest

from gantt import exception
from gantt.db import allocations
from gantt.scheduler import claims
from gantt.tests import factories

SMALL = {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}


def _messages(caplog, level):
    return [r.getMessage() for r in caplog.records if r.levelname == level]


def _deadlocked(*args, **kwargs):
    raise db_exc.DBDeadlock()


@pytest.fixture
def waits(monkeypatch):
    """The back-off bounds of lost races, as ``[(low, high)]``; no wait is
    slept (each would be its upper bound)."""
    bounds, slept = [], []

    def uniform(low, high):
        bounds.append((low, high))
        return high

    monkeypatch.setattr(claims.random, "uniform", uniform)
    monkeypatch.setattr(claims.time, "sleep", slept.append)
    yield bounds
    assert slept == [high for _low, high in bounds]


@pytest.mark.parametrize("move", [False, True])
def test_a_claim_that_keeps_losing_backs_off_then_gives_up(
        sqlite_db, monkeypatch, caplog, waits, move):
    caplog.set_level(logging.DEBUG, logger=claims.__name__)
    # each lost race (here a deadlock) waits a random time from zero up
    # to a bound that doubles from 2 ms and stops at 64 ms, so that the
    # losers do not meet again and a claim that cannot win gives up soon
    if move:
        monkeypatch.setattr(claims.moves, "move_claim", _deadlocked)
    else:
        monkeypatch.setattr(claims.allocations, "claim", _deadlocked)
    claimer = claims.Claimer(sqlite_db, conflict_retries=7)
    instance, migration = factories.uuids(2)
    # a destination on two providers: a host and a disk pool
    destination = {factories.host_uuid("h2"): SMALL, "pool": {"DISK_GB": 5}}
    with pytest.raises(exception.ClaimConflict) as raised:
        if move:
            claimer.move_claim(instance, destination,
                               migration_uuid=migration)
        else:
            claimer.claim(instance, destination)
    assert [low for low, _high in waits] == [0] * 8
    assert [high for _low, high in waits] == pytest.approx(
        [0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.064, 0.064])
    assert claimer.conflicts == 8
    # the error says whose claim and which providers
    assert str(raised.value) == (
        "Resource provider %s,pool changed (generation ?) while claiming "
        "for consumer %s" % (factories.host_uuid("h2"), instance))
    # and each lost race is in the debug log, with whose claim lost
    assert _messages(caplog, "DEBUG") == [
        "Claim for %s lost a race (%s); retrying" % (instance, raised.value)
    ] * 8


def test_a_claim_that_keeps_finding_a_generation_moved_says_which(
        sqlite_db, monkeypatch, waits):
    # the compare-and-swap lost every time: the caller gets the last
    # conflict the transaction found, as it found it
    found = []

    def moved(conn, consumer_uuid, *args, **kwargs):
        found.append(exception.ClaimConflict(
            provider=factories.host_uuid("h1"), seen=len(found),
            consumer=consumer_uuid))
        raise found[-1]

    monkeypatch.setattr(claims.allocations, "claim", moved)
    [instance] = factories.uuids(1)
    claimer = claims.Claimer(sqlite_db)
    with pytest.raises(exception.ClaimConflict) as raised:
        claimer.claim(instance, {factories.host_uuid("h1"): SMALL})
    assert len(found) == len(waits) == 6
    assert raised.value is found[-1]
    assert claimer.conflicts == 6


def test_a_claim_whose_connection_keeps_dropping_gives_up(
        sqlite_db, monkeypatch, caplog, waits):
    # the connection died, maybe during COMMIT: claiming again replaces
    # the claim if it was made, so it is retried like a lost race, and
    # the operator is told each time
    lost = db_exc.DBConnectionError("server has gone away")

    def dropped(*args, **kwargs):
        raise lost

    monkeypatch.setattr(claims.allocations, "claim", dropped)
    [instance] = factories.uuids(1)
    claimer = claims.Claimer(sqlite_db)
    with pytest.raises(exception.ClaimConflict) as raised:
        claimer.claim(instance, {factories.host_uuid("h1"): SMALL})
    assert str(raised.value) == (
        "Resource provider (connection lost) changed (generation ?) while "
        "claiming for consumer %s" % instance)
    assert len(waits) == 6
    assert _messages(caplog, "WARNING") == [
        "Database connection lost while claiming for %s (%s); retrying" % (
            instance, lost)] * 6


@pytest.mark.parametrize("error, warned", [
    (db_exc.DBDeadlock(), False),
    (db_exc.DBConnectionError("server has gone away"), True)])
def test_a_release_that_keeps_failing_gives_up(
        sqlite_db, monkeypatch, caplog, waits, error, warned):
    # a release that loses its race, or its connection, is tried again,
    # six times in all; a lost connection is the operator's to know
    tries = []

    def failing(conn, consumer_uuid):
        tries.append(consumer_uuid)
        raise error

    monkeypatch.setattr(claims.allocations, "release", failing)
    [instance] = factories.uuids(1)
    with pytest.raises(exception.ClaimConflict) as raised:
        claims.Claimer(sqlite_db).release(instance)
    assert tries == [instance] * 6
    assert len(waits) == 6
    assert str(raised.value) == (
        "Resource provider * changed (generation ?) while claiming for "
        "consumer %s" % instance)
    assert _messages(caplog, "WARNING") == [
        "Database connection lost while releasing %s; retrying" % instance
    ] * (6 if warned else 0)


@pytest.mark.parametrize("step, names", [("confirm_move", "migration"),
                                         ("revert_move", "instance")])
def test_ending_a_move_that_keeps_losing_names_its_consumer(
        sqlite_db, monkeypatch, waits, step, names):
    # a confirm is the migration's change, a revert the instance's
    monkeypatch.setattr(claims.moves, step, _deadlocked)
    instance, migration = factories.uuids(2)
    claimer = claims.Claimer(sqlite_db)
    with pytest.raises(exception.ClaimConflict) as raised:
        if step == "confirm_move":
            claimer.confirm_move(migration)
        else:
            claimer.revert_move(instance, migration)
    assert len(waits) == 6
    assert str(raised.value) == (
        "Resource provider * changed (generation ?) while claiming for "
        "consumer %s" % {"migration": migration, "instance": instance}[names])


def test_a_batch_that_loses_its_race_is_tried_once(sqlite_db, monkeypatch,
                                                   waits):
    # the placer claims the instances one by one instead, each moving on
    # to its next host on failure; the error names the batch by its first
    # three instances
    tries = []

    def deadlocked(*args, **kwargs):
        tries.append(args)
        raise db_exc.DBDeadlock()

    monkeypatch.setattr(claims.allocations, "claim_new", deadlocked)
    uuids = factories.uuids(4)
    with pytest.raises(exception.ClaimConflict) as raised:
        claims.Claimer(sqlite_db).claim_new([
            allocations.NewClaim(u, {factories.host_uuid("h1"): SMALL})
            for u in uuids])
    assert len(tries) == 1
    assert str(raised.value) == (
        "Resource provider * changed (generation ?) while claiming for "
        "consumer %s" % ",".join(uuids[:3]))
