"""The daemon, end to end: agents cast, conductors call, the DB is the truth.

Each test runs against a real ``gantt-scheduler`` process on the real
RabbitMQ, once with MariaDB and once with PostgreSQL.
"""

import threading
import time
import uuid

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import rpcapi
from gantt.objects import request_spec
from gantt.objects import usage as usage_obj
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import waiting

CELL_A = str(uuid.UUID(int=0xA))
CELL_B = str(uuid.UUID(int=0xB))


def _report_fleet(daemon, count=12, cells=(CELL_A, CELL_B), **kwargs):
    nodes = [f.compute_node_obj("host%02d" % i,
                                cell_uuid=cells[i % len(cells)],
                                zone="az1", **kwargs)
             for i in range(count)]
    for node in nodes:
        daemon.client.update_resource_stats(None, node)
    daemon.wait_for_hosts(count)
    return nodes


def test_place_with_anti_affinity_reclaim_and_release(daemon):
    _report_fleet(daemon)
    flavor = f.flavor(vcpus=2, memory_mb=4096, root_gb=40)
    group = request_spec.InstanceGroup(uuid=str(uuid.uuid4()),
                                       policy="anti-affinity")
    uuids = f.uuids(5)
    spec = f.request(flavor, instance_group=group, num_instances=5)

    lists = daemon.client.select_destinations(None, spec, uuids)

    # one list per instance: claimed first, then alternates of its cell
    assert [sels[0].consumer_uuid for sels in lists] == uuids
    claimed_hosts = [sels[0].service_host for sels in lists]
    assert len(set(claimed_hosts)) == 5, claimed_hosts
    for sels in lists:
        assert sels[0].claimed and not any(s.claimed for s in sels[1:])
        assert 1 <= len(sels) <= 3          # max_attempts = 3
        assert {s.cell_uuid for s in sels} == {sels[0].cell_uuid}
    # the database holds exactly these claims
    expected = {sels[0].consumer_uuid: {
        (sels[0].compute_node_uuid, "VCPU"): 2,
        (sels[0].compute_node_uuid, "MEMORY_MB"): 4096,
        (sels[0].compute_node_uuid, "DISK_GB"): 40} for sels in lists}
    assert invariants.allocations(daemon.database) == expected

    # the build on the first host fails: the cell conductor re-claims
    failed = lists[0]
    moved = daemon.client.reclaim(None, failed[0].consumer_uuid, failed[0],
                                  failed[1:])
    assert moved.claimed
    assert moved.service_host != failed[0].service_host
    assert moved.service_host not in claimed_hosts   # anti-affinity holds
    allocs = invariants.allocations(daemon.database)[failed[0].consumer_uuid]
    assert {rp for rp, _rc in allocs} == {moved.compute_node_uuid}

    # release frees everything, and twice is harmless
    for sels in lists:
        assert daemon.client.release(None, sels[0].consumer_uuid) is True
    assert daemon.client.release(None, uuids[0]) is False
    assert invariants.allocations(daemon.database) == {}


def test_reclaim_exhausted_leaves_nothing_allocated(daemon):
    _report_fleet(daemon, count=2, cells=(CELL_A,), memory_mb=8192)
    uuids = f.uuids(1)
    big = f.flavor(memory_mb=8192, vcpus=1, root_gb=1)
    [sels] = daemon.client.select_destinations(None, f.request(big), uuids)
    # someone else takes the only alternate before the reclaim
    daemon.client.select_destinations(
        None, f.request(big, force_hosts=[sels[1].service_host]), f.uuids(1))
    with pytest.raises(exception.MaxRetriesExceeded):
        daemon.client.reclaim(None, uuids[0], sels[0], sels[1:])
    assert uuids[0] not in invariants.allocations(daemon.database)


def test_no_valid_host_explains_itself(daemon):
    _report_fleet(daemon, count=6, memory_mb=8192)
    spec = f.request(f.flavor(memory_mb=16384), availability_zone="az1")
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(None, spec, f.uuids(1))
    assert "0 of 6 hosts available: 6 lacked MEMORY_MB" in str(err.value)
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(
            None, f.request(availability_zone="nowhere"), f.uuids(1))
    assert "6 AvailabilityZoneFilter" in str(err.value)
    stats = daemon.client.get_statistics(None)
    assert stats.no_valid_host == 2
    assert stats.filter_eliminations["lacked MEMORY_MB"] == 6


def test_multi_instance_request_is_all_or_nothing(daemon):
    _report_fleet(daemon, count=3, memory_mb=8192)
    spec = f.request(f.flavor(memory_mb=8192, root_gb=1), num_instances=4)
    with pytest.raises(exception.NoValidHost):
        daemon.client.select_destinations(None, spec, f.uuids(4))
    assert invariants.allocations(daemon.database) == {}
    lists = daemon.client.select_destinations(
        None, f.request(f.flavor(memory_mb=8192, root_gb=1),
                        num_instances=3), f.uuids(3))
    assert len({s[0].service_host for s in lists}) == 3


def test_retried_call_replaces_the_claim(daemon):
    _report_fleet(daemon, count=4)
    uuids = f.uuids(1)
    spec = f.request(f.flavor(vcpus=4, memory_mb=1024, root_gb=10))
    daemon.client.select_destinations(None, spec, uuids)
    daemon.client.select_destinations(None, spec, uuids)
    allocs = invariants.allocations(daemon.database)
    assert list(allocs) == uuids
    assert sorted(allocs[uuids[0]].values()) == [4, 10, 1024]


def test_stale_report_is_ignored_everywhere(daemon):
    node = f.compute_node_obj("solo", memory_mb=4096, sequence=1000)
    daemon.client.update_resource_stats(None, node)
    daemon.wait_for_hosts(1)
    stale = f.compute_node_obj("solo", memory_mb=999999, sequence=999)
    daemon.client.update_resource_stats(None, stale)
    newer = f.compute_node_obj("solo", memory_mb=8192, sequence=1001)
    daemon.client.update_resource_stats(None, newer)
    [state] = waiting.until("the report of sequence 1001 held", lambda: [
        s for s in daemon.client.get_host_states(None)
        if s.report_sequence == 1001], log=daemon.log)
    mem = {r.resource_class: r.total for r in state.resources}["MEMORY_MB"]
    assert (state.report_sequence, mem) == (1001, 8192)
    with daemon.database.engine.connect() as conn:
        stored = conn.execute(sa.text(
            "SELECT total FROM inventories WHERE resource_class = "
            "'MEMORY_MB'")).scalar()
    assert stored == 8192


def test_bad_messages_get_typed_errors_and_the_daemon_keeps_serving(daemon):
    _report_fleet(daemon, count=2)
    client = daemon.client
    # a call for an RPC version this server does not have
    future = messaging.get_rpc_client(
        daemon.transport, messaging.Target(
            exchange=rpcapi.EXCHANGE, topic=daemon.topic, version="1.99"))
    with pytest.raises(exception.InvalidRequest) as err:
        future.call({}, "select_destinations", request_spec={},
                    instance_uuids=[])
    assert "1.99" in str(err.value)
    # a call whose request spec is a plain dict, not a RequestSpec object
    raw = messaging.get_rpc_client(
        daemon.transport, messaging.Target(
            exchange=rpcapi.EXCHANGE, topic=daemon.topic, version="1.0"))
    with pytest.raises(exception.InvalidRequest) as err:
        raw.call({}, "select_destinations", request_spec={"flavor": 1},
                 instance_uuids=["x"])
    assert "RequestSpec" in str(err.value)
    # an object of an unknown newer version
    node = f.compute_node_obj("future").obj_to_primitive()
    node["gantt_object.version"] = "1.99"
    with pytest.raises(exception.InvalidRequest):
        raw.call({}, "update_resource_stats", compute_node=node)
    # casts have no caller: they are dropped and counted
    fanout = raw.prepare(fanout=True)
    fanout.cast({}, "update_resource_stats", compute_node={"uuid": "nope"})
    fanout.cast({}, "update_resource_stats", compute_node=node)
    bad = f.compute_node_obj("bad", reserved_memory_mb=10 ** 9)
    client.update_resource_stats(None, bad)
    stats = waiting.until("6 messages rejected", lambda: waiting.when(
        client.get_statistics(None), lambda s: s.messages_rejected >= 6),
        log=daemon.log)
    assert stats.messages_rejected == 6
    # nothing was stored from the bad ones, and the daemon still places
    assert {s.host for s in client.get_host_states(None)} == {
        "host00", "host01"}
    assert client.select_destinations(None, f.request(), f.uuids(1))
    assert "Rejected update_resource_stats message" in daemon.log()


def test_sigterm_finishes_in_flight_calls(daemon):
    _report_fleet(daemon, count=10, vcpus=1000, memory_mb=10 ** 6)
    results = []
    uuids = f.uuids(150)
    caller = threading.Thread(target=lambda: results.append(
        daemon.client.select_destinations(
            None, f.request(num_instances=150), uuids)))
    caller.start()
    # wait until the request is being claimed, then ask the daemon to stop
    waiting.until("the request's first claim",
                  lambda: invariants.allocations(daemon.database),
                  log=daemon.log, interval=0.005)
    code = daemon.stop()
    caller.join(waiting.WAIT)
    assert code == 0
    assert "Worker stopped" in daemon.log()
    # the in-flight call was finished and answered, not cut short
    assert len(results) == 1 and len(results[0]) == 150
    assert set(invariants.allocations(daemon.database)) == set(uuids)


def _used(client, resource_class="VCPU"):
    [state] = client.get_host_states(None)
    return state.generation, {
        r.resource_class: r.used for r in state.resources}[resource_class]


def _wait_used(client, expected):
    """Until the host's (generation, VCPU used) is ``expected``."""
    waiting.until("(generation, VCPU used) %r" % (expected,),
                  lambda: _used(client) == expected, interval=0.05)


def test_a_worker_skips_its_own_usage_casts_and_applies_its_peers(daemon):
    [node] = _report_fleet(daemon, count=1)
    generation, used = _used(daemon.client)
    assert used == 0
    worker = daemon.client.get_statistics(None).worker

    def usage(gen, vcpus):
        return usage_obj.ProviderUsage(
            resource_provider_uuid=node.uuid, generation=gen,
            usages={"VCPU": vcpus}, changed_at=time.time())

    # a cast naming this worker as its sender is its own claim coming back
    # (its cache has it already): dropped unread. Were it applied, its newer
    # generation would make the worker ignore the next one.
    daemon.client.provider_usage_changed(None, [usage(generation + 10, 5)],
                                         sender=worker)
    daemon.client.provider_usage_changed(None, [usage(generation + 5, 3)],
                                         sender="elsewhere:1")
    _wait_used(daemon.client, (generation + 5, 3))
    # an older worker's cast names no sender: applied as before
    daemon.client.provider_usage_changed(None, [usage(generation + 6, 4)])
    _wait_used(daemon.client, (generation + 6, 4))


def test_a_claim_reaches_the_other_workers_cache(daemon_factory, server_db):
    daemon = daemon_factory(server_db.url, workers=2)
    _report_fleet(daemon, count=1)
    spec = f.request(f.flavor(vcpus=2, memory_mb=1024, root_gb=10))
    [[placed]] = daemon.client.select_destinations(None, spec, f.uuids(1))
    assert placed.claimed
    # each call is answered by one worker: ask until both have the claim
    seen = waiting.every_worker(
        "the claim placed or heard of",
        lambda: daemon.client.get_statistics(None),
        lambda s: s.placements + s.peer_updates >= 1, 2, log=daemon.log)
    placer = [s for s in seen.values() if s.placements == 1]
    other = [s for s in seen.values() if s.placements == 0]
    assert len(placer) == len(other) == 1
    # the claim came to the other worker by broadcast; the placer had it
    assert (placer[0].peer_updates, other[0].peer_updates) == (0, 1)
