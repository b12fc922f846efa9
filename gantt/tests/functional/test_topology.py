"""Failure domains end to end: a real ``gantt-scheduler`` over RabbitMQ,
on MariaDB and PostgreSQL, places server groups by rack and by row.

The fleet: rows r0..r2, two racks per row, two hosts per rack; the last
rack's hosts report their row only, and an operator's aggregate (metadata
``topology_level=rack``) says their rack.
"""

import collections
import uuid

import pytest

from gantt import exception
from gantt.db import audit
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import storm
from gantt.tests.functional import waiting

#: host -> (row, rack), as the test knows it (not read back from Gantt)
FLEET = {"h%d" % i: ("r%d" % (i // 4), "r%dk%d" % (i // 4, i // 2 % 2))
         for i in range(12)}
#: the hosts whose rack only the aggregate says
BY_AGGREGATE = ("h10", "h11")


def _report_fleet(daemon, **inventory):
    for host, (row, rack) in FLEET.items():
        where = ("row=%s" % row if host in BY_AGGREGATE
                 else "row=%s/rack=%s" % (row, rack))
        f.cast_report(daemon.client, host, location=where, **inventory)
    daemon.wait_for_hosts(len(FLEET))
    daemon.client.set_aggregate(None, aggregate_obj.Aggregate(
        uuid=str(uuid.uuid4()), name="r2k1", hosts=list(BY_AGGREGATE),
        metadata={"topology_level": "rack"}))
    # every worker has the aggregate (a cast) before anything is placed:
    # ten answers in a row (from any of the workers) say so
    waiting.agreeing("h10 in rack r2k1 by the aggregate",
                     lambda: _location(daemon, "h10") == "row=r2/rack=r2k1",
                     10, log=daemon.log)


def _location(daemon, host):
    return {s.host: s.location
            for s in daemon.client.get_host_states(None)}[host]


def _group(*policies):
    return request_spec.InstanceGroup(
        uuid=str(uuid.uuid4()), policy="soft-affinity", level_policies=[
            request_spec.GroupLevelPolicy(level=level, rule=rule,
                                          limit=limit)
            for level, rule, limit in policies])


def _hosts(lists):
    return [sels[0].service_host for sels in lists]


def test_rack_anti_affinity_and_row_affinity(daemon):
    _report_fleet(daemon)
    states = {s.host: s.location for s in daemon.client.get_host_states(
        None)}
    assert states["h0"] == "row=r0/rack=r0k0"
    assert states["h10"] == "row=r2/rack=r2k1"      # report + aggregate

    apart = _group(("rack", "anti-affinity", 1))
    placed = _hosts(daemon.client.select_destinations(
        None, f.request(instance_group=apart, num_instances=6), f.uuids(6)))
    assert sorted(FLEET[h][1] for h in placed) == sorted(
        {rack for _row, rack in FLEET.values()})
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(
            None, f.request(instance_group=apart), f.uuids(1))
    assert ("ruled out by anti-affinity at rack: 6 member(s) already on "
            "the 6 rack(s) that fit") in str(err.value)

    together = _group(("row", "affinity", 1))
    placed = []
    for _ in range(4):        # one at a time: the first one picks the row
        placed += _hosts(daemon.client.select_destinations(
            None, f.request(instance_group=together), f.uuids(1)))
    assert len({FLEET[h][0] for h in placed}) == 1, placed
    with daemon.database.engine.connect() as conn:
        assert audit.level_breaches(conn) == []


def test_an_unknown_level_is_refused_on_both_sides(daemon):
    _report_fleet(daemon)
    with pytest.raises(exception.UnknownLevel):
        daemon.client.select_destinations(
            None, f.request(instance_group=_group(
                ("shelf", "anti-affinity", 1))), f.uuids(1))
    with pytest.raises(exception.InvalidLocation):
        daemon.client.report_resource_stats(
            None, f.compute_node_obj("h99", location="shelf=s1"))
    assert "h99" not in {s.host for s in daemon.client.get_host_states(
        None)}


def test_zone_is_the_availability_zone(daemon):
    """Anti-affinity at zone, zone not among the configured levels: the
    hosts' reported availability zones are the domains; a location
    naming a zone is refused."""
    zones = {"z0": "az1", "z1": "az1", "z2": "az2"}
    for host, zone in zones.items():
        f.cast_report(daemon.client, host, zone=zone)
    daemon.wait_for_hosts(len(zones))
    apart = _group(("zone", "anti-affinity", 1))
    placed = _hosts(daemon.client.select_destinations(
        None, f.request(instance_group=apart, num_instances=2), f.uuids(2)))
    assert sorted(zones[h] for h in placed) == ["az1", "az2"]
    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(
            None, f.request(instance_group=apart), f.uuids(1))
    assert "anti-affinity at zone" in str(err.value)
    with pytest.raises(exception.InvalidLocation):
        daemon.client.report_resource_stats(
            None, f.compute_node_obj("z9", location="zone=az1"))
    with daemon.database.engine.connect() as conn:
        assert audit.level_breaches(conn) == []


def test_claim_storm_with_rack_level_groups(daemon_factory, server_db):
    """Two workers, sixteen callers: four rack-anti-affine groups of ten
    members each, one member per call, on six racks. Each group gets
    exactly six members, one per rack; the others get NoValidHost."""
    daemon = daemon_factory(server_db.url, workers=2)
    _report_fleet(daemon, vcpus=64, memory_mb=10 ** 6, disk_gb=10 ** 5)
    groups = [_group(("rack", "anti-affinity", 1)) for _ in range(4)]
    requests = [(f.request(instance_group=g), f.uuids(1))
                for _ in range(10) for g in groups]

    outcome, _ = storm.run(daemon.client, requests, threads=16)

    found = invariants.check(server_db.db)
    assert found.violations() == {}
    assert found.allocated == set(outcome.placed)
    group_of = {uuids[0]: spec.instance_group.uuid
                for spec, uuids in requests}
    racks = collections.defaultdict(list)
    for consumer, host in outcome.placed.items():
        racks[group_of[consumer]].append(FLEET[host][1])
    assert sorted(len(r) for r in racks.values()) == [6, 6, 6, 6]
    assert all(len(set(r)) == len(r) for r in racks.values()), racks
    assert len(outcome.no_valid_host) == 40 - 24
