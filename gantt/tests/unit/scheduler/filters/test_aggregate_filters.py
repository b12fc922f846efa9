"""Filters on aggregate metadata, table-driven from Nova's documented rules.

Each case builds hosts h0..h2, puts them in aggregates with metadata, and
checks both the column and the per-host path against Nova's answer.
"""

import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline.filters import aggregate_extra_specs
from gantt.scheduler.pipeline.filters import aggregate_image_props
from gantt.scheduler.pipeline.filters import availability_zone
from gantt.scheduler.pipeline.filters import io_ops
from gantt.scheduler.pipeline.filters import num_instances
from gantt.scheduler.pipeline.filters import tenant_isolation
from gantt.scheduler.pipeline.filters import type_affinity
from gantt.scheduler.state import aggregates
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

A1 = "a0a0a0a0-0000-4000-8000-000000000001"
A2 = "a0a0a0a0-0000-4000-8000-000000000002"


def view_of(*nodes, aggs=()):
    """A view of ``nodes`` with aggregates ``[(hosts, metadata)]``."""
    cache = helpers.make_cache(*nodes)
    cache.apply_aggregates(aggregates.AggregateSet([
        aggregate_obj.Aggregate(uuid=(A1, A2)[i], name="agg%d" % i,
                                hosts=list(hosts), metadata=meta)
        for i, (hosts, meta) in enumerate(aggs)]))
    return helpers.view_of(cache)


def three(**fields):
    return [helpers.node("h%d" % i, **fields) for i in range(3)]


# -- AggregateInstanceExtraSpecsFilter ----------------------------------------

@pytest.mark.parametrize("specs, aggs, expected", [
    # scoped key must match the aggregate's value
    ({"aggregate_instance_extra_specs:ssd": "true"},
     [(["h0"], {"ssd": "true"}), (["h1"], {"ssd": "false"})],
     [True, False, False]),
    # an unscoped key is checked too (Nova)
    ({"ssd": "true"}, [(["h0", "h1"], {"ssd": "true"})],
     [True, True, False]),
    # operators of extra_specs_ops, on comma-split values
    ({"aggregate_instance_extra_specs:cores": ">= 4"},
     [(["h0"], {"cores": "8"}), (["h1"], {"cores": "2"})],
     [True, False, False]),
    ({"aggregate_instance_extra_specs:gpu": "<or> a100 <or> h100"},
     [(["h0"], {"gpu": "t4, a100"}), (["h1"], {"gpu": "t4"})],
     [True, False, False]),
    # one matching aggregate of several is enough
    ({"aggregate_instance_extra_specs:ssd": "true"},
     [(["h0"], {"ssd": "false"}), (["h0"], {"ssd": "true"})],
     [True, False, False]),
    # every key must match
    ({"aggregate_instance_extra_specs:ssd": "true",
      "aggregate_instance_extra_specs:net": "fast"},
     [(["h0", "h1"], {"ssd": "true"}), (["h1"], {"net": "fast"})],
     [False, True, False]),
    ({"aggregate_instance_extra_specs:net": "fast",
      "aggregate_instance_extra_specs:ssd": "true"},
     [(["h0", "h1"], {"ssd": "true"}), (["h1"], {"net": "fast"})],
     [False, True, False]),
    # the key is all that follows the scope, colons included
    ({"aggregate_instance_extra_specs:hw:gpu": "a100"},
     [(["h0"], {"hw:gpu": "a100"}), (["h1"], {"gpu": "a100"})],
     [True, False, False]),
    # other scopes are not this filter's business
    ({"hw:cpu_policy": "dedicated", "aggregate_instance_extra_specs:ssd":
      "true"}, [(["h0"], {"ssd": "true"})], [True, False, False]),
    ({"hw:cpu_policy": "dedicated", "capabilities:x": "y"}, [], None),
])
def test_aggregate_instance_extra_specs(conf, specs, aggs, expected):
    view = view_of(*three(), aggs=aggs)
    request = helpers.make_request(factories.flavor(extra_specs=specs))
    flt = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter(conf)
    if expected is None:
        assert not flt.applies(request)
        return
    assert flt.applies(request)
    helpers.assert_both_paths(flt, view, request, expected)


# -- AggregateImagePropertiesIsolation-----------------------------------------

@pytest.mark.parametrize("props, aggs, namespace, expected", [
    # the image sets the key: its value must be among the aggregate's
    ({"os_distro": "ubuntu"}, [(["h0"], {"os_distro": "ubuntu,debian"}),
                               (["h1"], {"os_distro": "windows"})],
     None, [True, False, True]),
    # a key the image does not set never excludes
    ({"os_distro": "ubuntu"}, [(["h0"], {"hw_disk_bus": "scsi"})],
     None, [True, True, True]),
    # each key the image sets excludes on its own
    ({"os_distro": "ubuntu", "hw_disk_bus": "scsi"},
     [(["h0"], {"os_distro": "windows"}), (["h1"], {"hw_disk_bus": "ide"})],
     None, [False, False, True]),
    # a key outside the namespace does not stop the check of one inside
    ({"os_distro": "ubuntu", "ns.tier": "gold"},
     [(["h0"], {"os_distro": "windows", "ns.tier": "silver"})],
     "ns", [False, True, True]),
    # with a namespace only its keys count
    ({"os_distro": "ubuntu", "ns.tier": "gold"},
     [(["h0"], {"os_distro": "windows", "ns.tier": "gold"}),
      (["h1"], {"ns.tier": "silver"})],
     "ns", [True, False, True]),
])
def test_aggregate_image_properties_isolation(conf, props, aggs, namespace,
                                              expected):
    conf.set_override("aggregate_image_properties_isolation_namespace",
                      namespace, "filter_scheduler")
    view = view_of(*three(), aggs=aggs)
    request = helpers.make_request(
        image=request_spec.ImageMeta(properties=props))
    flt = aggregate_image_props.AggregateImagePropertiesIsolation(conf)
    assert flt.applies(request)
    assert not flt.applies(helpers.make_request(
        image=request_spec.ImageMeta(properties={})))
    helpers.assert_both_paths(flt, view, request, expected)


# -- AggregateMultiTenancyIsolation--------------------------------------------

@pytest.mark.parametrize("project, aggs, expected", [
    ("p1", [(["h0"], {"filter_tenant_id": "p1"}),
            (["h1"], {"filter_tenant_id": "p2"})], [True, False, True]),
    # several projects, comma-separated, and suffixed keys
    ("p3", [(["h0"], {"filter_tenant_id": "p1,p3"}),
            (["h1"], {"filter_tenant_id2": "p3"})], [True, True, True]),
    ("p9", [(["h0", "h1"], {"filter_tenant_id": "p1",
                            "filter_tenant_id_x": "p2"})],
     [False, False, True]),
    # other metadata keys do not restrict
    ("p1", [(["h0"], {"availability_zone": "az1"})], [True, True, True]),
])
def test_aggregate_multi_tenancy_isolation(conf, project, aggs, expected):
    view = view_of(*three(), aggs=aggs)
    request = helpers.make_request(project_id=project)
    flt = tenant_isolation.AggregateMultiTenancyIsolation(conf)
    helpers.assert_both_paths(flt, view, request, expected)


# -- AggregateTypeAffinityFilter-----------------------------------------------

@pytest.mark.parametrize("flavor, aggs, expected", [
    ("m1.small", [(["h0"], {"instance_type": "m1.small"}),
                  (["h1"], {"instance_type": "m1.large"})],
     [True, False, True]),
    ("m1.large", [(["h0"], {"instance_type": "m1.small, m1.large"})],
     [True, True, True]),
    # one aggregate listing it is enough
    ("m1.large", [(["h0"], {"instance_type": "m1.small"}),
                  (["h0"], {"instance_type": "m1.large"})],
     [True, True, True]),
])
def test_aggregate_type_affinity(conf, flavor, aggs, expected):
    view = view_of(*three(), aggs=aggs)
    request = helpers.make_request(factories.flavor(name=flavor))
    flt = type_affinity.AggregateTypeAffinityFilter(conf)
    helpers.assert_both_paths(flt, view, request, expected)


# -- IoOps / NumInstances and their aggregate variants-------------------------

@pytest.mark.parametrize("flt_class, field, option, key", [
    (io_ops.IoOpsFilter, "num_io_ops", "max_io_ops_per_host", None),
    (io_ops.AggregateIoOpsFilter, "num_io_ops", "max_io_ops_per_host",
     "max_io_ops_per_host"),
    (num_instances.NumInstancesFilter, "num_instances",
     "max_instances_per_host", None),
    (num_instances.AggregateNumInstancesFilter, "num_instances",
     "max_instances_per_host", "max_instances_per_host"),
])
@pytest.mark.parametrize("counts, limit, agg_values, expected", [
    # strictly below the limit passes
    ((1, 2, 3), 3, (), [True, True, False]),
    ((0, 8, 9), 8, (), [True, False, False]),
    # aggregate variants: the smallest value of the host's aggregates
    ((1, 2, 3), 3, ("2", "5"), [True, False, False]),
    # a value that does not parse: the option, for that host
    ((1, 2, 3), 3, ("junk",), [True, True, False]),
])
def test_busy_hosts(conf, flt_class, field, option, key, counts, limit,
                    agg_values, expected):
    conf.set_override(option, limit, "filter_scheduler")
    nodes = [helpers.node("h%d" % i, **{field: c})
             for i, c in enumerate(counts)]
    aggs = [(["h1", "h2"], {key or option: v}) for v in agg_values]
    view = view_of(*nodes, aggs=aggs)
    flt = flt_class(conf)
    if key is None and agg_values:
        # the plain filters ignore aggregates
        expected = [c < limit for c in counts]
    helpers.assert_both_paths(flt, view, helpers.make_request(), expected)


# -- AvailabilityZoneFilter with aggregates------------------------------------

@pytest.mark.parametrize("zones, aggs, wanted, expected", [
    # the aggregate's zone wins over the reported one
    (("az1", "az1", None), [(["h1", "h2"], {"availability_zone": "az2"})],
     "az2", [False, True, True]),
    (("az1", "az1", None), [(["h1", "h2"], {"availability_zone": "az2"})],
     "az1", [True, False, False]),
    # no aggregate zone: the reported one
    (("az1", "az2", None), [(["h0"], {"ssd": "true"})], "az2",
     [False, True, False]),
])
def test_availability_zone_from_aggregates(conf, zones, aggs, wanted,
                                           expected):
    nodes = [helpers.node("h%d" % i, zone=z) for i, z in enumerate(zones)]
    view = view_of(*nodes, aggs=aggs)
    request = helpers.make_request(availability_zone=wanted)
    helpers.assert_both_paths(availability_zone.AvailabilityZoneFilter(conf),
                              view, request, expected)


def test_reported_aggregate_membership_counts_too(conf):
    # a host is in an aggregate when its agent says so, even if the
    # aggregate's host list does not name it
    nodes = [helpers.node("h0", aggregates=[A1]), helpers.node("h1")]
    view = view_of(*nodes, aggs=[((), {"filter_tenant_id": "p1"})])
    flt = tenant_isolation.AggregateMultiTenancyIsolation(conf)
    helpers.assert_both_paths(flt, view, helpers.make_request(
        project_id="p2"), [False, True])
