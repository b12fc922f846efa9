"""Many workers, one database: no overcommit, no double claim, ever.

These run several ``gantt-scheduler`` worker processes on one topic (no
leader, no lock service) against MariaDB and PostgreSQL, and check the
database with plain SQL afterwards (see ``invariants``).
"""

import random
import threading
import uuid

import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.objects import request_spec
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import storm

# the plugins these tests are about, whatever the defaults become
CORE_FILTERS = ("[filter_scheduler]\nenabled_filters = ComputeFilter,"
                "ResourceFilter,ServerGroupAntiAffinityFilter,"
                "ServerGroupAffinityFilter\n"
                "enabled_weighers = RAMWeigher,CPUWeigher,DiskWeigher\n")

FLAVORS = [f.flavor("s", vcpus=1, memory_mb=2048, root_gb=20),
           f.flavor("m", vcpus=2, memory_mb=4096, root_gb=40),
           f.flavor("l", vcpus=4, memory_mb=8192, root_gb=80)]


def _populate(daemon, count, **inventory):
    """``count`` hosts h000... report alike; waits until the cache has
    them all."""
    for i in range(count):
        f.cast_report(daemon.client, "h%03d" % i, **inventory)
    daemon.wait_for_hosts(count)


def _storm_requests(rng, groups):
    """~800 instances in single, batched and grouped requests."""
    requests = []
    for group in groups:
        members = 10 if group.policy == "anti-affinity" else 3
        for _ in range(members):
            requests.append((f.request(FLAVORS[0], instance_group=group),
                             f.uuids(1)))
    while sum(len(u) for _, u in requests) < 800:
        count = rng.choice((1, 1, 1, 2, 3))
        requests.append((f.request(rng.choice(FLAVORS),
                                   num_instances=count), f.uuids(count)))
    rng.shuffle(requests)
    return requests


def test_claim_storm_keeps_every_invariant(daemon_factory, server_db):
    daemon = daemon_factory(server_db.url, workers=3, extra=CORE_FILTERS)
    _populate(daemon, 150, vcpus=8, memory_mb=16384, disk_gb=200)
    groups = [request_spec.InstanceGroup(
        uuid=str(uuid.uuid4()),
        policy="anti-affinity" if i < 8 else "affinity") for i in range(10)]
    requests = _storm_requests(random.Random(7), groups)

    outcome, _ = storm.run(daemon.client, requests, threads=16)

    found = invariants.check(server_db.db)
    assert found.violations() == {}
    asked = {u for _, uuids in requests for u in uuids}
    # every instance was either placed or refused with NoValidHost
    assert set(outcome.placed) | outcome.no_valid_host == asked
    assert not outcome.gave_up and not outcome.retried_calls
    # exactly the placed instances hold allocations, each on its host
    assert found.allocated == set(outcome.placed)
    # demand exceeded capacity, so both answers must have happened
    assert outcome.placed and outcome.no_valid_host
    stats = [daemon.client.get_statistics(None) for _ in range(9)]
    assert len({s.worker for s in stats}) >= 2     # several workers served


def test_a_hot_spot_host_takes_exactly_its_capacity(daemon_factory,
                                                    server_db):
    daemon = daemon_factory(server_db.url, workers=3, extra=CORE_FILTERS)
    _populate(daemon, 1, vcpus=10, memory_mb=10 ** 6, disk_gb=10 ** 6)
    requests = [(f.request(FLAVORS[0]), f.uuids(1)) for _ in range(40)]

    outcome, _ = storm.run(daemon.client, requests, threads=12)

    assert len(outcome.placed) == 10
    assert len(outcome.no_valid_host) == 30
    found = invariants.check(server_db.db)
    assert found.violations() == {}
    assert found.allocated == set(outcome.placed)


def _provider(db, name, vcpus):
    from gantt.db import reports
    node = f.compute_node_obj(name, vcpus=vcpus)
    reports.save_report(db, node)
    return node.uuid


def test_two_claims_paused_before_the_swap_exactly_one_wins(server_db,
                                                            monkeypatch):
    """Both claims read the provider (1 VCPU free) and pass the capacity
    check; the first is held just before its compare-and-swap while the
    second commits; the first must then lose, not overcommit."""
    db = server_db.db
    rp = _provider(db, "solo", vcpus=1)
    first, second = f.uuids(2)
    checked = threading.Event()
    go_on = threading.Event()
    swap = allocations._bump_generations

    def held_swap(conn, providers, consumer):
        if consumer == first:
            checked.set()
            assert go_on.wait(30)
        return swap(conn, providers, consumer)

    monkeypatch.setattr(allocations, "_bump_generations", held_swap)
    result = {}

    def claim_first():
        try:
            with db.begin() as conn:
                allocations.claim(conn, first, {rp: {"VCPU": 1}})
            result["first"] = "won"
        except exception.ClaimConflict:
            result["first"] = "lost"

    thread = threading.Thread(target=claim_first)
    thread.start()
    assert checked.wait(30)
    with db.begin() as conn:
        allocations.claim(conn, second, {rp: {"VCPU": 1}})
    go_on.set()
    thread.join(30)

    assert result == {"first": "lost"}
    with db.engine.connect() as conn:
        holders = {r[0] for r in conn.execute(sa.text(
            "SELECT consumer_uuid FROM allocations"))}
    assert holders == {second}
    assert invariants.check(db).violations() == {}


def test_a_retried_claim_for_the_same_consumer_replaces(server_db):
    """The same consumer claimed on two hosts from two workers: one set."""
    db = server_db.db
    rp_a, rp_b = _provider(db, "a", 4), _provider(db, "b", 4)
    consumer = f.uuids(1)[0]
    barrier = threading.Barrier(2)
    errors = []

    def claim(rp):
        barrier.wait()
        for _ in range(20):
            try:
                with db.begin() as conn:
                    allocations.claim(conn, consumer, {rp: {"VCPU": 1}})
                return
            except exception.ClaimConflict as exc:
                errors.append(exc)
            except Exception as exc:   # a deadlock is a lost race too
                errors.append(exc)

    threads = [threading.Thread(target=claim, args=(rp,))
               for rp in (rp_a, rp_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    found = invariants.check(db)
    assert found.violations() == {}
    assert found.allocated == {consumer}
    with db.engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT COUNT(*) FROM allocations")).scalar()
    assert rows == 1
