"""Hard policies per level over providers that are not compute nodes, in
the claim itself (SQLite, MariaDB, PostgreSQL): an HA router's bindings
on L3 agents (kind ``network``) and a service's volumes on volume
backends (kind ``volume``) are kept apart by rack as instances are, the
racks coming from the providers' own reports or from topology
aggregates."""

import pytest

from gantt import exception
from gantt.db import aggregates
from gantt.db import allocations
from gantt.db import audit
from gantt.db import domains
from gantt.db import models
from gantt.db import reports
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories
from gantt.tests.unit.db import test_domain_claims
from gantt.tests.unit.db import test_moves

GROUP = test_domain_claims.GROUP
_group = test_domain_claims._group
ROUTER = "CUSTOM_L3_ROUTER"
RACK_B01 = factories.host_uuid("agg-b01")
#: provider -> (kind, reported location); node-4 is the L3 agent of
#: compute host node-4 (named as it), whose rack comes from an aggregate
#: listing that host; agent-5's from an aggregate it reports to be in
FLEET = {"agent-1": ("network", "row=a/rack=a01"),
         "agent-2": ("network", "row=a/rack=a01"),
         "agent-3": ("network", "row=a/rack=a02"),
         "node-4": ("network", "row=b"),
         "agent-5": ("network", None),
         "backend-1": ("volume", "rack=a01"),
         "backend-2": ("volume", "rack=a01"),
         "backend-3": ("volume", "rack=b01")}
#: the availability zones (the domains at level ``zone``)
ZONES = {"agent-1": "az1", "agent-2": "az2", "agent-3": "az1"}
P = {name: factories.host_uuid("provider/" + name) for name in FLEET}
V1, V2, V3, V4 = factories.uuids(4)


def _report(db, name, kind, location):
    resource = ROUTER if kind == "network" else "DISK_GB"
    reports.save_provider(db, provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=P[name], name=name, inventories=[compute_node.Inventory(
                resource_class=resource, total=100)],
            aggregates=[RACK_B01] if name == "agent-5" else []),
        report_sequence=1, kind=kind, location=location,
        availability_zone=ZONES.get(name)))


def _fleet(db):
    for name, (kind, location) in FLEET.items():
        _report(db, name, kind, location)
    reports.save_report(db, factories.compute_node_obj("node-4"))
    aggregates.save(db, aggregate_obj.Aggregate(
        uuid=RACK_B01, name="b01", hosts=["node-4"],
        metadata={domains.AGGREGATE_KEY: "rack"}))
    return db


@pytest.fixture
def db(any_db):
    return _fleet(any_db)


@pytest.fixture
def sdb(server_db):
    return _fleet(server_db)


def _claim(db, consumer, provider, group):
    resource = ROUTER if FLEET[provider][0] == "network" else "DISK_GB"
    allocations.ensure_group(db, group)
    with db.begin() as conn:
        return allocations.claim(conn, consumer, {P[provider]: {
            resource: 1}}, group=group, new=True)


def _refused(db, consumer, provider, group):
    with pytest.raises(exception.GroupPolicyViolation) as err:
        _claim(db, consumer, provider, group)
    return str(err.value)


def _members(db):
    with db.begin() as conn:
        return allocations.group_hosts(conn, GROUP)


def test_rack_anti_affinity_keeps_router_bindings_on_distinct_racks(db):
    group = _group(("rack", "anti-affinity"))
    _claim(db, V1, "agent-1", group)
    assert _refused(db, V2, "agent-2", group) == (
        "Placing consumer %s on rack a01 would break the anti-affinity at "
        "rack policy of server group %s" % (V2, GROUP))
    _claim(db, V2, "agent-3", group)
    assert _members(db) == {"agent-1": 1, "agent-3": 1}


def test_max_per_rack_over_volume_backends(db):
    group = _group(("rack", "max-per", 2))
    _claim(db, V1, "backend-1", group)
    _claim(db, V2, "backend-2", group)
    assert "max-per 2 at rack" in _refused(db, V3, "backend-1", group)
    _claim(db, V3, "backend-3", group)
    assert _members(db) == {"backend-1": 1, "backend-2": 1, "backend-3": 1}


def test_an_agents_rack_from_an_aggregate_counts_by_name_or_report(db):
    """Aggregate b01 lists host node-4, whose L3 agent has its name;
    agent-5 reports being in b01: both agents are in rack b01, with
    volume backend-3 (as the worker's cache has it)."""
    group = _group(("rack", "anti-affinity"))
    _claim(db, V1, "node-4", group)
    assert "rack b01" in _refused(db, V2, "agent-5", group)
    assert "rack b01" in _refused(db, V2, "backend-3", group)


def test_zone_anti_affinity_keeps_bindings_in_distinct_availability_zones(
        db):
    group = _group(("zone", "anti-affinity"))
    _claim(db, V1, "agent-1", group)
    assert "zone az1" in _refused(db, V2, "agent-3", group)
    assert "zone unknown" in _refused(db, V2, "agent-5", group)
    _claim(db, V2, "agent-2", group)


def test_spread_counts_the_racks_of_the_candidates_kind(db):
    """Volume backends are in racks a01 and b01 only: with max skew 1,
    the third volume goes to either once both have one, though the
    agents' rack a02 has none (compute hosts and agents elsewhere do not
    hold a volume service's spread back)."""
    group = _group(("rack", "spread", 1))
    _claim(db, V1, "backend-1", group)
    assert "spread 1 at rack" in _refused(db, V2, "backend-2", group)
    _claim(db, V2, "backend-3", group)
    _claim(db, V3, "backend-2", group)
    assert "spread 1 at rack" in _refused(db, V4, "backend-1", group)


def test_the_audit_sees_members_on_agents(db):
    _claim(db, V1, "agent-1", _group())
    _claim(db, V2, "agent-2", _group())
    with db.begin() as conn:
        conn.execute(models.GROUPS.update().values(
            level_policies=domains.dumps(
                [domains.LevelRule("rack", "anti-affinity")])))
        assert audit.level_breaches(conn) == [audit.Breach(
            GROUP, "anti-affinity at rack", {"a01": 2})]


def test_two_workers_cannot_both_bind_a_router_in_one_rack(sdb,
                                                           monkeypatch):
    """V1's claim on agent-1 reads the group and pauses before checking;
    V2 is bound on agent-2, in the same rack, and commits: V1's claim
    loses on the group's generation, then is refused."""
    group = _group(("rack", "anti-affinity"))
    allocations.ensure_group(sdb, group)
    paused = test_moves.Paused(monkeypatch, domains, "check").start(
        lambda: _claim(sdb, V1, "agent-1", group))
    _claim(sdb, V2, "agent-2", group)
    outcome = paused.finish()
    assert isinstance(outcome.get("error"), exception.ClaimConflict), outcome
    assert "rack a01" in _refused(sdb, V1, "agent-1", group)
    assert _members(sdb) == {"agent-2": 1}
