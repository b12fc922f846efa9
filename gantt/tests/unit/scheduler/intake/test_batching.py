"""The stats intake: drop stale, coalesce, apply, store on its thread
(gantt.scheduler.intake.batching).

Every report here goes through the wire form (``obj_to_primitive`` then a
JSON round trip), as a cast's argument reaches the intake.
"""

import random
import threading

import pytest

from gantt.scheduler.intake import batching
from gantt.scheduler.intake import wire
from gantt.tests import factories
from gantt.tests import stored_hosts
from gantt.tests.unit.scheduler.intake import casts


def _stats(scheduler):
    values = scheduler.counters.values
    return (values["reports_applied"], values["reports_stale"],
            values["messages_rejected"])


def _cached_sequence(scheduler, name):
    table = scheduler.stats.cache.table
    return int(table.report_sequence[
        table.row_by_uuid[factories.host_uuid(name)]])


@pytest.fixture
def intake(scheduler):
    return batching.StatsIntake(scheduler.stats)


def test_a_new_host_is_stored_then_unchanged_reports_skip_the_database(
        scheduler, intake):
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.flush()
    (stored,) = stored_hosts.load_hosts(scheduler.stats.db)
    assert stored.report["report_sequence"] == 10
    intake.take(casts.primitive(casts.node(sequence=11)))
    intake.flush()
    # in the cache, not written again (report_persist_interval)
    assert _cached_sequence(scheduler, "host1") == 11
    (stored,) = stored_hosts.load_hosts(scheduler.stats.db)
    assert stored.report["report_sequence"] == 10
    assert _stats(scheduler) == (2, 0, 0)


def test_draining_leaves_database_writes_to_the_storing_thread(
        scheduler, intake):
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.drain()
    # a host new to the cache must be stored first: not done by drain()
    assert (intake.pending(), len(scheduler.stats.cache)) == (1, 0)
    assert stored_hosts.load_hosts(scheduler.stats.db) == []
    intake.take(casts.primitive(casts.node(sequence=11)))
    intake.drain()
    # the newer one replaced it in the storing queue
    assert intake.pending() == 1
    intake.flush()
    (stored,) = stored_hosts.load_hosts(scheduler.stats.db)
    assert stored.report["report_sequence"] == 11
    assert _cached_sequence(scheduler, "host1") == 11
    assert _stats(scheduler) == (1, 1, 0)


def test_a_changed_report_is_stored(scheduler, intake):
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.take(casts.primitive(casts.node(sequence=11, vcpus=64)))
    intake.flush()
    (stored,) = stored_hosts.load_hosts(scheduler.stats.db)
    assert stored.report["report_sequence"] == 11
    assert stored.inventories["VCPU"][0] == 64


def test_stale_reports_are_dropped_before_they_are_read(
        scheduler, intake, monkeypatch):
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.flush()
    built = []
    real = wire.build_report
    monkeypatch.setattr(wire, "build_report",
                        lambda *a: built.append(a) or real(*a))
    stale = casts.primitive(casts.node(sequence=9))
    # even a stale report that would be refused is only counted stale: it
    # was never read past its uuid and sequence
    casts.data(stale)["inventories"][0]["gantt_object.data"]["total"] = -1
    intake.take(stale)
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.flush()
    assert built == []
    assert _cached_sequence(scheduler, "host1") == 10
    assert _stats(scheduler) == (1, 2, 0)


def test_queued_reports_coalesce_and_the_newest_is_applied(scheduler, intake):
    for sequence in (11, 14, 12, 13):
        intake.take(casts.primitive(
            casts.node(sequence=sequence, vcpus=sequence)))
    intake.take(casts.primitive(casts.node("host2", sequence=5)))
    assert intake.pending() == 2
    intake.flush()
    assert intake.pending() == 0
    assert _cached_sequence(scheduler, "host1") == 14
    assert _cached_sequence(scheduler, "host2") == 5
    # 11 replaced by 14; 12 and 13 older than the pending 14
    assert _stats(scheduler) == (2, 3, 0)
    view = {s.host: s for s in scheduler.operator.get_host_states()}
    vcpu = {r.resource_class: r.total for r in view["host1"].resources}
    assert vcpu["VCPU"] == 14


def test_a_bad_report_is_counted_and_keeps_the_pending_good_one(
        scheduler, intake, caplog):
    intake.take(casts.primitive(casts.node(sequence=10)))
    bad = casts.primitive(casts.node(sequence=11, reserved_memory_mb=10 ** 9))
    intake.take(bad)
    intake.flush()
    assert _cached_sequence(scheduler, "host1") == 10
    assert _stats(scheduler) == (1, 0, 1)
    assert ("Rejected update_resource_stats message: Invalid request: "
            "MEMORY_MB: reserved") in caplog.text


@pytest.mark.parametrize("sequence", [2 ** 63, 2 ** 64, -2 ** 63 - 1])
def test_a_sequence_beyond_64_bits_is_refused_not_compared(
        scheduler, intake, caplog, sequence):
    intake.take(casts.primitive(casts.node(sequence=10)))
    intake.flush()
    intake.take(casts.primitive(casts.node(sequence=sequence)))
    intake.flush()
    assert _cached_sequence(scheduler, "host1") == 10
    assert _stats(scheduler) == (1, 0, 1)
    assert "report_sequence must be between" in caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("junk", [None, "x", 7, [], {"uuid": "nope"},
                                  {"gantt_object.name": "ComputeNode"}])
def test_junk_never_raises_and_is_counted(scheduler, intake, junk):
    intake.take(junk)
    intake.offer(junk)
    intake.flush()
    assert _stats(scheduler) == (0, 0, 2)
    assert len(scheduler.stats.cache) == 0


def test_a_failure_while_applying_is_logged_and_the_rest_applied(
        scheduler, intake, monkeypatch, caplog):
    intake.take(casts.primitive(casts.node("host1", sequence=1)))
    intake.take(casts.primitive(casts.node("host2", sequence=1)))
    real = scheduler.stats.update_resource_stats

    def broken(node):
        if node.host == "host1":
            raise RuntimeError("boom")
        return real(node)

    monkeypatch.setattr(scheduler.stats, "update_resource_stats", broken)
    intake.flush()
    assert {s.host for s in scheduler.operator.get_host_states()} == {"host2"}
    assert "Could not store the report 1 of host1" in caplog.text


def test_the_intake_thread_applies_offered_reports(scheduler, intake):
    intake.start()
    for sequence in range(1, 50):
        intake.offer(casts.primitive(casts.node(sequence=sequence)))
    intake.stop()
    assert _cached_sequence(scheduler, "host1") == 49
    applied, stale, rejected = _stats(scheduler)
    assert (applied + stale, rejected) == (49, 0)


def test_concurrent_intake_keeps_each_hosts_newest_report(scheduler, intake):
    """Three listeners offer shuffled reports of the same hosts while the
    intake's thread and the listeners themselves apply them."""
    hosts = ["host%d" % i for i in range(20)]
    sequences = list(range(1, 31))
    primitives = [casts.primitive(casts.node(h, sequence=s)) for h in hosts
                  for s in sequences]
    random.Random(7).shuffle(primitives)
    intake.start()

    def listener(part, inline):
        for primitive in part:
            if inline:
                intake.take(primitive)
                intake.drain()
            else:
                intake.offer(primitive)

    threads = [threading.Thread(target=listener,
                                args=(primitives[i::3], i != 0))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    intake.stop()
    assert {h: _cached_sequence(scheduler, h) for h in hosts} == {
        h: 30 for h in hosts}
    applied, stale, rejected = _stats(scheduler)
    assert (applied + stale, rejected) == (len(primitives), 0)
    assert intake.pending() == 0
