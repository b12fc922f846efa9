"""Holistic groups end to end: the real ``gantt-scheduler`` on RabbitMQ,
once on MariaDB and once on PostgreSQL. A group is reserved whole, built
member by member (one build failing and re-claimed on an alternate that
keeps the group apart), extended, and a reservation left to expire; the
``gantt group-plan`` console script plans one from a file."""

import os
import subprocess
import sys
import uuid

import pytest
import yaml

from gantt import exception
from gantt.objects import group as group_obj
from gantt.objects import request_spec
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import waiting

RACKS = ("r1", "r2", "r3", "r4")
GANTT = os.path.join(os.path.dirname(sys.executable), "gantt")


@pytest.fixture
def fleet(daemon_factory, server_db):
    """Eight hosts, two per rack, four racks in one row; every worker
    sweeps expired reservations each second."""
    d = daemon_factory(server_db.url, extra=(
        "service_down_time = 3600\n[group_scheduling]\nsweep_interval = 1"))
    d.database = server_db.db
    for i in range(8):
        d.client.update_resource_stats(None, f.compute_node_obj(
            "g%02d" % i, vcpus=8, memory_mb=16384,
            location="row=a/rack=%s" % RACKS[i // 2]))
    d.wait_for_hosts(8)
    return d


def rack_of(host):
    return RACKS[int(host[1:]) // 2]


def group_request(group, count, ttl=600):
    return group_obj.GroupRequest(
        group_uuid=group, project_id="p", user_id="u",
        policies=[request_spec.GroupLevelPolicy(level="rack",
                                                rule="anti-affinity")],
        members=[group_obj.GroupMember(
            name="db", count=count,
            request_spec=f.request(f.flavor(vcpus=2, memory_mb=2048,
                                            root_gb=10)))],
        reservation_ttl=ttl)


def member_spec(group, slot):
    return f.request(f.flavor(vcpus=2, memory_mb=2048, root_gb=10),
                     group_slot=group_obj.GroupSlotRef(group_uuid=group,
                                                       slot=slot))


def holders(daemon):
    return set(invariants.allocations(daemon.database))


def test_reserve_build_fail_over_extend_and_expire(fleet):
    group = str(uuid.uuid4())
    plan = fleet.client.reserve_group(None, group_request(group, 3))
    hosts = [s.selections[0].service_host for s in plan.slots]
    assert plan.reserved and len({rack_of(h) for h in hosts}) == 3
    assert holders(fleet) == {s.reservation_uuid for s in plan.slots}

    # members are built one by one, each into its slot: no new decision
    built = {}
    for slot in plan.slots:
        [vm] = f.uuids(1)
        [[claimed, *alternates]] = fleet.client.select_destinations(
            None, member_spec(group, slot.slot), [vm])
        assert claimed.service_host == slot.selections[0].service_host
        built[vm] = (claimed, alternates)
    assert holders(fleet) == set(built)

    # one build fails: its alternates keep the group one per rack
    vm, (failed, alternates) = next(iter(built.items()))
    moved = fleet.client.reclaim(None, vm, failed, alternates)
    others = {rack_of(c.service_host) for v, (c, _) in built.items()
              if v != vm}
    assert moved.service_host != failed.service_host
    assert rack_of(moved.service_host) not in others

    # one more member: the fourth rack, the others held where they are
    more = fleet.client.extend_group(None, group_request(group, 1))
    [slot] = more.slots
    assert slot.slot == 3
    assert rack_of(slot.selections[0].service_host) not in others | {
        rack_of(moved.service_host)}
    with pytest.raises(exception.NoValidHost):
        fleet.client.extend_group(None, group_request(group, 1))

    # released: the unbuilt slot only
    assert fleet.client.release_group(None, group) == 1
    assert holders(fleet) == set(built)
    assert invariants.check(fleet.database).violations() == {}


def test_an_unbuilt_reservation_expires(fleet):
    group = str(uuid.uuid4())
    plan = fleet.client.reserve_group(None, group_request(group, 2, ttl=1))
    assert holders(fleet) == {s.reservation_uuid for s in plan.slots}
    waiting.until("the reservation's expiry",
                  lambda: holders(fleet) == set(), log=fleet.log)
    # its member, built late, is placed anew and still keeps the group
    [vm] = f.uuids(1)
    [[claimed, *_]] = fleet.client.select_destinations(
        None, member_spec(group, 0), [vm])
    assert holders(fleet) == {vm} and claimed.claimed


def test_group_plan_from_a_file(fleet, tmp_path):
    path = tmp_path / "group.yaml"
    path.write_text(yaml.safe_dump({
        "group": str(uuid.uuid4()),
        "policies": [{"level": "rack", "rule": "anti-affinity"}],
        "members": [{"name": "db", "count": 4,
                     "spec": {"flavor": {"vcpus": 2, "memory_mb": 2048}}}]}))
    done = subprocess.run([GANTT, "--config-file", fleet.conf_file,
                           "group-plan", str(path)],
                          capture_output=True, text=True, timeout=waiting.CALL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry run, nothing claimed" in done.stdout
    assert len({rack_of(line.split()[2]) for line in
                done.stdout.splitlines() if " db " in line}) == 4
    assert holders(fleet) == set()
    done = subprocess.run([GANTT, "--config-file", fleet.conf_file,
                           "group-plan", str(path), "--reserve"],
                          capture_output=True, text=True, timeout=waiting.CALL)
    assert "RESERVED until" in done.stdout, done.stdout + done.stderr
    assert len(holders(fleet)) == 4
