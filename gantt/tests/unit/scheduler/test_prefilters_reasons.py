"""The pre-filters' reasons, the traits they compute, and what they log.

Explain and the "no valid host" answer show each pre-filter's reason with
the number of hosts it removed; an operator reads the error logged for an
image property that maps to no known trait. (Written to kill mutants: see
doc/source/contributor/mutation.rst.)
"""

import logging

import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.pipeline import prefilters
from gantt.scheduler.state import aggregates
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

A = "a0a0a0a0-0000-4000-8000-00000000000a"
B = "a0a0a0a0-0000-4000-8000-00000000000b"
C = "a0a0a0a0-0000-4000-8000-00000000000c"


def _agg(uuid, hosts, **metadata):
    return aggregate_obj.Aggregate(uuid=uuid, name=uuid[-1], hosts=hosts,
                                   metadata=metadata)


def _view(*nodes, aggs=()):
    cache = helpers.make_cache(*nodes)
    cache.apply_aggregates(aggregates.AggregateSet(aggs))
    return helpers.view_of(cache)


def _outcome(view, request, conf):
    outcome = candidates.for_request(view, request, conf)
    kept = [str(h) for h, keep in zip(view.hosts, outcome.mask,
                                      strict=True) if keep]
    return kept, outcome.removed


def test_a_flavor_asking_for_packed_virtqueues_needs_the_trait(conf):
    view = _view(helpers.node("plain"),
                 helpers.node("packed", traits=["COMPUTE_NET_VIRTIO_PACKED"]))
    request = helpers.make_request(factories.flavor(
        extra_specs={"hw:virtio_packed_ring": "true"}))
    assert _outcome(view, request, conf) == (
        ["packed"], [("lacked trait COMPUTE_NET_VIRTIO_PACKED", 1)])


def test_a_project_outside_its_aggregates_is_the_reason(conf):
    conf.set_override("limit_tenants_to_placement_aggregate", True,
                      "scheduler")
    view = _view(helpers.node("h0"), helpers.node("h1"),
                 aggs=[_agg(A, ["h0"], filter_tenant_id="p1")])
    assert _outcome(view, helpers.make_request(project_id="p1"), conf) == (
        ["h0"], [("not in an aggregate of project p1", 1)])


def test_an_isolated_aggregate_is_the_reason(conf):
    conf.set_override("enable_isolated_aggregate_filtering", True,
                      "scheduler")
    view = _view(helpers.node("h0"), helpers.node("h1"),
                 aggs=[_agg(A, ["h0"], **{"trait:CUSTOM_GOLD": "required"})])
    assert _outcome(view, helpers.make_request(), conf) == (
        ["h1"], [("in an aggregate isolated for traits the request lacks",
                  1)])


def test_every_isolating_aggregate_counts():
    # keys in this order: one that is not a trait, a trait the request
    # requires, then one it does not
    aggregate_set = aggregates.AggregateSet([
        _agg(A, ["h0"], availability_zone="east"),
        _agg(B, ["h1"], **{"trait:CUSTOM_A": "required"}),
        _agg(C, ["h2"], **{"trait:CUSTOM_B": "required"})])
    assert prefilters.isolated_aggregates(aggregate_set, {"CUSTOM_A"}) == {C}


def test_a_hyphen_in_an_image_property_is_an_underscore_in_its_trait():
    assert prefilters.image_traits({"hw_vif_model": "spapr-vlan"}) == [
        "COMPUTE_NET_VIF_MODEL_SPAPR_VLAN"]


@pytest.mark.parametrize("option, props, trait", [
    ("query_placement_for_image_type_support", {"disk_format": "weird"},
     "COMPUTE_IMAGE_TYPE_WEIRD"),
    ("image_metadata_prefilter", {"hw_disk_bus": "no-such-bus"},
     "COMPUTE_STORAGE_BUS_NO_SUCH_BUS"),
])
def test_an_unknown_trait_is_logged(conf, caplog, option, props, trait):
    conf.set_override(option, True, "scheduler")
    view = _view(helpers.node("h0"))
    request = helpers.make_request(
        image=request_spec.ImageMeta(properties=props))
    with caplog.at_level(logging.ERROR, logger=prefilters.__name__):
        assert _outcome(view, request, conf) == (["h0"], [])
    assert [r.getMessage() for r in caplog.records] == [
        "Computed trait name %r is not valid; is os-traits up to date?"
        % trait]
