"""Moves of server-group members: the instance does not stand in its own
way (Nova's ServerGroupAntiAffinityFilter passes the host the moving
instance is on)."""

import uuid

import pytest

from gantt import exception
from gantt.objects import request_spec
from gantt.tests import factories

GROUP = "5e2a8c6d-1f3b-4a7e-9c0d-2b4f6a8e0c1d"


def _member_spec(policy="anti-affinity", vcpus=1, **fields):
    return factories.request(
        factories.flavor(vcpus=vcpus, memory_mb=1024, root_gb=10),
        instance_group=request_spec.InstanceGroup(uuid=GROUP, policy=policy),
        **fields)


def _two_members(scheduler):
    """Member A on h1, member B on h2: no third host."""
    for name in ("h1", "h2"):
        scheduler.stats.update_resource_stats(factories.compute_node_obj(name))
    a, b = factories.uuids(2)
    placed = scheduler.placer.select_destinations(_member_spec(), [a, b])
    hosts = {u: sels[0].service_host
             for u, sels in zip((a, b), placed, strict=True)}
    return a, b, hosts


def test_a_member_resizes_on_its_own_host_under_anti_affinity(scheduler):
    a, b, hosts = _two_members(scheduler)
    migration = str(uuid.uuid4())
    # the bigger flavor fits only where A is: B's host is the group's
    placed = scheduler.placer.move_claim(_member_spec(vcpus=2), a, migration)
    assert placed[0].service_host == hosts[a]
    assert [s.service_host for s in placed[1:]] == []
    # a retry of the same move finds the same answer
    again = scheduler.placer.move_claim(_member_spec(vcpus=2), a, migration)
    assert again[0].service_host == hosts[a]


def test_another_member_s_host_is_still_refused(scheduler):
    a, b, hosts = _two_members(scheduler)
    # A may stay, never join B
    with pytest.raises(exception.NoValidHost,
                       match="1 ServerGroupAntiAffinityFilter"):
        scheduler.placer.move_claim(
            _member_spec(ignore_hosts=[hosts[a]]), a, str(uuid.uuid4()))
