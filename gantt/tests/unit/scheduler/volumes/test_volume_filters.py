"""CapacityFilter, CapabilitiesFilter and DriverFilter, both paths each.

The numbers of the capacity cases are worked by hand from Cinder's
``calculate_capacity_factors`` (and checked against the real Cinder by
``tools/cinder_diff.sh``).
"""

import pytest

from gantt.scheduler.pipeline.filters import driver
from gantt.scheduler.pipeline.filters import volume_capabilities
from gantt.scheduler.pipeline.filters import volume_capacity
from gantt.tests.fixtures import make_conf
from gantt.tests.unit.scheduler.helpers import assert_both_paths
from gantt.tests.unit.scheduler.volumes.builders import Pool
from gantt.tests.unit.scheduler.volumes.builders import view
from gantt.tests.unit.scheduler.volumes.builders import volume

THIN = {"thin_provisioning_support": True, "free_capacity_gb": 1}


@pytest.fixture(scope="module")
def capacity():
    return volume_capacity.CapacityFilter(make_conf())


def test_thick_pools_need_the_smaller_of_free_and_unprovisioned(capacity):
    pools = view(
        Pool("roomy", total=100, caps={"free_capacity_gb": 60}),
        # the backend says less is free than Gantt's allocations leave
        Pool("short", total=100, used=10, caps={"free_capacity_gb": 49}),
        # allocations leave less than the backend reports free
        Pool("booked", total=100, used=55, caps={"free_capacity_gb": 90}),
        # reserved comes off the total: 100 - 10 - 41 = 49
        Pool("reserved", total=100, reserved=10, used=41,
             caps={"free_capacity_gb": 90}),
    )
    assert_both_paths(capacity, pools, volume(50),
                      [True, False, False, False])


def test_thin_pools_over_subscribe_up_to_the_ratio(capacity):
    pools = view(
        # (1000 - 0) * 2.0 - 1900 = 100 virtual free (the physical free
        # space does not count)
        Pool("thin", total=1000, ratio=2.0, used=1900, caps=THIN),
        # 2000 - 1960 = 40 virtual free
        Pool("full", total=1000, ratio=2.0, used=1960, caps=THIN),
        # the same pool, not thin-capable: the physical free 100 is used
        Pool("thick", total=1000, ratio=2.0, used=900,
             caps={"thin_provisioning_support": False,
                   "free_capacity_gb": 100}),
        # a thin-capable pool with a ratio below 1 is refused, as Cinder
        Pool("bad ratio", total=1000, ratio=0.5, caps=THIN),
    )
    assert_both_paths(capacity, pools, volume(50),
                      [True, False, True, False])


def test_a_thin_pool_without_over_subscription_takes_its_room(capacity):
    # a ratio of exactly 1: thin provisioning up to the pool's size
    pools = view(Pool("thin 1.0", total=100, ratio=1.0, used=40, caps=THIN),
                 Pool("thin 1.0 full", total=100, ratio=1.0, used=60,
                      caps=THIN))
    assert_both_paths(capacity, pools, volume(50), [True, False])


def test_exact_fits_pass(capacity):
    """The volume takes exactly what is left: a thin pool of ratio 1, a
    thin pool of 1 GB, a thick pool whose free space is the volume."""
    pools = view(Pool("thin exact", total=100, ratio=1.0, used=50,
                      caps=THIN),
                 Pool("thin 1 GB", total=1, ratio=1.0, caps=THIN),
                 Pool("thick exact", total=100, used=50,
                      caps={"free_capacity_gb": 50}))
    assert_both_paths(capacity, pools, volume(50), [True, False, True])
    assert_both_paths(capacity, view(Pool("thin 1 GB", total=1, ratio=1.0,
                                          caps=THIN)), volume(1), [True])


def test_a_thick_volume_type_ignores_over_subscription(capacity):
    pools = view(Pool("thin", total=1000, ratio=20.0, used=980,
                      caps=THIN))
    assert_both_paths(capacity, pools, volume(50), [True])
    thick = volume(50, {"provisioning:type": "thick"})
    assert_both_paths(capacity, pools, thick, [False])


def test_infinite_and_unknown_capacities(capacity):
    pools = view(
        Pool("free inf", total=1, caps={"free_capacity_gb": "infinite"}),
        Pool("free unknown", total=1, caps={"free_capacity_gb": "unknown"}),
        Pool("total unknown", total=1,
             caps={"total_capacity_gb": "unknown", "free_capacity_gb": 0}),
        Pool("total unknown, reserved", total=1,
             caps={"total_capacity_gb": "infinite", "free_capacity_gb": 0,
                   "reserved_percentage": 5}),
    )
    assert_both_paths(capacity, pools, volume(500),
                      [True, True, True, False])


def test_typed_values_and_their_text_agree(capacity):
    typed = Pool("typed", total=1000, ratio=2.0, used=1900, caps=THIN)
    text = Pool("text", total=1000, ratio=2.0, used=1900,
                caps={"thin_provisioning_support": "True",
                      "free_capacity_gb": "100"})
    assert_both_paths(capacity, view(typed, text), volume(50), [True, True])
    assert_both_paths(capacity, view(typed, text), volume(150),
                      [False, False])


def test_no_inventory_or_no_free_report(capacity):
    pools = view(
        # free_capacity_gb not reported: total - provisioned is used
        Pool("silent", total=100, used=40),
        Pool("silent full", total=100, used=60),
        Pool("empty", total=0, caps={"free_capacity_gb": 10}),
    )
    assert_both_paths(capacity, pools, volume(50), [True, False, False])


def test_removed_pools_are_counted_by_cause(capacity):
    pools = view(
        Pool("fits", total=100, caps={"free_capacity_gb": 100}),
        Pool("thick", total=100, caps={"free_capacity_gb": 10}),
        Pool("thin", total=100, ratio=1.2, used=100, caps=THIN),
        Pool("ratio", total=100, ratio=0.5, caps=THIN),
        Pool("empty", total=0, caps={"free_capacity_gb": 0}),
        Pool("unknown", total=1, caps={"total_capacity_gb": "unknown",
                                       "free_capacity_gb": 0,
                                       "reserved_percentage": 5}),
    )
    request = volume(50)
    removed = ~capacity.passes_columns(pools, request)
    assert capacity.explain(pools, request, removed) == {
        "reported an unknown total and a reserved percentage": 1,
        "had no capacity": 1,
        "had an over-subscription ratio below 1": 1,
        "lacked thin-provisioned room (Cinder's virtual free capacity)": 1,
        "lacked free capacity": 1,
    }



def test_the_causes_border_cases(capacity):
    pools = view(
        # one GB is some capacity: too little, not none
        Pool("tiny", total=1, caps={"free_capacity_gb": 1}),
        # a ratio of exactly 1 is allowed: the thin room ran out
        Pool("thin 1.0", total=100, ratio=1.0, used=100, caps=THIN),
    )
    request = volume(50)
    removed = ~capacity.passes_columns(pools, request)
    assert capacity.explain(pools, request, removed) == {
        "reported an unknown total and a reserved percentage": 0,
        "had no capacity": 0,
        "had an over-subscription ratio below 1": 0,
        "lacked thin-provisioned room (Cinder's virtual free capacity)": 1,
        "lacked free capacity": 1,
    }
    # a thick volume type is refused on a thin pool's physical free space
    thick = volume(50, {"provisioning:type": "thick"})
    removed = ~capacity.passes_columns(pools, thick)
    counts = capacity.explain(pools, thick, removed)
    assert counts["lacked free capacity"] == 2
    assert counts[
        "lacked thin-provisioned room (Cinder's virtual free capacity)"] == 0


def test_a_volume_without_size_passes_everywhere(capacity):
    assert not capacity.applies(volume(0))
    assert capacity.applies(volume(1))


@pytest.fixture(scope="module")
def capabilities():
    return volume_capabilities.CapabilitiesFilter(make_conf())


def test_volume_type_specs_match_capabilities(capabilities):
    pools = view(
        Pool("a", caps={"vendor_name": "Acme", "QoS_support": True,
                        "total_volumes": 12,
                        "pool_info": '{"tier": "gold"}'}),
        Pool("b", caps={"vendor_name": "Other", "QoS_support": "False",
                        "total_volumes": "3",
                        "pool_info": '{"tier": "bronze"}'}),
        Pool("c", caps={}),
    )
    cases = [
        ({"vendor_name": "Acme"}, [True, False, False]),
        ({"capabilities:vendor_name": "<or> Other <or> Nope"},
         [False, True, False]),
        ({"QoS_support": "<is> True"}, [True, False, False]),
        ({"capabilities:QoS_support": "<is> False"}, [False, True, False]),
        ({"total_volumes": "<= 10"}, [False, True, False]),
        ({"capabilities:pool_info:tier": "s== gold"}, [True, False, False]),
        ({"vendor_name": "<in> Ac", "total_volumes": ">= 5"},
         [True, False, False]),
        # other scopes are not capabilities: ignored
        ({"provisioning:type": "thin", "acme:x": "1"}, [True, True, True]),
    ]
    for specs, expected in cases:
        assert_both_paths(capabilities, pools, volume(1, specs), expected)



def test_specs_after_another_scope_are_still_checked(capabilities):
    pools = view(Pool("a", caps={"vendor_name": "Acme"}),
                 Pool("b", caps={"vendor_name": "Other"}))
    specs = {"provisioning:type": "thin", "vendor_name": "Acme"}
    assert_both_paths(capabilities, pools, volume(1, specs), [True, False])


def test_a_list_capability_matches_any_of_its_items(capabilities):
    pools = view(Pool("a", caps={"pool_info": '{"tiers": ["gold", "iron"]}'}),
                 Pool("b", caps={"pool_info": '{"tiers": ["bronze"]}'}))
    specs = {"capabilities:pool_info:tiers": "iron"}
    assert_both_paths(capabilities, pools, volume(1, specs), [True, False])


def test_an_is_without_operand_matches_nothing(capabilities):
    pools = view(Pool("a", caps={"QoS_support": True}),
                 Pool("b", caps={"QoS_support": False}))
    assert_both_paths(capabilities, pools,
                      volume(1, {"QoS_support": "<is>"}), [False, False])

def test_a_storage_protocol_matches_as_reported(capabilities):
    # Cinder's pools keep the reported spelling in their capabilities (only
    # the backend functions see the variants)
    pools = view(Pool("a", caps={"storage_protocol": "iSCSI"}),
                 Pool("b", caps={"storage_protocol": "iscsi"}))
    assert_both_paths(capabilities, pools,
                      volume(1, {"storage_protocol": "iscsi"}),
                      [False, True])


def test_no_volume_type_specs_means_nothing_to_check(capabilities):
    assert not capabilities.applies(volume(1))
    assert not capabilities.applies(volume(1, {"provisioning:type": "x"}))
    assert capabilities.applies(volume(1, {"vendor_name": "Acme"}))


def test_every_spec_must_match(capabilities):
    pools = view(Pool("a", caps={"vendor_name": "Acme", "total_volumes": 12}),
                 Pool("b", caps={"vendor_name": "Other", "total_volumes": 3}))
    specs = {"vendor_name": "Acme", "total_volumes": "<= 10"}
    assert_both_paths(capabilities, pools, volume(1, specs), [False, False])


@pytest.fixture(scope="module")
def functions():
    return driver.DriverFilter(make_conf())


def test_the_backends_filter_function_decides(functions):
    pools = view(
        Pool("none", caps={}),
        Pool("small only", caps={"filter_function": "volume.size < 10"}),
        Pool("by room", total=100, used=30, caps={
            "filter_function":
                "stats.total_capacity_gb - stats.allocated_capacity_gb"
                " >= volume.size and extra.tier == gold"}),
        Pool("broken", caps={"filter_function": "volume.size <"}),
        Pool("hostile", caps={"filter_function": "9 ^ 9 ^ 9 ^ 9 > 1"}),
        Pool("unknown var", caps={"filter_function": "stats.nope > 1"}),
    )
    gold = {"tier": "gold"}
    assert_both_paths(functions, pools, volume(5, gold),
                      [True, True, True, False, False, False])
    assert_both_paths(functions, pools, volume(70, gold),
                      [True, False, True, False, False, False])
    assert_both_paths(functions, pools, volume(71, gold),
                      [True, False, False, False, False, False])
    assert_both_paths(functions, pools, volume(5, {"tier": "lead"}),
                      [True, True, False, False, False, False])


def test_a_function_reading_the_protocol_passes_on_any_spelling(
        functions):
    text = "stats.storage_protocol == 'iscsi'"
    pools = view(Pool("a", caps={"storage_protocol": "iSCSI",
                                 "filter_function": text}),
                 Pool("b", caps={"storage_protocol": "NFS",
                                 "filter_function": text}))
    assert_both_paths(functions, pools, volume(1), [True, False])


def test_the_plugins_apply_to_volume_providers():
    for cls in (volume_capacity.CapacityFilter,
                volume_capabilities.CapabilitiesFilter, driver.DriverFilter):
        assert cls.provider_kinds == frozenset({"volume"})
