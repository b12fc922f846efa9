"""GroupService and member placement end to end on SQLite: a group
reserved whole, built member by member, extended, released, swept."""

import datetime

import pytest

from gantt import exception
from gantt.db import allocations
from gantt.db import models
from gantt.db import reservations
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import group as group_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.rpcapi import validate
from gantt.scheduler.groups import problem
from gantt.scheduler.groups import service
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h

GROUP = "3e9b1c7d-5a2f-4b8e-9c1d-6f0a2b4c8e13"


def group_request(count=3, policies=(("host", "anti-affinity", 1),),
                  **fields):
    return group_obj.GroupRequest(
        group_uuid=GROUP, project_id="p", user_id="u",
        policies=[request_spec_obj.GroupLevelPolicy(
            level=lv, rule=rule, limit=n) for lv, rule, n in policies],
        members=[group_obj.GroupMember(name="web", count=count,
                                       request_spec=h.make_spec())],
        **fields)


def member_spec(slot):
    return h.make_spec(group_slot=group_obj.GroupSlotRef(
        group_uuid=GROUP, slot=slot))


def hosts_of(plan):
    return [s.selections[0].service_host for s in plan.slots]


@pytest.fixture
def fleet(scheduler):
    for name in ("h1", "h2", "h3", "h4"):
        h.sized(scheduler, name, 2)
    return scheduler


def test_a_dry_run_plans_without_claiming(fleet):
    plan = fleet.groups.plan(group_request())
    assert not plan.reserved and plan.method == "solver-optimal"
    assert len(set(hosts_of(plan))) == 3
    assert all(s.reservation_uuid is None for s in plan.slots)
    assert h.allocations(fleet.stats.db) == []


def test_a_group_is_reserved_whole_and_built_into_its_slots(fleet):
    plan = fleet.groups.reserve(group_request())
    assert plan.reserved and len(plan.slots) == 3
    for slot in plan.slots:
        assert {c for _, c, _, _ in h.allocations(
            fleet.stats.db, slot.reservation_uuid)} == {
            slot.reservation_uuid}
    [vm] = factories.uuids(1)
    [[claimed, *alternates]] = fleet.placer.select_destinations(
        member_spec(1), [vm])
    assert claimed.service_host == plan.slots[1].selections[0].service_host
    assert h.allocations(fleet.stats.db, plan.slots[1].reservation_uuid) == []
    assert {host for host, *_ in h.allocations(fleet.stats.db, vm)} == {
        claimed.service_host}
    # alternates keep the group apart: the one host no member holds
    assert [a.service_host for a in alternates] == sorted(
        {"h1", "h2", "h3", "h4"} - set(hosts_of(plan)))


def test_a_member_whose_host_is_down_is_placed_anew_in_the_group(fleet):
    plan = fleet.groups.reserve(group_request())
    down = plan.slots[0].selections[0].service_host
    fleet.stats.cache.table.last_seen[
        fleet.stats.cache.table.rows_by_host[down][0]] = 0
    [vm] = factories.uuids(1)
    [[claimed, *_]] = fleet.placer.select_destinations(member_spec(0), [vm])
    others = set(hosts_of(plan)) - {down}
    assert claimed.service_host not in others | {down}
    assert h.allocations(fleet.stats.db, plan.slots[0].reservation_uuid) == []


def _alternates_of(fleet, slot):
    [[claimed, *alternates]] = fleet.placer.select_destinations(
        member_spec(slot), factories.uuids(1))
    return claimed.service_host, [a.service_host for a in alternates]


def _down(fleet, host):
    table = fleet.stats.cache.table
    table.last_seen[table.rows_by_host[host][0]] = 0


def test_a_member_gets_the_alternates_its_plan_kept_without_a_decision(
        fleet, monkeypatch):
    plan = fleet.groups.reserve(group_request(count=1))
    kept = [a.service_host for a in plan.slots[0].selections[1:]]
    read = []
    monkeypatch.setattr(reservations, "members_by_provider",
                        lambda *args: read.append(args))
    assert len(kept) == 2
    assert _alternates_of(fleet, 0) == (hosts_of(plan)[0], kept)
    assert read == []


def _full(fleet, host):
    """Every VCPU of ``host`` taken by a claim this worker knows of."""
    [state] = fleet.operator.get_host_states([host])
    free = {r.resource_class: r.free for r in state.resources}
    fleet.claims.claim(factories.uuids(1)[0], {
        factories.host_uuid(host): {"VCPU": free["VCPU"]}},
        owner=allocations.ConsumerInfo())


@pytest.mark.parametrize("gone", [_down, _full])
def test_alternates_are_decided_anew_when_a_kept_one_cannot_serve(
        fleet, gone):
    plan = fleet.groups.reserve(group_request(count=1))
    kept = [a.service_host for a in plan.slots[0].selections[1:]]
    gone(fleet, kept[0])
    claimed, alternates = _alternates_of(fleet, 0)
    # the two hosts left that keep the group apart, the gone one not
    assert claimed == hosts_of(plan)[0] and len(alternates) == 2
    assert set(alternates) == {"h1", "h2", "h3", "h4"} - {claimed, kept[0]}


def test_a_slot_reserved_without_kept_alternates_has_them_decided(fleet):
    plan = fleet.groups.reserve(group_request())
    with fleet.stats.db.begin() as conn:
        conn.execute(models.RESERVATIONS.update().values(alternates=None))
    claimed, alternates = _alternates_of(fleet, 1)
    assert claimed == hosts_of(plan)[1]
    assert alternates == sorted({"h1", "h2", "h3", "h4"} - set(
        hosts_of(plan)))


def test_extend_keeps_the_members_where_they_are(fleet):
    first = fleet.groups.reserve(group_request(count=2))
    more = fleet.groups.extend(group_request(count=2))
    assert [s.slot for s in more.slots] == [2, 3]
    assert set(hosts_of(first)).isdisjoint(hosts_of(more))
    with pytest.raises(exception.NoValidHost):
        fleet.groups.extend(group_request(count=1))


def test_a_known_group_is_not_reserved_twice(fleet):
    fleet.groups.reserve(group_request(count=1))
    with pytest.raises(exception.InvalidRequest, match="extend_group"):
        fleet.groups.reserve(group_request(count=1))


def test_release_frees_only_unbuilt_slots(fleet):
    fleet.groups.reserve(group_request())
    [vm] = factories.uuids(1)
    fleet.placer.select_destinations(member_spec(0), [vm])
    assert fleet.groups.release(GROUP) == 2
    assert fleet.groups.release(GROUP) == 0
    assert {c for _, c, _, _ in h.allocations(fleet.stats.db)} == {vm}


def test_the_sweeper_frees_expired_slots(fleet):
    fleet.groups.reserve(group_request(reservation_ttl=60))
    fleet.groups.clock = lambda: (datetime.datetime.utcnow()
                                  + datetime.timedelta(seconds=120))
    assert fleet.groups.sweep() == 3
    assert h.allocations(fleet.stats.db) == []
    with fleet.stats.db.begin() as conn:
        assert reservations.reserved_of(conn, GROUP) == []


def test_a_group_that_cannot_fit_claims_nothing(fleet):
    with pytest.raises(exception.NoValidHost, match="anti-affinity at host"):
        fleet.groups.reserve(group_request(count=5))
    assert h.allocations(fleet.stats.db) == []


@pytest.mark.parametrize("request_, reason", [
    (lambda: group_request(policies=(("aisle", "anti-affinity", 1),)),
     "aisle"),
    (lambda: group_request(count=0), "members"),
])
def test_bad_groups_are_refused_with_a_reason(fleet, request_, reason):
    with pytest.raises(exception.InvalidRequest, match=reason):
        fleet.groups.reserve(request_())
    assert h.allocations(fleet.stats.db) == []


@pytest.fixture
def racks(scheduler):
    # rack r1 holds the roomiest host, which a member-by-member placement
    # takes first; only r2 has room for three members on distinct hosts
    h.sized(scheduler, "big", 8, location="row=a/rack=r1")
    for name in ("s1", "s2", "s3"):
        h.sized(scheduler, name, 1, location="row=b/rack=r2")
    return scheduler


def test_row_affinity_is_decided_for_the_whole_group(racks):
    plan = racks.groups.reserve(group_request(policies=(
        ("row", "affinity", 1), ("host", "anti-affinity", 1))))
    assert sorted(hosts_of(plan)) == ["s1", "s2", "s3"]


def test_rack_anti_affinity_is_kept_in_plan_and_claim(racks):
    plan = racks.groups.reserve(group_request(
        count=2, policies=(("rack", "anti-affinity", 1),)))
    assert sorted(hosts_of(plan))[0] == "big"
    with pytest.raises(exception.NoValidHost, match="anti-affinity at rack"):
        racks.groups.extend(group_request(
            count=1, policies=(("rack", "anti-affinity", 1),)))


@pytest.fixture
def zones(scheduler):
    """az1 holds the two roomiest hosts; a topology aggregate naming a
    "zone" is no zone (the availability zone is the reported one)."""
    for name, size, zone in (("a1", 8, "az1"), ("a2", 8, "az1"),
                             ("b1", 2, "az2")):
        h.sized(scheduler, name, size, zone=zone)
    scheduler.operator.set_aggregate(aggregate_obj.Aggregate(
        uuid=factories.host_uuid("agg-zone"), name="fake", hosts=["a1"],
        metadata={"topology_level": "zone"}))
    return scheduler


def test_zone_anti_affinity_is_the_availability_zone_in_plan_and_claim(
        zones):
    policies = (("zone", "anti-affinity", 1),)
    assert [str(p) for p in service.claim_rule(GROUP, [
        problem.Policy("zone", "anti-affinity", 1)]).levels] == [
            "anti-affinity at zone"]
    plan = zones.groups.reserve(group_request(count=2, policies=policies))
    assert sorted(hosts_of(plan))[1] == "b1"
    with pytest.raises(exception.NoValidHost, match="anti-affinity at zone"):
        zones.groups.extend(group_request(count=1, policies=policies))


def test_a_member_asking_for_other_resources_than_its_slot_is_refused(fleet):
    plan = fleet.groups.reserve(group_request())
    bigger = h.make_spec(flavor=factories.flavor(vcpus=2, memory_mb=1024,
                                                 root_gb=10),
                         group_slot=group_obj.GroupSlotRef(group_uuid=GROUP,
                                                           slot=0))
    with pytest.raises(exception.InvalidRequest, match="slot 0 .* holds"):
        fleet.placer.select_destinations(bigger, factories.uuids(1))
    assert {c for _, c, _, _ in h.allocations(fleet.stats.db)} == {
        s.reservation_uuid for s in plan.slots}


def test_a_retried_take_over_answers_with_the_members_claim(fleet):
    plan = fleet.groups.reserve(group_request())
    [vm] = factories.uuids(1)
    [[first, *_]] = fleet.placer.select_destinations(member_spec(2), [vm])
    [[again, *_]] = fleet.placer.select_destinations(member_spec(2), [vm])
    assert first.service_host == again.service_host == (
        plan.slots[2].selections[0].service_host)
    with pytest.raises(reservations.SlotTaken):
        fleet.placer.select_destinations(member_spec(2), factories.uuids(1))


def test_taking_a_slot_over_leaves_the_callers_spec_as_it_was(fleet):
    plan = fleet.groups.reserve(group_request())
    spec = member_spec(0)
    before = spec.obj_to_primitive()
    fleet.placer.select_destinations(spec, factories.uuids(1))
    assert spec.obj_to_primitive() == before
    assert spec.group_slot.slot == 0 and plan.slots[0].slot == 0


def test_a_plan_is_what_the_wire_accepts_and_reads_back(fleet):
    # plans are built trusted (no per-field coercion): the wire's own
    # check and a round trip hold them to the fields' types
    plan = fleet.groups.reserve(group_request())
    primitive = plan.obj_to_primitive()
    validate.check_object("GroupPlan", primitive)
    back = group_obj.GroupPlan.obj_from_primitive(primitive)
    assert back.obj_to_primitive() == primitive
    assert back.expires_at.tzinfo is not None


def test_each_selection_of_a_plan_is_its_slot_and_shape(fleet):
    # the slots of a class share their alternates' hosts; each Selection
    # still names its own slot's reservation and its own member's amounts
    for name in ("h5", "h6", "h7", "h8"):
        h.sized(fleet, name, 2)
    big = factories.flavor(name="m1.big", vcpus=2, memory_mb=2048,
                           root_gb=10)
    request = group_obj.GroupRequest(
        group_uuid=GROUP, project_id="p", user_id="u", policies=[],
        members=[group_obj.GroupMember(name="web", count=2,
                                       request_spec=h.make_spec()),
                 group_obj.GroupMember(name="db", count=2,
                                       request_spec=h.make_spec(big))])
    plan = fleet.groups.reserve(request)
    vcpus = {"web": 1, "db": 2}
    shared = {}
    for slot in plan.slots:
        for selection in slot.selections[1:]:
            shared.setdefault(selection.service_host, set()).add(slot.member)
    assert {"web", "db"} in shared.values()
    for slot in plan.slots:
        for selection in slot.selections:
            assert selection.consumer_uuid == slot.reservation_uuid
            (amounts,) = selection.allocation_request.as_mapping().values()
            assert amounts["VCPU"] == vcpus[slot.member]
        assert slot.selections[0].claimed
        assert not any(s.claimed for s in slot.selections[1:])
