"""Hard policies per level in the claim (gantt.db.domains), on SQLite,
MariaDB and PostgreSQL: the claim counts a group's members per rack, row…
from the hosts' stored locations and topology aggregates."""

import pytest

from gantt import exception
from gantt.db import aggregates
from gantt.db import allocations
from gantt.db import audit
from gantt.db import domains
from gantt.db import models
from gantt.db import reports
from gantt.objects import aggregate as aggregate_obj
from gantt.tests import factories
from gantt.tests.unit.db import test_moves

GROUP = "7d3c1b2a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
VM1, VM2, VM3, VM4 = factories.uuids(4)
GROUPS = models.InstanceGroup.__table__
#: host -> reported location (h5's rack comes from an aggregate)
FLEET = {"h1": "row=a/rack=a01", "h2": "row=a/rack=a01",
         "h3": "row=a/rack=a02", "h4": "row=b/rack=b01", "h5": "row=b",
         "h6": None}
H = {name: factories.host_uuid(name) for name in FLEET}


@pytest.fixture
def db(any_db):
    return _fleet(any_db)


@pytest.fixture
def sdb(server_db):
    return _fleet(server_db)


def _fleet(db):
    for name, location in FLEET.items():
        reports.save_report(db, factories.compute_node_obj(
            name, vcpus=8, location=location))
    aggregates.save(db, aggregate_obj.Aggregate(
        uuid=factories.host_uuid("agg-b02"), name="b02", hosts=["h5"],
        metadata={domains.AGGREGATE_KEY: "rack"}))
    return db


def _group(*levels):
    return allocations.GroupClaim(GROUP, "soft-affinity", 1, tuple(
        domains.LevelRule(*policy) for policy in levels))


def _claim(db, consumer, host, group):
    allocations.ensure_group(db, group)
    with db.begin() as conn:
        return allocations.claim(conn, consumer, {H[host]: {"VCPU": 1}},
                                 group=group, new=True)


def _refused(db, consumer, host, group):
    with pytest.raises(exception.GroupPolicyViolation) as err:
        _claim(db, consumer, host, group)
    return str(err.value)


def test_rack_anti_affinity_refuses_a_second_member_in_a_rack(db):
    group = _group(("rack", "anti-affinity"))
    _claim(db, VM1, "h1", group)
    assert _refused(db, VM2, "h2", group) == (
        "Placing consumer %s on rack a01 would break the anti-affinity at "
        "rack policy of server group %s" % (VM2, GROUP))
    _claim(db, VM2, "h3", group)
    _claim(db, VM3, "h4", group)


def test_a_rack_from_an_aggregate_counts_as_the_report_would(db):
    group = _group(("rack", "anti-affinity"))
    _claim(db, VM1, "h5", group)                 # rack b02, by aggregate
    _claim(db, VM2, "h4", group)                 # rack b01, reported
    # h5 again: its rack holds a member, whatever said so
    assert "rack b02" in _refused(db, VM3, "h5", group)


def test_a_host_without_a_domain_at_the_level_is_refused(db):
    group = _group(("rack", "anti-affinity"))
    assert "rack unknown" in _refused(db, VM1, "h6", group)


def test_row_affinity_keeps_every_member_in_the_first_members_row(db):
    group = _group(("row", "affinity"))
    _claim(db, VM1, "h1", group)
    _claim(db, VM2, "h3", group)                 # row a too
    assert "row b" in _refused(db, VM3, "h4", group)


def test_max_per_rack(db):
    group = _group(("rack", "max-per", 2))
    _claim(db, VM1, "h1", group)
    _claim(db, VM2, "h2", group)
    assert "max-per 2 at rack" in _refused(db, VM3, "h1", group)


def test_spread_over_racks_keeps_the_skew_within_its_limit(db):
    """Four racks (a01, a02, b01, b02): with max skew 1, a second member
    in a rack waits until every rack has one."""
    group = _group(("rack", "spread", 1))
    _claim(db, VM1, "h1", group)
    assert "spread 1 at rack" in _refused(db, VM2, "h2", group)
    for vm, host in ((VM2, "h3"), (VM3, "h4"), (VM4, "h5")):
        _claim(db, vm, host, group)
    _claim(db, factories.uuids(5)[4], "h2", group)    # a01 again: 2 - 1


def test_a_batch_counts_its_own_members(db):
    group = _group(("rack", "anti-affinity"))
    allocations.ensure_group(db, group)
    with pytest.raises(exception.GroupPolicyViolation):
        with db.begin() as conn:
            allocations.claim_new(conn, [
                allocations.NewClaim(VM1, {H["h1"]: {"VCPU": 1}}),
                allocations.NewClaim(VM2, {H["h2"]: {"VCPU": 1}})],
                group=group)


def test_the_group_row_keeps_its_level_policies_for_the_audit(db):
    group = _group(("rack", "anti-affinity"), ("row", "max-per", 3))
    _claim(db, VM1, "h1", group)
    with db.begin() as conn:
        info = allocations.consumer_info(conn, VM1)
    assert info.group.levels == group.levels


def test_two_workers_cannot_both_put_a_member_in_one_rack(sdb, monkeypatch):
    """VM1's claim reads the group (no member) and pauses before checking;
    VM2 is claimed on h2, in the same rack, and commits. VM1's claim must
    lose on the group's generation; claimed again, it is refused: exactly
    one member in rack a01."""
    group = _group(("rack", "anti-affinity"))
    allocations.ensure_group(sdb, group)
    paused = test_moves.Paused(monkeypatch, domains, "check").start(
        lambda: _claim(sdb, VM1, "h1", group))
    _claim(sdb, VM2, "h2", group)
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), outcome
    assert "group %s" % GROUP in str(outcome["error"])
    assert "rack a01" in _refused(sdb, VM1, "h1", group)
    with sdb.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == {"h2": 1}


@pytest.mark.parametrize("policy, before, members", [
    # rack a01 holds one member: h1 and h2 race for its last place
    (("rack", "max-per", 2), ((VM3, "h2"),), {"h2": 2}),
    # four empty racks, skew 1: h1 and h2 race for rack a01's first place
    (("rack", "spread", 1), (), {"h2": 1}),
])
def test_two_workers_cannot_both_take_a_racks_last_place(
        sdb, monkeypatch, policy, before, members):
    """VM1's claim on h1 reads the group and pauses before checking; VM2
    takes rack a01's last place on h2 and commits. VM1's claim loses on
    the group's generation; claimed again, it is refused."""
    group = _group(policy)
    for vm, host in before:
        _claim(sdb, vm, host, group)
    paused = test_moves.Paused(monkeypatch, domains, "check").start(
        lambda: _claim(sdb, VM1, "h1", group))
    _claim(sdb, VM2, "h2", group)
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), outcome
    assert "break the %s policy" % (domains.LevelRule(*policy),) in _refused(
        sdb, VM1, "h1", group)
    with sdb.begin() as conn:
        assert allocations.group_hosts(conn, GROUP) == members


# -- the audit ----------------------------------------------------------------


def test_the_audit_finds_no_breach_where_every_claim_kept_the_policy(db):
    group = _group(("rack", "anti-affinity"), ("row", "max-per", 2))
    for vm, host in ((VM1, "h1"), (VM2, "h4"), (VM3, "h3")):
        _claim(db, vm, host, group)
    with db.begin() as conn:
        assert audit.level_breaches(conn) == []


def test_the_audit_names_the_policy_and_the_domains_a_group_breaks(db):
    """Members placed before the group had its policies (here: written
    behind the claim's back) show up, per level."""
    _claim(db, VM1, "h1", _group())
    _claim(db, VM2, "h2", _group())
    with db.begin() as conn:
        conn.execute(GROUPS.update().values(level_policies=domains.dumps(
            [domains.LevelRule("rack", "anti-affinity"),
             domains.LevelRule("row", "max-per", 2)])))
        assert audit.level_breaches(conn) == [audit.Breach(
            GROUP, "anti-affinity at rack", {"a01": 2})]
