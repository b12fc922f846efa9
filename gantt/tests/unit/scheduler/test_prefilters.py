"""Request pre-filters (Nova's request_filter.py) in the candidates step."""

import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.state import aggregates
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

T1 = "a0a0a0a0-0000-4000-8000-000000000001"
T2 = "a0a0a0a0-0000-4000-8000-000000000002"
GOLD = "a0a0a0a0-0000-4000-8000-000000000003"


def _view(*nodes, aggs=()):
    cache = helpers.make_cache(*nodes)
    cache.apply_aggregates(aggregates.AggregateSet(aggs))
    return cache.view(helpers.SERVICE_DOWN_TIME)


def _agg(uuid, hosts, **metadata):
    return aggregate_obj.Aggregate(uuid=uuid, name=uuid[-1], hosts=hosts,
                                   metadata=metadata)


def _kept(view, request, conf):
    outcome = candidates.for_request(view, request, conf)
    kept = [str(h) for h, keep in zip(view.hosts, outcome.mask,
                                      strict=True) if keep]
    return kept, outcome.removed


TENANT_AGGS = [_agg(T1, ["h0"], filter_tenant_id="p1"),
               _agg(T2, ["h1"], filter_tenant_id_2="p2")]


@pytest.mark.parametrize("project, required, kept", [
    ("p1", False, ["h0"]),
    ("p2", False, ["h1"]),
    # a project no aggregate names is not restricted...
    ("p3", False, ["h0", "h1", "h2"]),
    # ...unless every project must have one
    ("p3", True, []),
])
def test_tenant_aggregates(conf, project, required, kept):
    conf.set_override("limit_tenants_to_placement_aggregate", True,
                      "scheduler")
    conf.set_override("placement_aggregate_required_for_tenants", required,
                      "scheduler")
    view = helpers.make_view(
        *[helpers.node("h%d" % i) for i in range(3)],
        aggregates=TENANT_AGGS)
    assert _kept(view, helpers.make_request(project_id=project),
                 conf)[0] == kept


def test_tenant_pre_filter_is_off_by_default(conf):
    view = helpers.make_view(
        *[helpers.node("h%d" % i) for i in range(3)],
        aggregates=TENANT_AGGS)
    assert _kept(view, helpers.make_request(project_id="p1"),
                 conf)[0] == ["h0", "h1", "h2"]


def test_disabled_computes_are_always_excluded(conf):
    view = helpers.make_view(
        helpers.node("on"),
        helpers.node("off", traits=["COMPUTE_STATUS_DISABLED"]))
    kept, removed = _kept(view, helpers.make_request(), None)
    assert kept == ["on"]
    assert removed == [("had trait COMPUTE_STATUS_DISABLED", 1)]


@pytest.mark.parametrize("forced", [{"force_hosts": ["off"]},
                                    {"force_nodes": ["off"]}])
def test_forced_hosts_keep_the_pre_filters(conf, forced):
    # as in Nova, whose request filters shape the Placement query for
    # forced hosts too: a disabled compute is never picked
    view = helpers.make_view(
        helpers.node("on"),
        helpers.node("off", traits=["COMPUTE_STATUS_DISABLED"]))
    kept, removed = _kept(view, helpers.make_request(**forced), conf)
    assert kept == []
    assert removed == [("not forced", 1),
                       ("had trait COMPUTE_STATUS_DISABLED", 1)]


def test_forced_hosts_stay_in_the_requested_zone(conf):
    view = helpers.make_view(
        helpers.node("h0", zone="east"),
        helpers.node("h1", zone="west"), helpers.node("h2"),
        aggregates=[_agg(T1, ["h2"], availability_zone="east")])
    request = helpers.make_request(force_hosts=["h0", "h1", "h2"],
                                   availability_zone="east")
    assert _kept(view, request, conf)[0] == ["h0", "h2"]


def test_forced_hosts_ignore_the_zone_without_the_zone_filter(conf):
    conf.set_override("enabled_filters", ["ComputeFilter"],
                      "filter_scheduler")
    view = helpers.make_view(
        helpers.node("h0", zone="east"),
        helpers.node("h1", zone="west"))
    request = helpers.make_request(force_hosts=["h0", "h1"],
                                   availability_zone="east")
    assert _kept(view, request, conf)[0] == ["h0", "h1"]


@pytest.mark.parametrize("names, kept", [
    ({"force_hosts": ["H1"]}, ["h1"]),
    ({"force_hosts": ["h1", "H2"]}, ["h1", "H2"]),
    ({"ignore_hosts": ["H1", "h2"]}, ["h0"]),
])
def test_forced_and_ignored_hosts_match_in_any_case(conf, names, kept):
    # as Nova's HostManager compares them
    view = helpers.make_view(
        helpers.node("h0"), helpers.node("h1"), helpers.node("H2"))
    assert _kept(view, helpers.make_request(**names), conf)[0] == kept


@pytest.mark.parametrize("option, props, specs, kept", [
    ("query_placement_for_image_type_support", {"disk_format": "qcow2"},
     {}, ["qcow2"]),
    # an unknown format adds no trait (Nova logs an error)
    ("query_placement_for_image_type_support", {"disk_format": "weird"},
     {}, ["plain", "qcow2", "virtio"]),
    ("image_metadata_prefilter", {"hw_disk_bus": "virtio"}, {},
     ["virtio"]),
    ("image_metadata_prefilter", {"hw_disk_bus": "no-such-bus"}, {},
     ["plain", "qcow2", "virtio"]),
    # always on: accelerators and packed virtqueues
    (None, {}, {"accel:device_profile": "dp1"}, ["qcow2"]),
    (None, {"hw_virtio_packed_ring": "true"}, {}, ["virtio"]),
    (None, {}, {"hw:virtio_packed_ring": "false"},
     ["plain", "qcow2", "virtio"]),
])
def test_trait_pre_filters(conf, option, props, specs, kept):
    if option:
        conf.set_override(option, True, "scheduler")
    view = helpers.make_view(
        helpers.node("plain"),
        helpers.node("qcow2", traits=["COMPUTE_IMAGE_TYPE_QCOW2",
                                      "COMPUTE_ACCELERATORS"]),
        helpers.node("virtio", traits=["COMPUTE_STORAGE_BUS_VIRTIO",
                                       "COMPUTE_NET_VIRTIO_PACKED"]))
    request = helpers.make_request(
        factories.flavor(extra_specs=specs),
        image=request_spec.ImageMeta(properties=props) if props else None)
    assert _kept(view, request, conf)[0] == kept


@pytest.mark.parametrize("specs, kept", [
    # an aggregate requiring CUSTOM_GOLD keeps out requests that do not
    ({}, ["h1"]),
    ({"trait:CUSTOM_GOLD": "required"}, ["h0"]),
])
def test_isolated_aggregates(conf, specs, kept):
    conf.set_override("enable_isolated_aggregate_filtering", True,
                      "scheduler")
    view = helpers.make_view(
        helpers.node("h0", traits=["CUSTOM_GOLD"]),
        helpers.node("h1"),
        aggregates=[_agg(GOLD, ["h0"], **{"trait:CUSTOM_GOLD":
                                    "required"})])
    request = helpers.make_request(factories.flavor(extra_specs=specs))
    assert _kept(view, request, conf)[0] == kept


@pytest.mark.parametrize("zone, kept", [("east", ["h0", "h2"]),
                                        ("west", ["h1"])])
def test_availability_zone_pre_filter(conf, zone, kept):
    conf.set_override("query_placement_for_availability_zone", True,
                      "scheduler")
    view = helpers.make_view(
        helpers.node("h0", zone="east"),
        helpers.node("h1", zone="west"), helpers.node("h2"),
        aggregates=[_agg(T1, ["h2"], availability_zone="east")])
    kept_hosts, removed = _kept(view, helpers.make_request(
        availability_zone=zone), conf)
    assert kept_hosts == kept
    assert removed == [("not in availability zone %s" % zone,
                        3 - len(kept))]


def test_a_cross_cell_move_makes_the_cell_a_preference(conf):
    cell = "aaaaaaaa-0000-4000-8000-000000000001"
    view = helpers.make_view(
        helpers.node("in", cell_uuid=cell), helpers.node("out"))
    dest = request_spec.Destination(cell_uuid=cell)
    assert _kept(view, helpers.make_request(requested_destination=dest),
                 conf)[0] == ["in"]
    assert _kept(view, helpers.make_request(
        requested_destination=dest,
        scheduler_hints={"allow_cross_cell_move": ["True"]}),
        conf)[0] == ["in", "out"]
