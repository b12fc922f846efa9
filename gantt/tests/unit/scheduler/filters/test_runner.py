"""FilterRunner: filters in order, with the tally behind NoValidHost."""

import numpy as np
import pytest

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline.filters import availability_zone
from gantt.scheduler.pipeline.filters import compute_capabilities
from gantt.scheduler.pipeline.filters import compute_status
from gantt.scheduler.pipeline.filters import resources
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

DOWN = "were down (no report within service_down_time)"


def _runner(conf, *classes):
    return filters.FilterRunner([cls(conf) for cls in classes])


def _all(view):
    return np.ones(view.n, dtype=bool)


def _tally(outcome):
    """The non-zero (label, count) pairs (explain may report zeros)."""
    return [(label, count) for label, count in outcome.removed if count]


def test_summary_counts_each_host_once_by_first_lacking_class(conf):
    view = helpers.make_view(
        helpers.node("a", memory_mb=1024),
        helpers.node("b", memory_mb=1024, vcpus=1),
        helpers.node("c", vcpus=1))
    request = helpers.make_request(factories.flavor(vcpus=2, memory_mb=2048))
    outcome = _runner(conf, resources.ResourceFilter).run(
        view, request, _all(view))
    assert list(outcome.mask) == [False, False, False]
    assert outcome.summary() == (
        "0 of 3 hosts available: 2 lacked MEMORY_MB, 1 lacked VCPU")


def test_summary_follows_filter_order_then_count(conf):
    view = helpers.make_view(
        helpers.node("ok"),
        helpers.node("down"),
        helpers.node("disabled1", disabled=True),
        helpers.node("disabled2", disabled=True),
        helpers.node("small", vcpus=1),
        helpers.node("elsewhere", zone="az2"),
        ages={"down": 3600})
    for name in ("ok", "down", "disabled1", "disabled2", "small"):
        assert view.table.zone[view.row_of(factories.host_uuid(name))] == -1
    request = helpers.make_request(factories.flavor(vcpus=2))
    outcome = _runner(conf, compute_status.ComputeFilter,
                      resources.ResourceFilter).run(view, request, _all(view))
    assert list(outcome.mask) == [True, False, False, False, False, True]
    assert _tally(outcome) == [("were disabled", 2), (DOWN, 1),
                               ("lacked VCPU", 1)]
    assert outcome.summary() == (
        f"2 of 6 hosts available: 2 were disabled, 1 {DOWN}, "
        "1 lacked VCPU")


def test_filter_without_explain_is_counted_under_its_name(conf):
    view = helpers.make_view(helpers.node("a", zone="az1"),
                             helpers.node("b", zone="az2"),
                             helpers.node("c", zone="az2"))
    request = helpers.make_request(availability_zone="az1")
    outcome = _runner(conf, availability_zone.AvailabilityZoneFilter).run(
        view, request, _all(view))
    assert outcome.summary() == (
        "1 of 3 hosts available: 2 AvailabilityZoneFilter")


def test_filters_that_do_not_apply_are_not_tallied(conf):
    view = helpers.make_view(helpers.node("a", zone="az1"),
                             helpers.node("b", zone="az2"))
    request = helpers.make_request()   # no zone, no capabilities
    outcome = _runner(conf, availability_zone.AvailabilityZoneFilter,
                      compute_capabilities.ComputeCapabilitiesFilter).run(
        view, request, _all(view))
    assert list(outcome.mask) == [True, True]
    assert _tally(outcome) == []
    assert outcome.summary() == "2 of 2 hosts available"


def test_running_stops_once_no_host_is_left(conf):
    view = helpers.make_view(helpers.node("a", vcpus=1),
                             helpers.node("b", vcpus=1, zone="az2"))
    request = helpers.make_request(factories.flavor(vcpus=2),
                                   availability_zone="az1")
    outcome = _runner(conf, resources.ResourceFilter,
                      availability_zone.AvailabilityZoneFilter).run(
        view, request, _all(view))
    assert _tally(outcome) == [("lacked VCPU", 2)]
    assert outcome.summary() == "0 of 2 hosts available: 2 lacked VCPU"


def test_only_candidate_rows_are_counted(conf):
    view = helpers.make_view(helpers.node("a", vcpus=1),
                             helpers.node("b", vcpus=1),
                             helpers.node("c"))
    request = helpers.make_request(factories.flavor(vcpus=2))
    mask = np.array([False, True, True])
    outcome = _runner(conf, resources.ResourceFilter).run(view, request, mask)
    assert list(outcome.mask) == [False, False, True]
    assert _tally(outcome) == [("lacked VCPU", 1)]
    assert outcome.considered == 3
    # the caller's mask is not modified
    assert list(mask) == [False, True, True]


@pytest.mark.parametrize("skip_filters, expected", [
    (False, [False, False, False]),
    # forced hosts skip filters, never capacity
    (True, [True, False, True]),
])
def test_forced_hosts_skip_all_but_resource_filter(conf, skip_filters,
                                                   expected):
    view = helpers.make_view(helpers.node("disabled", disabled=True),
                             helpers.node("small", vcpus=1, disabled=True),
                             helpers.node("elsewhere", zone="az9"),
                             ages={"elsewhere": 3600})
    request = helpers.make_request(factories.flavor(vcpus=2),
                                   availability_zone="az1")
    outcome = _runner(conf, compute_status.ComputeFilter,
                      availability_zone.AvailabilityZoneFilter,
                      resources.ResourceFilter).run(
        view, request, _all(view), skip_filters=skip_filters)
    assert list(outcome.mask) == expected


def test_per_host_fallback_only_visits_remaining_rows(conf):
    visited = []

    class Recording(filters.BaseFilter):
        name = "Recording"

        def host_passes(self, host, request):
            visited.append(host.host)
            return host.host != "c"

    view = helpers.make_view(helpers.node("a", vcpus=1), helpers.node("b"),
                             helpers.node("c"))
    request = helpers.make_request(factories.flavor(vcpus=2))
    runner = filters.FilterRunner([resources.ResourceFilter(conf),
                                   Recording(conf)])
    outcome = runner.run(view, request, _all(view))
    assert visited == ["b", "c"]
    assert outcome.summary() == (
        "1 of 3 hosts available: 1 lacked VCPU, 1 Recording")
