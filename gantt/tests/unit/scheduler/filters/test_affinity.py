"""Hard server-group policies and same_host / different_host hints."""

import pytest

from gantt.objects import request_spec
from gantt.scheduler.pipeline.filters import affinity
from gantt.tests.unit.scheduler import helpers

GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
HOSTS = ("h1", "h2", "h3")
VM_ON_H1 = "11111111-1111-4111-8111-111111111111"
VM_ON_H2 = "22222222-2222-4222-8222-222222222222"
VM_NOWHERE = "33333333-3333-4333-8333-333333333333"
LOOKUP_HOSTS = {VM_ON_H1: "h1", VM_ON_H2: "h2"}


def _view():
    return helpers.make_view(*[helpers.node(h) for h in HOSTS])


def _group_request(policy, placed=None, rules=None, caller_hosts=()):
    lookup = helpers.FakeLookup(group_hosts={GROUP: placed or {}})
    return helpers.make_request(
        lookup=lookup, instance_group=request_spec.InstanceGroup(
            uuid=GROUP, policy=policy, rules=dict(rules or {}),
            hosts=list(caller_hosts)))


@pytest.mark.parametrize("placed, rules, caller_hosts, expected", [
    ({}, {}, (), [True, True, True]),
    ({"h1": 1}, {}, (), [False, True, True]),
    ({"h1": 1, "h3": 1}, {}, (), [False, True, False]),
    ({"h1": 1}, {"max_server_per_host": "2"}, (), [True, True, True]),
    ({"h1": 2, "h2": 1}, {"max_server_per_host": "2"}, (),
     [False, True, True]),
    ({"h1": 3}, {"max_server_per_host": "2"}, (), [False, True, True]),
    # members the caller knows about but the database does not (yet)
    ({}, {}, ("h3",), [True, True, False]),
    # a member on a host this worker does not know changes nothing here
    ({"gone": 1}, {}, (), [True, True, True]),
])
def test_anti_affinity(conf, placed, rules, caller_hosts, expected):
    request = _group_request("anti-affinity", placed, rules, caller_hosts)
    flt = affinity.ServerGroupAntiAffinityFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _view(), request, expected)


@pytest.mark.parametrize("placed, expected", [
    ({"h2": 1}, [False, True, False]),
    ({"h2": 3}, [False, True, False]),
    # a group already split (e.g. by an evacuation): either of its hosts
    ({"h2": 1, "h3": 1}, [False, True, True]),
    ({"gone": 1}, [False, False, False]),
])
def test_affinity(conf, placed, expected):
    request = _group_request("affinity", placed)
    flt = affinity.ServerGroupAffinityFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _view(), request, expected)


def test_first_member_of_an_affinity_group_goes_anywhere(conf):
    request = _group_request("affinity", {})
    assert not affinity.ServerGroupAffinityFilter(conf).applies(request)


@pytest.mark.parametrize("policy, anti, aff", [
    ("anti-affinity", True, False),
    ("affinity", False, True),
    ("soft-anti-affinity", False, False),   # soft policies are weighers
    ("soft-affinity", False, False),
])
def test_which_group_filter_applies(conf, policy, anti, aff):
    request = _group_request(policy, {"h1": 1})
    assert affinity.ServerGroupAntiAffinityFilter(conf).applies(
        request) is anti
    assert affinity.ServerGroupAffinityFilter(conf).applies(request) is aff


def test_group_filters_ignore_requests_without_group(conf):
    request = helpers.make_request()
    assert not affinity.ServerGroupAntiAffinityFilter(conf).applies(request)
    assert not affinity.ServerGroupAffinityFilter(conf).applies(request)


@pytest.mark.parametrize("flt_class, hint, instances, expected", [
    (affinity.SameHostFilter, "same_host", [VM_ON_H1],
     [True, False, False]),
    (affinity.SameHostFilter, "same_host", [VM_ON_H1, VM_ON_H2],
     [True, True, False]),
    # the instances are nowhere: no host runs them
    (affinity.SameHostFilter, "same_host", [VM_NOWHERE],
     [False, False, False]),
    (affinity.DifferentHostFilter, "different_host", [VM_ON_H1],
     [False, True, True]),
    (affinity.DifferentHostFilter, "different_host", [VM_ON_H1, VM_ON_H2],
     [False, False, True]),
    (affinity.DifferentHostFilter, "different_host", [VM_NOWHERE],
     [True, True, True]),
])
def test_instance_hints(conf, flt_class, hint, instances, expected):
    request = helpers.make_request(
        lookup=helpers.FakeLookup(consumer_hosts=LOOKUP_HOSTS),
        scheduler_hints={hint: instances})
    flt = flt_class(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _view(), request, expected)


@pytest.mark.parametrize("flt_class", [affinity.SameHostFilter,
                                       affinity.DifferentHostFilter])
def test_hint_filters_ignore_requests_without_hints(conf, flt_class):
    assert not flt_class(conf).applies(helpers.make_request())
