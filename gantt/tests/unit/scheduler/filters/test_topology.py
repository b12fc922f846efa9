"""Server-group policies per level: the hard ones as a filter, the soft
ones as the distance weigher; both paths must agree."""

import pytest

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import translate
from gantt.scheduler.pipeline.filters import topology as topology_filter
from gantt.scheduler.pipeline.weighers import topology as topology_weigher
from gantt.scheduler.state import topology as state_topology
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
#: two rows of racks: a01 (h1, h2), a02 (h3), b01 (h4); h5 has no rack
FLEET = (("h1", "row=a/rack=a01"), ("h2", "row=a/rack=a01"),
         ("h3", "row=a/rack=a02"), ("h4", "row=b/rack=b01"),
         ("h5", "row=b"))


def _view():
    return helpers.make_view(*[helpers.node(h, location=where)
                               for h, where in FLEET])


def _request(view, placed, *policies):
    request = helpers.make_request(
        lookup=helpers.FakeLookup(group_hosts={GROUP: placed}),
        instance_group=request_spec.InstanceGroup(
            uuid=GROUP, policy="soft-affinity", level_policies=[
                request_spec.GroupLevelPolicy(level=level, rule=rule,
                                              limit=limit)
                for level, rule, limit in policies]))
    request.instance_group.places = view
    return request


@pytest.mark.parametrize("placed, policy, expected", [
    ({}, ("rack", "anti-affinity", 1), [True, True, True, True, False]),
    ({"h1": 1}, ("rack", "anti-affinity", 1),
     [False, False, True, True, False]),
    ({"h1": 1, "h3": 1, "h4": 1}, ("rack", "anti-affinity", 1),
     [False] * 5),
    ({"h1": 1}, ("rack", "max-per", 2), [True, True, True, True, False]),
    ({"h1": 1, "h2": 1}, ("rack", "max-per", 2),
     [False, False, True, True, False]),
    ({}, ("row", "affinity", 1), [True] * 5),
    ({"h3": 1}, ("row", "affinity", 1), [True, True, True, False, False]),
    # spread over the three racks, skew 1: a01 waits for the others
    ({"h1": 1}, ("rack", "spread", 1), [False, False, True, True, False]),
    ({"h1": 1, "h3": 1, "h4": 1}, ("rack", "spread", 1),
     [True, True, True, True, False]),
    ({"h1": 1}, ("host", "anti-affinity", 1),
     [False, True, True, True, True]),
])
def test_hard_level_policies(conf, placed, policy, expected):
    view = _view()
    request = _request(view, placed, policy)
    flt = topology_filter.ServerGroupTopologyFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, view, request, expected)


def _backend(name, location):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=factories.host_uuid(name), name=name,
            inventories=[compute_node.Inventory(resource_class="DISK_GB",
                                                total=1000)]),
        report_sequence=1, kind="volume", location=location)


@pytest.mark.parametrize("placed, policy, expected", [
    # rows: h1 (a01), vol-1 (a01), vol-2 (a01), vol-3 (b01), h3 (a02)
    ({"vol-1": 1}, ("rack", "anti-affinity", 1),
     [False, False, False, True, True]),
    ({"vol-1": 1, "vol-2": 1}, ("rack", "max-per", 2),
     [False, False, False, True, True]),
    # backends are in a01 and b01 only: once each holds a member, a01
    # takes another though compute rack a02 has none (the claim's rule)
    ({"vol-1": 1, "vol-3": 1}, ("rack", "spread", 1),
     [False, True, True, True, True]),
])
def test_level_policies_over_volume_backends(conf, placed, policy,
                                             expected):
    view = helpers.make_view(
        helpers.node("h1", location="row=a/rack=a01"),
        _backend("vol-1", "rack=a01"), _backend("vol-2", "rack=a01"),
        _backend("vol-3", "rack=b01"),
        helpers.node("h3", location="row=a/rack=a02"))
    request = _request(view, placed, policy)
    helpers.assert_both_paths(topology_filter.ServerGroupTopologyFilter(
        conf), view, request, expected)


@pytest.mark.parametrize("policy, expected", [
    (("zone", "anti-affinity", 1), [False, False, True, False]),
    (("zone", "affinity", 1), [True, True, False, False]),
])
def test_zone_is_the_reported_availability_zone(conf, policy, expected):
    """A topology aggregate tagged ``zone`` names no zone; a host with no
    availability zone has no domain there."""
    view = helpers.make_view(
        helpers.node("h1", zone="az1"), helpers.node("h2", zone="az1"),
        helpers.node("h3", zone="az2"), helpers.node("h4"),
        aggregates=[aggregate_obj.Aggregate(
            uuid=factories.host_uuid("agg"), name="az2", hosts=["h1", "h4"],
            metadata={"topology_level": "zone"})])
    request = _request(view, {"h2": 1}, policy)
    helpers.assert_both_paths(topology_filter.ServerGroupTopologyFilter(
        conf), view, request, expected)


def test_the_reason_names_the_level_and_the_domains_that_fit(conf):
    view = _view()
    request = _request(view, {"h1": 1, "h3": 1, "h4": 1},
                       ("rack", "anti-affinity", 1))
    flt = topology_filter.ServerGroupTopologyFilter(conf)
    removed = ~flt.passes_columns(view, request)
    assert flt.explain(view, request, removed) == {
        "were ruled out by anti-affinity at rack: 3 member(s) already on "
        "the 3 rack(s) that fit": 4,
        "had no rack in their location (anti-affinity at rack)": 1}


def test_a_group_without_level_policies_is_not_filtered(conf):
    view = _view()
    request = _request(view, {"h1": 1})
    assert not topology_filter.ServerGroupTopologyFilter(conf).applies(
        request)


@pytest.mark.parametrize("policy, error", [
    (("shelf", "anti-affinity", 1), exception.UnknownLevel),
    (("rack", "max-per", 0), exception.InvalidRequest),
    # a soft rule weighs by distance: zone must have its place in the list
    (("zone", "soft-affinity", 1), exception.UnknownLevel),
])
def test_a_bad_level_policy_is_refused(policy, error):
    with pytest.raises(error):
        _request(_view(), {}, policy)


# -- soft: the distance weigher ----------------------------------------------


def _raw(conf, view, request):
    return helpers.raw(topology_weigher.ServerGroupDistanceWeigher(conf),
                       view, request)


def test_soft_affinity_prefers_the_members_host_then_rack_then_row(conf):
    # levels datacenter,room,row,rack,host: host 0, rack 1, row 2, none 5
    view = _view()
    request = _request(view, {"h1": 1}, ("room", "soft-affinity", 1))
    assert _raw(conf, view, request) == [0.0, -1.0, -2.0, -4.0, -4.0]


def test_soft_anti_affinity_at_rack_is_indifferent_beyond_the_rack(conf):
    view = _view()
    request = _request(view, {"h1": 1}, ("rack", "soft-anti-affinity", 1))
    assert _raw(conf, view, request) == [0.0, 1.0, 2.0, 2.0, 2.0]


def test_no_member_yet_weighs_nothing(conf):
    view = _view()
    request = _request(view, {}, ("rack", "soft-affinity", 1))
    assert topology_weigher.ServerGroupDistanceWeigher(conf).constant(
        view, request)


def test_soft_affinity_at_a_listed_zone_weighs_by_availability_zone(conf):
    """levels zone,row,rack(,host): h2 shares h1's availability zone only
    (distance 3), h3 nothing (4, the cap at zone)."""
    zoned = state_topology.Topology(("zone", "row", "rack"))
    view = helpers.make_view(
        helpers.node("h1", zone="az1", location="row=a/rack=a01"),
        helpers.node("h2", zone="az1", location="row=b/rack=b01"),
        helpers.node("h3", zone="az2", location="row=c/rack=c01"))
    view.table.topology.levels = zoned.levels
    spec = factories.request(instance_group=request_spec.InstanceGroup(
        uuid=GROUP, policy="soft-affinity", level_policies=[
            request_spec.GroupLevelPolicy(level="zone", rule="soft-affinity",
                                          limit=1)]))
    request = translate.from_spec(
        spec, factories.uuids(1),
        helpers.FakeLookup(group_hosts={GROUP: {"h1": 1}}), datacenter=zoned)
    request.instance_group.places = view
    assert _raw(conf, view, request) == [0.0, -3.0, -4.0]
