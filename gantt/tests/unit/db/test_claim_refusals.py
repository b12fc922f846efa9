"""Refused claims: the reason given, word for word, and a new consumer's
claim refused by its group.

The scheduler reports the reason to the caller and logs it; operators
read it to know why a host that looked free was refused. (Written to
kill mutants: see doc/source/contributor/mutation.rst.)
"""

import pytest

from gantt import exception
from gantt.db import allocations
from gantt.db import reports
from gantt.objects import compute_node
from gantt.tests import factories

H1 = factories.host_uuid("h1")
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


@pytest.fixture
def db(sqlite_db):
    reports.save_report(sqlite_db, factories.compute_node_obj(
        "h1", vcpus=8, extra_inventories=[compute_node.Inventory(
            resource_class="CUSTOM_GPU", total=8, reserved=2, min_unit=2,
            max_unit=4, step_size=2, allocation_ratio=1.0)]))
    return sqlite_db


@pytest.mark.parametrize("rc, amount, reason", [
    ("VCPU", 9, "0 used of capacity 8"),
    ("CUSTOM_GPU", 6, "outside [2, 4]"),
    ("CUSTOM_GPU", 3, "not a multiple of step size 2"),
    ("VGPU", 1, "no inventory of that class"),
])
def test_the_reason_of_a_refused_claim(db, rc, amount, reason):
    with pytest.raises(exception.CapacityExceeded) as raised:
        with db.begin() as conn:
            allocations.claim(conn, VM1, {H1: {rc: amount}})
    assert str(raised.value) == (
        "Provider %s cannot supply %d %s to consumer %s: %s"
        % (H1, amount, rc, VM1, reason))


def test_a_new_consumers_claim_keeps_its_group_policy(db):
    # claim(new=True), the scheduler's first claim of an instance, counts
    # the group's members as the other claims do
    reports.save_report(db, factories.compute_node_obj("h2", vcpus=8))
    group = allocations.GroupClaim(GROUP, "anti-affinity")
    allocations.ensure_group(db, group)
    with db.begin() as conn:
        allocations.claim(conn, VM1, {H1: {"VCPU": 1}}, group=group,
                          new=True)
    with pytest.raises(exception.GroupPolicyViolation):
        with db.begin() as conn:
            allocations.claim(conn, VM2, {H1: {"VCPU": 1}}, group=group,
                              new=True)
    with db.begin() as conn:
        allocations.claim(conn, VM2, {factories.host_uuid("h2"): {
            "VCPU": 1}}, group=group, new=True)
        assert allocations.consumer_info(conn, VM2).group == group
