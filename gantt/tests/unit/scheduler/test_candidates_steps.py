"""The candidates step as explain and "no valid host" report it.

Each step's reason and count, the hosts considered, what is recorded
only when asked, and an any-of trait set met by different providers of
different trees. (Written to kill mutants: see
doc/source/contributor/mutation.rst.)
"""

import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.state import aggregates
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

CELL = "aaaaaaaa-0000-4000-8000-000000000001"
AGG_A = "a0a0a0a0-0000-4000-8000-00000000000a"
AGG_B = "a0a0a0a0-0000-4000-8000-00000000000b"


def _view():
    """h0 in cell CELL and aggregate A, h1 in aggregate B, h2 in none."""
    cache = helpers.make_cache(helpers.node("h0", cell_uuid=CELL),
                               helpers.node("h1"), helpers.node("h2"))
    cache.apply_aggregates(aggregates.AggregateSet([
        aggregate_obj.Aggregate(uuid=AGG_A, name="a", hosts=["h0"]),
        aggregate_obj.Aggregate(uuid=AGG_B, name="b", hosts=["h1"])]))
    return helpers.view_of(cache)


def _kept(view, outcome):
    return [str(h) for h, k in zip(view.hosts, outcome.mask, strict=True)
            if k]


@pytest.mark.parametrize("destination, reason, kept", [
    (dict(host="h1"), "not the requested host", ["h1"]),
    (dict(node="h2"), "not the requested node", ["h2"]),
    (dict(cell_uuid=CELL), "not in the requested cell", ["h0"]),
    # any of the aggregates of one entry (spaces after the commas allowed)
    (dict(aggregates=["%s, %s" % (AGG_A, AGG_B)]),
     "not in the requested aggregates", ["h0", "h1"]),
])
def test_a_requested_destination_is_the_reason(destination, reason, kept):
    view = _view()
    outcome = candidates.for_request(view, helpers.make_request(
        requested_destination=request_spec.Destination(**destination)))
    assert _kept(view, outcome) == kept
    assert outcome.summary() == "%d of 3 hosts available: %d %s" % (
        len(kept), 3 - len(kept), reason)


def test_the_steps_are_recorded_only_when_asked():
    view = _view()
    request = helpers.make_request(force_hosts=["h0"])
    assert candidates.for_request(view, request).steps == []
    steps = candidates.for_request(view, request, record=True).steps
    assert [(label, counts) for label, counts, _rows in steps] == [
        ("not forced", [("not forced", 2)])]
    assert list(steps[0][2]) == [False, True, True]


def _tree(name, trait):
    child = provider.ResourceProvider(
        uuid=factories.host_uuid(name + "/nic"), name=name + "_nic",
        parent_provider_uuid=factories.host_uuid(name), traits=[trait],
        inventories=[compute_node.Inventory(resource_class="SRIOV_NET_VF",
                                            total=8)])
    return helpers.node(name, child_providers=[child])


def test_any_of_traits_on_the_providers_of_different_hosts():
    # trees whose child has one of the traits, and flat hosts that do
    view = helpers.make_view(_tree("ta", "CUSTOM_A"), _tree("tb", "CUSTOM_B"),
                             _tree("tc", "CUSTOM_C"),
                             helpers.node("fa", traits=["CUSTOM_A"]),
                             helpers.node("fb", traits=["CUSTOM_B"]),
                             helpers.node("fc", traits=["CUSTOM_C"]))
    request = helpers.make_request(request_groups=[request_spec.RequestGroup(
        suffix="1", resources={"SRIOV_NET_VF": 1},
        any_traits=[["CUSTOM_A", "CUSTOM_B"]])])
    outcome = candidates.for_request(view, request)
    assert _kept(view, outcome) == ["ta", "tb", "fa", "fb"]
    assert outcome.removed == [
        ("lacked any of traits CUSTOM_A,CUSTOM_B", 2)]


@pytest.mark.parametrize("fields, reason, kept", [
    (dict(root_required=["CUSTOM_GOLD"]), "root lacked trait CUSTOM_GOLD",
     ["h0"]),
    (dict(root_forbidden=["CUSTOM_GOLD"]),
     "root had forbidden trait CUSTOM_GOLD", ["h1", "h2"]),
])
def test_a_root_trait_is_the_reason(fields, reason, kept):
    view = helpers.make_view(helpers.node("h0", traits=["CUSTOM_GOLD"]),
                             helpers.node("h1"), helpers.node("h2"))
    outcome = candidates.for_request(view, helpers.make_request(**fields))
    assert _kept(view, outcome) == kept
    assert outcome.removed == [(reason, 3 - len(kept))]


def _groups(count):
    return [request_spec.RequestGroup(suffix=str(i), resources={"VCPU": 1})
            for i in range(1, count + 1)]


@pytest.mark.parametrize("groups, policy, removed", [
    # a flat host is one provider: it cannot give two groups two
    (2, "isolate", [("cannot isolate request groups", 1)]),
    (1, "isolate", []),
    (2, "none", []),
])
def test_isolated_groups_need_a_tree(groups, policy, removed):
    # the flavor asks for nothing: only the granular groups count
    view = helpers.make_view(_tree("tree", "CUSTOM_A"), helpers.node("flat"))
    outcome = candidates.for_request(view, helpers.make_request(
        factories.flavor(vcpus=0, memory_mb=0, root_gb=0),
        request_groups=_groups(groups), group_policy=policy))
    assert outcome.removed == removed
    assert _kept(view, outcome) == ["tree", "flat"][:2 - len(removed)]


@pytest.mark.parametrize("group, reason, kept", [
    (dict(member_of=[[AGG_B, AGG_A]]),
     "not in aggregates %s,%s" % (AGG_A, AGG_B), ["h0", "h1"]),
    (dict(forbidden_aggregates=[AGG_A]), "in forbidden aggregate %s" % AGG_A,
     ["h1", "h2"]),
    (dict(in_tree=factories.host_uuid("h2")),
     "not in tree %s" % factories.host_uuid("h2"), ["h2"]),
])
def test_a_request_groups_aggregates_and_tree_are_the_reason(group, reason,
                                                             kept):
    view = _view()
    outcome = candidates.for_request(view, helpers.make_request(
        request_groups=[request_spec.RequestGroup(
            suffix="1", resources={"VCPU": 1}, **group)]))
    assert _kept(view, outcome) == kept
    assert outcome.removed == [(reason, 3 - len(kept))]
