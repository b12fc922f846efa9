"""Answers a caller can act on, under concurrency and faults.

Two conductors ask for the same instance at once (a duplicate), a
conductor asks again after a reply it never got (a retry), two callers
release one consumer at once, and a worker dies in the middle of a call.
Every answer is checked against the database, on MariaDB and PostgreSQL,
against a real daemon with two workers.
"""

import contextlib
import os
import signal
import socket
import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import rpc
from gantt.rpcapi import client as rpc_client
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import test_contention
from gantt.tests.functional import test_faults
from gantt.tests.functional import waiting

PAIRS = 40
SMALL = f.flavor("small", vcpus=1, memory_mb=1024, root_gb=10)
LARGE = f.flavor("large", vcpus=2, memory_mb=2048, root_gb=20)


def _fleet(daemon, count):
    for i in range(count):
        daemon.client.update_resource_stats(None, f.compute_node_obj(
            "host%02d" % i, vcpus=256, memory_mb=1 << 20, disk_gb=10000))
    daemon.wait_for_hosts(count)


def _at_once(*calls):
    """Run the calls at the same moment; each one's result or exception."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c))
               for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def _held(db, consumer):
    """``{provider uuid: {class: amount}}`` the database holds for it."""
    held = {}
    for (rp, rc), used in invariants.allocations(db).get(consumer,
                                                         {}).items():
        held.setdefault(rp, {})[rc] = used
    return held


def _assert_matches_the_database(db, answer):
    claimed = answer[0]
    assert claimed.claimed
    assert claimed.allocation_request.as_mapping() == _held(
        db, claimed.consumer_uuid), (
        "%s was answered with %s, which the database does not hold"
        % (claimed.consumer_uuid, claimed.service_host))


def test_duplicates_and_retries_get_what_the_database_holds(daemon_factory,
                                                            server_db):
    daemon = daemon_factory(server_db.url, workers=2,
                            extra=test_contention.CORE_FILTERS)
    _fleet(daemon, 8)
    client = daemon.client
    placed = conflicts = 0
    for i in range(PAIRS):
        [uuid] = f.uuids(1)
        # half the pairs ask the same, half for different flavors
        specs = [f.request(SMALL), f.request(SMALL if i % 2 else LARGE)]
        answers = _at_once(*[
            lambda s=spec, u=uuid: client.select_destinations(None, s, [u])
            for spec in specs])
        errors = [a for a in answers if isinstance(a, Exception)]
        assert all(isinstance(e, exception.ConsumerConflict)
                   for e in errors), errors
        got = [(spec, a[0]) for spec, a in zip(specs, answers, strict=True)
               if not isinstance(a, Exception)]
        assert got, "neither caller of pair %d got a claim" % i
        for _spec, answer in got:
            _assert_matches_the_database(server_db.db, answer)
        placed += len(got)
        conflicts += len(errors)
        # a retry (the reply was lost) gets the same claim, unchanged
        spec, answer = got[0]
        [again] = client.select_destinations(None, spec, [uuid])
        assert again[0].service_host == answer[0].service_host
        _assert_matches_the_database(server_db.db, again)
    assert invariants.check(server_db.db).violations() == {}
    # the pairs that asked alike all got the claim; the others one each
    assert placed >= PAIRS + PAIRS // 2
    assert conflicts <= PAIRS // 2


def test_of_two_releases_at_once_exactly_one_is_told_it_released(
        daemon_factory, server_db):
    daemon = daemon_factory(server_db.url, workers=2,
                            extra=test_contention.CORE_FILTERS)
    _fleet(daemon, 4)
    client = daemon.client
    uuids = f.uuids(PAIRS)
    for uuid in uuids:
        client.select_destinations(None, f.request(SMALL), [uuid],
                                   return_alternates=False)
    for uuid in uuids:
        answers = _at_once(lambda u=uuid: client.release(None, u),
                           lambda u=uuid: client.release(None, u))
        assert sorted(answers) == [False, True], (uuid, answers)
    assert invariants.allocations(server_db.db) == {}


# -- a worker that stops answering mid-call ----------------------------------


def _rows_locked(db):
    """Lock every provider row in a transaction of the test's own, so that
    a claim in flight waits on it (a slow call, without test-only code in
    the daemon); the lock goes when the returned callable is called."""
    conn = db.engine.connect()
    trans = conn.begin()
    conn.execute(sa.text("SELECT id FROM resource_providers FOR UPDATE"))

    def unlock():
        trans.rollback()
        conn.close()
    return unlock


LOCK_WAITS = {
    "mysql": "SELECT COUNT(*) FROM information_schema.innodb_trx "
             "WHERE trx_state = 'LOCK WAIT'",
    "postgresql": "SELECT COUNT(*) FROM pg_stat_activity WHERE "
                  "wait_event_type = 'Lock' AND datname = current_database()",
}


def _a_claim_waits_on_the_lock(db):
    """Whether a transaction (the daemon's claim) waits on a row lock."""
    with db.engine.connect() as conn:
        return conn.execute(sa.text(
            LOCK_WAITS[db.engine.dialect.name])).scalar() > 0


def _call_in_the_background(call):
    outcome = {}

    def run():
        started = time.monotonic()
        try:
            outcome["result"] = call()
        except Exception as exc:
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@contextlib.contextmanager
def _a_call_waiting_on_locked_rows(daemon_factory, server_db, monitor):
    """A daemon of two workers, and a ``select_destinations`` (a
    generous timeout, call monitor ``monitor``) that waits on provider
    rows the test keeps locked until the block ends; yields (the daemon,
    the call's outcome, filled in once it ends) once the call's claim
    waits on the lock."""
    daemon = daemon_factory(server_db.url, workers=2,
                            extra=test_contention.CORE_FILTERS)
    _fleet(daemon, 2)
    client = rpc_client.SchedulerClient(daemon.transport, daemon.topic,
                                        timeout=waiting.CALL,
                                        call_monitor_timeout=monitor)
    unlock = _rows_locked(server_db.db)
    try:
        thread, outcome = _call_in_the_background(
            lambda: client.select_destinations(None, f.request(SMALL),
                                               f.uuids(1)))
        waiting.until("the call's claim waiting on the locked rows",
                      lambda: _a_claim_waits_on_the_lock(server_db.db),
                      log=daemon.log)
        yield daemon, outcome
    finally:
        unlock()
    thread.join(waiting.WAIT)


def test_heartbeats_keep_a_slow_call_alive(daemon_factory, server_db):
    """The worker heartbeats while it works: a call longer than the call
    monitor timeout (but within its own timeout) gets its answer."""
    with _a_call_waiting_on_locked_rows(daemon_factory, server_db,
                                        monitor=2) as (_daemon, outcome):
        time.sleep(6)             # three monitor timeouts
    assert "error" not in outcome, outcome
    assert outcome["seconds"] > 5
    _assert_matches_the_database(server_db.db, outcome["result"][0])


def test_a_killed_worker_fails_the_call_within_the_monitor_timeout(
        daemon_factory, server_db):
    with _a_call_waiting_on_locked_rows(daemon_factory, server_db,
                                        monitor=4) as (daemon, outcome):
        assert "seconds" not in outcome
        for pid in test_faults._worker_pids(daemon):
            os.kill(pid, signal.SIGKILL)
        waiting.until("the call's end", lambda: "seconds" in outcome)
    assert isinstance(outcome.get("error"), messaging.MessagingTimeout), (
        outcome)
    assert outcome["seconds"] < 15


def test_a_claim_moves_only_when_the_caller_asks(daemon):
    _fleet(daemon, 4)
    [uuid] = f.uuids(1)
    [[small, *_]] = daemon.client.select_destinations(
        None, f.request(SMALL), [uuid])
    with pytest.raises(exception.ConsumerConflict, match="replace=True"):
        daemon.client.select_destinations(None, f.request(LARGE), [uuid])
    _assert_matches_the_database(daemon.database, [small])
    [large] = daemon.client.select_destinations(
        None, f.request(LARGE), [uuid], replace=True)
    _assert_matches_the_database(daemon.database, large)
    assert large[0].allocation_request.as_mapping() == {
        large[0].compute_node_uuid: {"VCPU": 2, "MEMORY_MB": 2048,
                                     "DISK_GB": 20}}


# -- the broker restarts ----------------------------------------------------


def test_a_call_while_the_broker_is_down_ends_within_its_timeout(
        private_broker, daemon_factory, server_db):
    """oslo.messaging starts a call's timeout once the message is sent,
    and by default reconnects forever to send it: the client must bound
    the whole call by its timeout, and work again once the broker is
    back."""
    daemon = daemon_factory(server_db.url, workers=1,
                            extra=test_contention.CORE_FILTERS,
                            transport_url=private_broker.url)
    transport = rpc.get_transport(daemon.conf, url=private_broker.url)
    client = rpc_client.SchedulerClient(transport, daemon.topic, timeout=8)
    client.get_statistics(None)          # connected before the outage
    private_broker.stop_app()
    try:
        # several at once: some need a new connection to the broker
        calls = [_call_in_the_background(lambda: client.get_statistics(None))
                 for _ in range(3)]
        for thread, _outcome in calls:
            thread.join(waiting.WAIT)    # the broker stays down meanwhile
    finally:
        private_broker.start_app()
    for thread, outcome in calls:
        thread.join(waiting.WAIT)
        assert isinstance(outcome.get("error"),
                          messaging.MessagingException), outcome
        assert outcome["seconds"] < 8 + 1
    # once the broker is back, a call reconnects and is answered
    assert _answered_again(client, 8).worker
    transport.cleanup()


def _answered_again(client, timeout):
    """get_statistics' answer once the broker is back; every failure on
    the way ends within the call's timeout."""
    def answer():
        started = time.monotonic()
        try:
            return client.get_statistics(None)
        except messaging.MessagingException:
            assert time.monotonic() - started < timeout + 1
            return None
    return waiting.until("an answer once the broker is back", answer)


def test_a_first_call_with_no_broker_ends_within_its_timeout():
    """The first call of a process connects its reply queue, which
    oslo.messaging retries forever: the client bounds it too, and sends
    nothing."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]        # nothing listens there
    conf = cfg.ConfigOpts()
    conf([], project="gantt")
    transport = rpc.get_transport(
        conf, url="rabbit://guest:guest@127.0.0.1:%d/" % port)
    client = rpc_client.SchedulerClient(transport, "gantt-nowhere",
                                        timeout=4)
    thread, outcome = _call_in_the_background(
        lambda: client.get_statistics(None))
    thread.join(waiting.WAIT)
    assert isinstance(outcome.get("error"),
                      messaging.MessageDeliveryFailure), outcome
    assert outcome["seconds"] < 4 + 1


def test_a_first_call_while_the_broker_is_down_ends_and_the_next_works(
        private_broker, daemon_factory, server_db):
    daemon = daemon_factory(server_db.url, workers=1,
                            extra=test_contention.CORE_FILTERS,
                            transport_url=private_broker.url)
    private_broker.stop_app()
    try:
        transport = rpc.get_transport(daemon.conf, url=private_broker.url)
        client = rpc_client.SchedulerClient(transport, daemon.topic,
                                            timeout=8)
        thread, outcome = _call_in_the_background(
            lambda: client.get_statistics(None))
        thread.join(waiting.WAIT)        # the broker stays down meanwhile
    finally:
        private_broker.start_app()
    assert isinstance(outcome.get("error"),
                      messaging.MessageDeliveryFailure), outcome
    assert outcome["seconds"] < 8 + 1
    # the reply queue connects in the background once the broker is back
    assert _answered_again(client, 8).worker
    transport.cleanup()
