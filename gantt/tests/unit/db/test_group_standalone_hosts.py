"""Server groups over standalone providers, in the claim itself (SQLite,
MariaDB, PostgreSQL): the bindings of an HA router are a group's members,
and no claim puts two of them on one agent, whatever chose the agents;
a sharing pool is never a host, whatever its kind."""

import pytest

from gantt import exception
from gantt.db import allocations
from gantt.db import reports
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories

A1 = factories.host_uuid("agent-1")
A2 = factories.host_uuid("agent-2")
H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
POOL = factories.host_uuid("pool")
GROUP = "7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
ROUTER = "CUSTOM_L3_ROUTER"


def _standalone(db, uuid, name, kind, inventory, traits=()):
    reports.save_provider(db, provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=uuid, name=name, traits=list(traits), inventories=[
                compute_node.Inventory(resource_class=rc, total=total)
                for rc, total in inventory.items()]),
        report_sequence=1, kind=kind))


@pytest.fixture
def db(any_db):
    """Two L3 agents (kind network), two compute nodes, and a volume
    pool of kind ``volume`` shared through an aggregate."""
    for uuid, name in ((A1, "agent-1"), (A2, "agent-2")):
        _standalone(any_db, uuid, name, "network", {ROUTER: 100})
    for name in ("h1", "h2"):
        reports.save_report(any_db, factories.compute_node_obj(name))
    _standalone(any_db, POOL, "pool", "volume", {"DISK_GB": 1000},
                traits=["MISC_SHARES_VIA_AGGREGATE"])
    return any_db


def _claim(db, placements, policy="anti-affinity"):
    group = allocations.GroupClaim(GROUP, policy)
    allocations.ensure_group(db, group)
    with db.begin() as conn:
        return allocations.claim_new(conn, [
            allocations.NewClaim(consumer, allocation)
            for consumer, allocation in zip(
                factories.uuids(len(placements)), placements,
                strict=True)], group=group)


def _group_hosts(db):
    with db.begin() as conn:
        return allocations.group_hosts(conn, GROUP)


def test_two_bindings_on_one_agent_are_refused_in_the_claim(db):
    with pytest.raises(exception.GroupPolicyViolation):
        _claim(db, [{A1: {ROUTER: 1}}, {A1: {ROUTER: 1}}])
    assert _group_hosts(db) == {}


def test_bindings_on_distinct_agents_are_members_by_agent_name(db):
    _claim(db, [{A1: {ROUTER: 1}}, {A2: {ROUTER: 1}}])
    assert _group_hosts(db) == {"agent-1": 1, "agent-2": 1}
    # a binding added later (an agent replaced) finds both taken
    for agent in (A1, A2):
        with pytest.raises(exception.GroupPolicyViolation):
            _claim(db, [{agent: {ROUTER: 1}}])


def test_hosts_of_consumers_names_agents_and_compute_hosts(db):
    binding, instance = factories.uuids(2)
    with db.begin() as conn:
        allocations.claim_new(conn, [
            allocations.NewClaim(binding, {A2: {ROUTER: 1}}),
            allocations.NewClaim(instance, {H1: {"VCPU": 1},
                                            POOL: {"DISK_GB": 10}})])
        assert allocations.hosts_of_consumers(conn, [binding, instance]) \
            == {"agent-2", "h1"}


@pytest.mark.parametrize("policy, hosts", [
    ("anti-affinity", (H1, H2)),
    ("affinity", (H1, H1)),
])
def test_a_sharing_pool_of_a_kind_is_no_host(db, policy, hosts):
    """Instances of a group on their compute nodes, their disk from one
    shared pool: the pool (of kind volume) breaks neither policy."""
    _claim(db, [{host: {"VCPU": 1}, POOL: {"DISK_GB": 10}}
                for host in hosts], policy=policy)
    assert _group_hosts(db) == {
        "h1": hosts.count(H1), **({"h2": 1} if H2 in hosts else {})}
