"""ResourceFilter: Placement's inventory rule, per resource class."""

import numpy as np
import pytest

from gantt.objects import compute_node
from gantt.scheduler.pipeline.filters import resources
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import provider_tree
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers


def _only(rc, amount):
    """A flavor asking for ``amount`` of ``rc`` and nothing else."""
    return factories.flavor(vcpus=0, memory_mb=0, root_gb=0,
                            extra_specs={f"resources:{rc}": str(amount)})


# (inventory of CUSTOM_X, already used, requested, passes?)
PLACEMENT_RULES = [
    ("room", {"total": 8}, 0, 8, True),
    ("no room", {"total": 8}, 0, 9, False),
    ("used", {"total": 8}, 6, 2, True),
    ("used, one too many", {"total": 8}, 6, 3, False),
    ("reserved", {"total": 8, "reserved": 3}, 0, 5, True),
    ("reserved, one too many", {"total": 8, "reserved": 3}, 0, 6, False),
    ("ratio", {"total": 4, "allocation_ratio": 4.0}, 0, 16, True),
    ("ratio, one too many", {"total": 4, "allocation_ratio": 4.0}, 0, 17,
     False),
    ("fractional ratio", {"total": 3, "allocation_ratio": 1.5}, 0, 4, True),
    ("fractional ratio, over", {"total": 3, "allocation_ratio": 1.5}, 0, 5,
     False),
    ("ratio under one", {"total": 10, "allocation_ratio": 0.5}, 0, 6, False),
    ("reserved, ratio and used",
     {"total": 10, "reserved": 2, "allocation_ratio": 2.0}, 10, 6, True),
    ("reserved, ratio and used, over",
     {"total": 10, "reserved": 2, "allocation_ratio": 2.0}, 10, 7, False),
    ("below min_unit", {"total": 8, "min_unit": 2}, 0, 1, False),
    ("at min_unit", {"total": 8, "min_unit": 2}, 0, 2, True),
    ("at max_unit", {"total": 8, "max_unit": 4}, 0, 4, True),
    ("above max_unit", {"total": 8, "max_unit": 4}, 0, 5, False),
    ("on step", {"total": 8, "step_size": 2}, 0, 4, True),
    ("off step", {"total": 8, "step_size": 2}, 0, 3, False),
    ("on step, no room", {"total": 8, "step_size": 4}, 6, 4, False),
]


@pytest.mark.parametrize(
    "inventory, used, amount, expected",
    [row[1:] for row in PLACEMENT_RULES],
    ids=[row[0] for row in PLACEMENT_RULES])
def test_placement_rule(conf, inventory, used, amount, expected):
    node = helpers.node("h1", extra_inventories=[compute_node.Inventory(
        resource_class="CUSTOM_X", **inventory)])
    view = helpers.make_view(node, usages={"h1": {"CUSTOM_X": used}})
    request = helpers.make_request(_only("CUSTOM_X", amount))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view, request,
                              [expected])


@pytest.mark.parametrize("node_fields, flavor_fields, expected", [
    ({"vcpus": 4}, {"vcpus": 4}, True),
    ({"vcpus": 4}, {"vcpus": 5}, False),
    ({"vcpus": 4, "cpu_ratio": 16.0}, {"vcpus": 64}, True),
    ({"memory_mb": 4096, "reserved_memory_mb": 512},
     {"memory_mb": 3584}, True),
    ({"memory_mb": 4096, "reserved_memory_mb": 512},
     {"memory_mb": 3585}, False),
    ({"memory_mb": 4096, "ram_ratio": 1.5}, {"memory_mb": 6144}, True),
    ({"disk_gb": 20}, {"root_gb": 10, "ephemeral_gb": 10}, True),
    ({"disk_gb": 20}, {"root_gb": 10, "ephemeral_gb": 10, "swap": 1}, False),
    ({"disk_gb": 20, "disk_ratio": 2.0}, {"root_gb": 40}, True),
])
def test_flavor_against_standard_inventory(conf, node_fields, flavor_fields,
                                           expected):
    view = helpers.make_view(helpers.node("h1", **node_fields))
    request = helpers.make_request(factories.flavor(
        **dict({"vcpus": 1, "memory_mb": 1, "root_gb": 1}, **flavor_fields)))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view, request,
                              [expected])


def test_a_class_the_host_does_not_offer_never_fits(conf):
    view = helpers.make_view(helpers.node("h1"))
    request = helpers.make_request(_only("CUSTOM_GPU", 1))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view, request,
                              [False])


def test_every_requested_class_must_fit(conf):
    view = helpers.make_view(
        helpers.node("fits", vcpus=4, memory_mb=4096),
        helpers.node("no-cpu", vcpus=1, memory_mb=4096),
        helpers.node("no-ram", vcpus=4, memory_mb=1024),
        helpers.node("no-disk", vcpus=4, memory_mb=4096, disk_gb=5))
    request = helpers.make_request(factories.flavor(
        vcpus=2, memory_mb=2048, root_gb=10))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view, request,
                              [True, False, False, False])


def test_claims_of_this_request_count_on_both_paths(conf):
    view = helpers.make_view(helpers.node("h1", vcpus=4),
                             helpers.node("h2", vcpus=4))
    request = helpers.make_request(factories.flavor(vcpus=2))
    flt = resources.ResourceFilter(conf)
    helpers.assert_both_paths(flt, view, request, [True, True])
    view.consume(0, {"VCPU": 2})
    helpers.assert_both_paths(flt, view, request, [True, True])
    view.consume(0, {"VCPU": 1})
    helpers.assert_both_paths(flt, view, request, [False, True])


# -- explain ------------------------------------------------------------------


def test_explain_charges_the_first_lacking_class_by_name(conf):
    view = helpers.make_view(
        helpers.node("fits"),
        helpers.node("lacks-disk-and-ram", disk_gb=1, memory_mb=1),
        helpers.node("lacks-ram-and-cpu", memory_mb=1, vcpus=1),
        helpers.node("lacks-cpu", vcpus=1),
        helpers.node("lacks-all", vcpus=1, memory_mb=1, disk_gb=1))
    request = helpers.make_request(factories.flavor(
        vcpus=2, memory_mb=2048, root_gb=10))
    flt = resources.ResourceFilter(conf)
    removed = ~flt.passes_columns(view, request)
    assert list(removed) == [False, True, True, True, True]
    # DISK_GB < MEMORY_MB < VCPU: each host is counted once
    assert flt.explain(view, request, removed) == {
        "lacked DISK_GB": 2, "lacked MEMORY_MB": 1, "lacked VCPU": 1}


def test_explain_ignores_rows_not_removed(conf):
    view = helpers.make_view(helpers.node("a", vcpus=1),
                             helpers.node("b", vcpus=1))
    request = helpers.make_request(factories.flavor(vcpus=2))
    counts = resources.ResourceFilter(conf).explain(
        view, request, np.array([False, True]))
    assert counts["lacked VCPU"] == 1
    assert sum(counts.values()) == 1


# (the NUMA cells' VCPU inventory, VCPUs used on cell 0 and on cell 1,
# VCPUs asked for, passes?): cell 0 holds more than it has (its inventory
# shrank under its usage), so the tree's sums understate the room cell 1
# still has, and the tree is judged again on its usage within capacity,
# with each cell's unit rules
TREE_RULES = [
    # the sums say 16 - 10 = 6 free, but cell 1 alone has 8
    ("cell 1 empty", {}, 10, 0, 8, True),
    ("cell 1 empty, one too many", {}, 10, 0, 9, False),
    ("an odd amount with no step", {}, 10, 0, 7, True),
    ("on step", {"step_size": 2}, 10, 0, 8, True),
    ("off step", {"step_size": 2}, 10, 0, 7, False),
    # the sums say 16 - 16 = 0 free, but cell 1 has 4
    ("at min_unit", {"min_unit": 4}, 12, 4, 4, True),
    ("below min_unit", {"min_unit": 4}, 12, 4, 3, False),
]


def _tree_cache(used_on_cells, **cell_vcpu):
    """A cache holding one NUMA tree ``tv`` whose cells have 8 VCPUs each
    (with ``cell_vcpu`` inventory fields) and use ``used_on_cells``."""
    from gantt.tests.functional import test_provider_trees as trees
    node = trees.tree_node("tv")
    for child in node.child_providers:
        for inventory in child.inventories:
            if inventory.resource_class == "VCPU":
                for field, value in cell_vcpu.items():
                    setattr(inventory, field, value)
    cache = helpers.make_cache(node)
    for cell, used in enumerate(used_on_cells):
        cache.apply_usage(factories.host_uuid("tv-numa%d" % cell), 1,
                          {"VCPU": used})
    return cache


@pytest.mark.parametrize(
    "cell_vcpu, used0, used1, vcpus, expected",
    [row[1:] for row in TREE_RULES], ids=[row[0] for row in TREE_RULES])
def test_a_tree_is_judged_on_its_usage_within_each_provider(
        conf, cell_vcpu, used0, used1, vcpus, expected):
    cache = _tree_cache([used0, used1], **cell_vcpu)
    view = cache.view(helpers.SERVICE_DOWN_TIME)
    request = helpers.make_request(
        factories.flavor(vcpus=vcpus, memory_mb=512, root_gb=10))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view,
                              request, [expected])


@pytest.mark.parametrize("memory_mb, expected", [(32768, True),
                                                 (32769, False)])
def test_a_tree_without_excess_gets_no_second_chance(conf, memory_mb,
                                                     expected):
    # only the VCPUs of cell 0 are over-full: the tree's memory is judged
    # on its sums alone, 2 x 16384 MB
    cache = _tree_cache([10, 0])
    view = cache.view(helpers.SERVICE_DOWN_TIME)
    request = helpers.make_request(
        factories.flavor(vcpus=1, memory_mb=memory_mb, root_gb=10))
    helpers.assert_both_paths(resources.ResourceFilter(conf), view,
                              request, [expected])


def test_a_host_in_a_sharing_pool_s_aggregate_is_left_to_the_solver(conf):
    # a diskless host in the aggregate of a pool that shares DISK_GB may
    # get its disk from the pool: the filter keeps it, whatever it lacks
    # (the allocation candidates judge the pool); one outside is refused
    from gantt.tests.functional import test_provider_trees as trees
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_provider(provider_tree.Provider(
        uuid=trees.POOL, name="pool", parent_uuid=None, root_uuid=trees.POOL,
        inventories={"DISK_GB": (1000, 0, 1, 1000, 1, 1.0)},
        traits={"MISC_SHARES_VIA_AGGREGATE"},
        aggregates={trees.POOL_AGG}), 1)
    for name, aggregates in (("in-pool", [trees.POOL_AGG]), ("alone", [])):
        node = helpers.node(name, aggregates=aggregates)
        node.inventories = [i for i in node.inventories
                            if i.resource_class != "DISK_GB"]
        cache.apply_report(helpers.host_report(node))
    view = helpers.view_of(cache)
    request = helpers.make_request(factories.flavor(root_gb=10))
    # the pool is a row too, in its own aggregate, so the filter leaves it
    # to the solver as well; it is of kind pool, which the candidates'
    # first step keeps out of compute requests
    assert list(view.hosts) == ["pool", "in-pool", "alone"]
    helpers.assert_both_paths(resources.ResourceFilter(conf), view,
                              request, [True, True, False])
