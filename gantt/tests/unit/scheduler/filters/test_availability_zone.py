"""AvailabilityZoneFilter: hosts of the requested availability zone only."""

import pytest

from gantt.scheduler.pipeline.filters import availability_zone
from gantt.tests.unit.scheduler import helpers


@pytest.mark.parametrize("host_zone, wanted, expected", [
    ("az1", "az1", True),
    ("az1", "az2", False),
    (None, "az1", False),
    ("az1", "unknown-zone", False),
    ("AZ1", "az1", False),      # zone names are case-sensitive
])
def test_availability_zone_filter(conf, host_zone, wanted, expected):
    view = helpers.make_view(helpers.node("h1", zone=host_zone),
                             helpers.node("other", zone="elsewhere"))
    request = helpers.make_request(availability_zone=wanted)
    flt = availability_zone.AvailabilityZoneFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, view, request, [expected, False])


def test_several_hosts_of_one_zone(conf):
    view = helpers.make_view(helpers.node("a", zone="az1"),
                             helpers.node("b", zone="az2"),
                             helpers.node("c", zone="az1"),
                             helpers.node("d"))
    request = helpers.make_request(availability_zone="az1")
    helpers.assert_both_paths(availability_zone.AvailabilityZoneFilter(conf),
                              view, request, [True, False, True, False])


@pytest.mark.parametrize("wanted", [None, ""])
def test_no_zone_requested_means_any_host(conf, wanted):
    request = helpers.make_request(availability_zone=wanted)
    assert not availability_zone.AvailabilityZoneFilter(conf).applies(request)


@pytest.mark.parametrize("aggregate_zones, reported, expected", [
    (["az2", "az3"], "az1", {"az2", "az3"}),   # the aggregates' zones win
    ([], "az1", {"az1"}),
    ([], None, set()),                        # no zone: `gantt host list`
    ([], "", set()),                          # shows none, not "None"
])
def test_the_zones_a_host_is_in(aggregate_zones, reported, expected):
    assert availability_zone.zones_of(aggregate_zones, reported) == expected
