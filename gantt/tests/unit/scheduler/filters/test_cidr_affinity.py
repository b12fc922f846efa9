"""SimpleCIDRAffinityFilter: build near an address (Nova's hints)."""

import pytest

from gantt import exception
from gantt.scheduler.pipeline.filters import cidr_affinity
from gantt.tests.unit.scheduler import helpers


def _view():
    """Hosts at addresses in 10.0.1.0/24, 10.0.0.0/16, elsewhere, in IPv6,
    and one that reports no address."""
    return helpers.make_view(
        helpers.node("near", capabilities={"host_ip": "10.0.1.17"}),
        helpers.node("same-16", capabilities={"host_ip": "10.0.200.3"}),
        helpers.node("far", capabilities={"host_ip": "192.168.0.5"}),
        helpers.node("v6", capabilities={"host_ip": "fd00::5"}),
        helpers.node("no-ip"))


@pytest.mark.parametrize("hints, expected", [
    # /24 by default: the address's host bits do not matter
    ({"build_near_host_ip": ["10.0.1.200"]},
     [True, False, False, False, False]),
    ({"build_near_host_ip": ["10.0.1.200"], "cidr": ["/16"]},
     [True, True, False, False, False]),
    ({"build_near_host_ip": ["10.0.1.200"], "cidr": ["/32"]},
     [False, False, False, False, False]),
    ({"build_near_host_ip": ["fd00::1"], "cidr": ["/64"]},
     [False, False, False, True, False]),
])
def test_hosts_on_the_network_pass(conf, hints, expected):
    request = helpers.make_request(scheduler_hints=hints)
    flt = cidr_affinity.SimpleCIDRAffinityFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _view(), request, expected)


@pytest.mark.parametrize("hints", [
    {"cidr": ["/16"]}, {"build_near_host_ip": [], "cidr": ["/16"]}])
def test_without_the_hint_every_host_passes(conf, hints):
    request = helpers.make_request(scheduler_hints=hints)
    assert not cidr_affinity.SimpleCIDRAffinityFilter(conf).applies(request)


@pytest.mark.parametrize("hints", [
    {"build_near_host_ip": ["not-an-address"]},
    {"build_near_host_ip": ["10.0.0.1"], "cidr": ["/40"]},
    {"build_near_host_ip": ["10.0.0.1"], "cidr": ["/x"]},
])
def test_a_bad_hint_is_an_invalid_request(conf, hints):
    request = helpers.make_request(scheduler_hints=hints)
    with pytest.raises(exception.InvalidRequest, match="build_near_host_ip"):
        cidr_affinity.SimpleCIDRAffinityFilter(conf).applies(request)


def test_a_host_reporting_no_address_fails(conf):
    """A host_ip that is no address is as good as none."""
    view = helpers.make_view(
        helpers.node("near", capabilities={"host_ip": "10.0.1.17"}),
        helpers.node("odd", capabilities={"host_ip": "rack-7"}))
    request = helpers.make_request(
        scheduler_hints={"build_near_host_ip": ["10.0.1.1"]})
    helpers.assert_both_paths(cidr_affinity.SimpleCIDRAffinityFilter(conf),
                              view, request, [True, False])


def test_two_requests_on_one_view_each_get_their_network(conf):
    """The view shares a column between requests asking the same
    question; a different network is a different question."""
    view = _view()
    flt = cidr_affinity.SimpleCIDRAffinityFilter(conf)
    for address, expected in (("10.0.1.1", [True, False, False, False,
                                            False]),
                              ("192.168.0.1", [False, False, True, False,
                                               False])):
        request = helpers.make_request(
            scheduler_hints={"build_near_host_ip": [address]})
        helpers.assert_both_paths(flt, view, request, expected)


def test_a_bad_hint_says_what_it_was(conf):
    request = helpers.make_request(scheduler_hints={
        "build_near_host_ip": ["10.0.0.1"], "cidr": ["/40"]})
    with pytest.raises(exception.InvalidRequest) as raised:
        cidr_affinity.network_of(request)
    assert str(raised.value).startswith(
        "Invalid request: scheduler hints build_near_host_ip=10.0.0.1 "
        "cidr=/40 do not make a network: ")
