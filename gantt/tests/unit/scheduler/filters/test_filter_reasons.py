"""The filter runner's tally, forced hosts, and the metrics and tenant
filters' edge cases.

The tally is what "no valid host" and explain show: each reason with the
hosts it removed, the largest first. (Written to kill mutants: see
doc/source/contributor/mutation.rst.)
"""

import numpy as np
import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline.filters import metrics
from gantt.scheduler.pipeline.filters import tenant_isolation
from gantt.scheduler.state import aggregates
from gantt.tests.unit.scheduler import helpers


def _fleet():
    return helpers.make_view(
        helpers.node("ok"), helpers.node("nomem1", memory_mb=100),
        helpers.node("nomem2", memory_mb=100),
        helpers.node("nodisk", disk_gb=1),
        helpers.node("off", disabled=True))


def _kept(view, outcome):
    return [str(h) for h, k in zip(view.hosts, outcome.mask, strict=True)
            if k]


@pytest.mark.parametrize("vectorised", [True, False])
def test_the_tally_lists_the_largest_cause_first(conf, vectorised):
    view = _fleet()
    runner = filters.FilterRunner(plugins.load(
        plugins.FILTERS, ["ComputeFilter", "ResourceFilter"], conf),
        vectorised=vectorised)
    outcome = runner.run(view, helpers.make_request(),
                         np.ones(view.n, dtype=bool))
    assert _kept(view, outcome) == ["ok"]
    assert outcome.summary() == (
        "1 of 5 hosts available: 1 were disabled, 2 lacked MEMORY_MB, "
        "1 lacked DISK_GB")


def test_forced_hosts_skip_every_filter_but_resource_fit(conf):
    view = _fleet()
    runner = filters.FilterRunner(plugins.load(
        plugins.FILTERS, ["ComputeFilter", "ResourceFilter"], conf))
    outcome = runner.run(view, helpers.make_request(),
                         np.ones(view.n, dtype=bool), skip_filters=True)
    assert _kept(view, outcome) == ["ok", "off"]


@pytest.mark.parametrize("setting, expected", [
    (["cpu=1.5", "mem=-2"], [("cpu", 1.5), ("mem", -2.0)]),
    # a pair that does not parse is dropped, the others kept
    (["cpu=x", "mem=2"], [("mem", 2.0)]),
    (["cpu=1=2", "mem=2"], [("mem", 2.0)]),
    (["=2", "mem=2"], [("mem", 2.0)]),
    (["2", "mem=2"], [("mem", 2.0)]),
])
def test_metrics_weight_setting(conf, setting, expected):
    conf.set_override("weight_setting", setting, "metrics")
    assert metrics.weight_setting(conf) == expected


def test_metrics_filter_needs_every_weighed_metric(conf):
    conf.set_override("weight_setting", ["a=1", "b=1"], "metrics")
    view = helpers.make_view(
        helpers.node("both", metrics={"a": 1.0, "b": 2.0}),
        helpers.node("only_a", metrics={"a": 1.0}),
        helpers.node("only_b", metrics={"b": 1.0}))
    flt = metrics.MetricsFilter(conf)
    assert flt.applies(helpers.make_request())
    helpers.assert_both_paths(flt, view, helpers.make_request(),
                              [True, False, False])


def test_a_host_in_two_tenant_aggregates_takes_both_tenants(conf):
    # under two keys: every key's projects are allowed
    cache = helpers.make_cache(helpers.node("h0"))
    cache.apply_aggregates(aggregates.AggregateSet([
        aggregate_obj.Aggregate(uuid="a0a0a0a0-0000-4000-8000-00000000000%d"
                                % i, name="t%d" % i, hosts=["h0"],
                                metadata={key: project})
        for i, (key, project) in enumerate((("filter_tenant_id", "p1"),
                                            ("filter_tenant_id_2", "p2")))]))
    view = helpers.view_of(cache)
    flt = tenant_isolation.AggregateMultiTenancyIsolation(conf)
    for project, expected in (("p1", True), ("p2", True), ("p3", False)):
        helpers.assert_both_paths(flt, view, helpers.make_request(
            project_id=project), [expected])


def test_each_filters_rows_are_recorded_only_when_asked(conf):
    view = _fleet()
    runner = filters.FilterRunner(plugins.load(
        plugins.FILTERS, ["ComputeFilter"], conf))
    mask = np.ones(view.n, dtype=bool)
    assert runner.run(view, helpers.make_request(), mask).steps == []
    steps = runner.run(view, helpers.make_request(), mask,
                       record=True).steps
    assert [(name, labels) for name, labels, _rows in steps] == [
        ("ComputeFilter", [("were disabled", 1)])]
    assert list(steps[0][2]) == [False, False, False, False, True]


@pytest.mark.parametrize("name, key, field", [
    ("AggregateIoOpsFilter", "max_io_ops_per_host", "num_io_ops"),
    ("AggregateNumInstancesFilter", "max_instances_per_host",
     "num_instances"),
])
def test_an_aggregate_limit_that_is_not_an_integer_is_ignored(conf, name,
                                                               key, field):
    # as Nova's int() of the metadata: "2.5" leaves the option's limit
    cache = helpers.make_cache(helpers.node("h0", **{field: 3}))
    cache.apply_aggregates(aggregates.AggregateSet([aggregate_obj.Aggregate(
        uuid="a0a0a0a0-0000-4000-8000-000000000001", name="a",
        hosts=["h0"], metadata={key: "2.5"})]))
    view = helpers.view_of(cache)
    flt, = plugins.load(plugins.FILTERS, [name], conf)
    helpers.assert_both_paths(flt, view, helpers.make_request(), [True])
