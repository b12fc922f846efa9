"""The in-memory provider model (gantt.scheduler.state.provider_tree)."""

import dataclasses
import threading

import pytest

from gantt.scheduler.state import provider_tree as pt

SHARES = pt.SHARES_VIA_AGGREGATE


def inv(total, reserved=0, min_unit=1, max_unit=None, step=1, ratio=1.0):
    return (total, reserved, min_unit, max_unit or total, step, ratio)


def prov(uuid, parent=None, root=None, inventories=None, traits=(),
         aggs=(), usage=None, generation=-1):
    return pt.Provider(uuid, uuid, parent, root or parent or uuid,
                       generation=generation,
                       inventories=inventories or {}, usage=usage or {},
                       traits=frozenset(traits), aggregates=frozenset(aggs))


# -------------------------------------------------------------- Provider


# Placement's capacity: int((total - reserved) * allocation_ratio)
# (_build_provider_summaries, placement/objects/allocation_candidate.py)
# and its per-amount checks (_capacity_check_clause, research_context.py)
@pytest.mark.parametrize("inventory,used,amount,already,fits", [
    (inv(8), 0, 8, 0, True),
    (inv(8), 1, 8, 0, False),                    # capacity
    (inv(8, reserved=2), 0, 7, 0, False),        # reserved
    (inv(8, max_unit=16, ratio=1.5), 0, 12, 0, True),     # overcommit
    (inv(8, max_unit=16, ratio=1.5), 0, 13, 0, False),
    (inv(3, max_unit=9, ratio=1.5), 0, 4, 0, True),       # int(4.5) == 4
    (inv(3, max_unit=9, ratio=1.5), 0, 5, 0, False),
    (inv(8, min_unit=2), 0, 1, 0, False),        # min_unit
    (inv(8, max_unit=4), 0, 5, 0, False),        # max_unit
    (inv(8, step=2), 0, 3, 0, False),            # step_size
    (inv(8, step=2), 0, 4, 0, True),
    (inv(8), 2, 4, 2, True),                     # already + used + amount
    (inv(8), 2, 4, 3, False),
    (inv(8, max_unit=4), 0, 4, 4, True),         # max_unit: amount only
])
def test_fits(inventory, used, amount, already, fits):
    p = prov("p", inventories={"VCPU": inventory}, usage={"VCPU": used})
    assert p.fits("VCPU", amount, already) is fits


def test_capacity_free_and_missing_class():
    p = prov("p", inventories={"VCPU": inv(8, reserved=2, ratio=2.0)},
             usage={"VCPU": 5})
    assert p.capacity("VCPU") == 12
    assert p.free("VCPU") == 7
    assert p.max_unit("VCPU") == 8
    assert p.capacity("DISK_GB") == 0
    assert not p.fits("DISK_GB", 1)


def test_sharing_is_the_trait():
    # get_sharing_providers (research_context.py): the trait, nothing else
    assert prov("s", traits=[SHARES], aggs=["a"]).sharing
    assert not prov("s", aggs=["a"]).sharing


def test_equal_inventories_are_held_once():
    a = prov("a", inventories={"VCPU": inv(8)})
    b = prov("b", inventories={"VCPU": inv(8)})
    assert a.inventories is b.inventories
    assert a.limits is b.limits


def test_inventories_held_are_bounded_and_shared_by_threads():
    held = pt._InventoryLimits(size=4)
    first = held({"VCPU": inv(1)})
    for total in range(2, 12):
        held({"VCPU": inv(total)})
    assert len(held._held) <= 4
    again = held({"VCPU": inv(1)})
    assert again == first and again is not first    # cleared since
    wrong = []

    def build(offset):
        for total in range(200):
            inventories, limits = held({"VCPU": inv(total + offset % 2)})
            if limits["VCPU"][0] != total + offset % 2:
                wrong.append(limits)

    threads = [threading.Thread(target=build, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_replace_keeps_limits_right():
    a = prov("a", inventories={"VCPU": inv(8)}, usage={"VCPU": 2})
    b = dataclasses.replace(a, inventories={"VCPU": inv(4)})
    assert b.capacity("VCPU") == 4 and b.free("VCPU") == 2


# -------------------------------------------------------- ProviderIndex


def numa_tree(root="cn", aggs=(), child_aggs=(), usage=None):
    return [prov(root, inventories={"DISK_GB": inv(100)}, aggs=aggs,
                 usage=usage),
            prov(root + "-n0", root, inventories={"VCPU": inv(4)},
                 aggs=child_aggs),
            prov(root + "-n1", root, inventories={"VCPU": inv(4)})]


def test_set_tree_and_read():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree())
    assert [p.uuid for p in index.tree("cn")] == ["cn", "cn-n0", "cn-n1"]
    assert index.get("cn-n1").root_uuid == "cn"
    assert index.roots() == ["cn"]
    assert "cn" in index and len(index) == 1
    assert index.tree("nope") == ()
    assert index.get("nope") is None


@pytest.mark.parametrize("providers", [
    [],
    [prov("x")],                                   # root not first
    [prov("cn-n0", "cn"), prov("cn")],             # child before root
    [prov("cn"), prov("c2", "c1", root="cn"), prov("c1", "cn")],
    [prov("cn"), prov("cn-n0", "other")],          # another root
    [prov("cn"), prov("a", "cn"), prov("a", "cn")],   # twice
])
def test_set_tree_refuses_bad_order(providers):
    with pytest.raises(ValueError):
        pt.ProviderIndex().set_tree("cn", providers)


def test_set_tree_keeps_usage_of_providers_that_stay():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree())
    assert index.apply_usage("cn-n0", 3, {"VCPU": 2})
    index.set_tree("cn", numa_tree())
    kept = index.get("cn-n0")
    assert kept.usage == {"VCPU": 2} and kept.generation == 3
    # a provider carrying a generation brings its own usage
    tree = numa_tree()
    tree[1] = dataclasses.replace(tree[1], generation=7, usage={"VCPU": 1})
    index.set_tree("cn", tree)
    assert index.get("cn-n0").usage == {"VCPU": 1}
    assert index.get("cn-n0").generation == 7


def test_set_tree_drops_providers_that_left():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree())
    index.set_tree("cn", numa_tree()[:2])
    assert index.get("cn-n1") is None
    assert len(index.tree("cn")) == 2


def test_provider_moving_to_another_tree_leaves_the_first():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree())
    index.set_tree("cn2", [prov("cn2"), prov("cn-n1", "cn2")])
    assert [p.uuid for p in index.tree("cn")] == ["cn", "cn-n0"]
    assert index.get("cn-n1").root_uuid == "cn2"


def test_apply_usage_only_news_and_published_objects_never_change():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree())
    before_tree = index.tree("cn")
    before = index.get("cn-n0")
    assert index.apply_usage("cn-n0", 1, {"VCPU": 3})
    assert not index.apply_usage("cn-n0", 1, {"VCPU": 4})   # same gen
    assert not index.apply_usage("cn-n0", 0, {"VCPU": 4})   # older
    assert not index.apply_usage("nope", 5, {"VCPU": 4})
    assert index.get("cn-n0").usage == {"VCPU": 3}
    assert index.tree("cn")[1] is index.get("cn-n0")
    # readers holding the old objects see them unchanged
    assert before.usage == {} and before_tree[1] is before


def test_remove_tree():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree(aggs=["a"]))
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["a"])])
    assert index.remove_tree("cn")
    assert not index.remove_tree("cn")
    assert index.get("cn-n0") is None and index.roots() == ["ss"]
    assert index.trees_sharing("ss") == set()


def test_sharing_through_any_provider_of_the_tree():
    # anchors_for_sharing_providers (research_context.py): the root of
    # every provider in one of the sharing provider's aggregates
    index = pt.ProviderIndex()
    index.set_tree("cn1", numa_tree("cn1", aggs=["a"]))
    index.set_tree("cn2", numa_tree("cn2", child_aggs=["a"]))
    index.set_tree("cn3", numa_tree("cn3", aggs=["b"]))
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["a"])])
    index.set_tree("pool", [prov("pool", aggs=["a"])])   # not sharing
    assert [p.uuid for p in index.sharing_for("cn1")] == ["ss"]
    assert [p.uuid for p in index.sharing_for("cn2")] == ["ss"]
    assert index.sharing_for("cn3") == ()
    assert index.sharing_for("ss") == ()                 # not itself
    assert index.trees_sharing("ss") == {"cn1", "cn2", "pool"}
    assert index.trees_sharing("pool") == set()
    assert index.trees_sharing("cn1-n0") == set()


def test_two_sharing_providers_serve_each_other():
    index = pt.ProviderIndex()
    index.set_tree("s1", [prov("s1", traits=[SHARES], aggs=["a"])])
    index.set_tree("s2", [prov("s2", traits=[SHARES], aggs=["a"])])
    assert [p.uuid for p in index.sharing_for("s1")] == ["s2"]
    assert index.trees_sharing("s1") == {"s2"}


def test_sharing_index_follows_changes():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree(aggs=["a"]))
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["a"])])
    assert not index.is_simple("cn")
    # the pool moves to another aggregate
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["b"])])
    assert index.sharing_for("cn") == ()
    # the tree joins it through a child
    index.set_tree("cn", numa_tree(child_aggs=["b"]))
    assert [p.uuid for p in index.sharing_for("cn")] == ["ss"]
    # the pool stops sharing
    index.set_tree("ss", [prov("ss", aggs=["b"])])
    assert index.sharing_for("cn") == ()
    index.remove_tree("ss")
    assert index.sharing_for("cn") == ()


def test_sharing_for_sees_fresh_usage():
    index = pt.ProviderIndex()
    index.set_tree("cn", numa_tree(aggs=["a"]))
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["a"],
                               inventories={"DISK_GB": inv(10)})])
    index.apply_usage("ss", 1, {"DISK_GB": 4})
    assert index.sharing_for("cn")[0].free("DISK_GB") == 6


def test_is_simple():
    index = pt.ProviderIndex()
    index.set_tree("lone", [prov("lone", aggs=["a"])])
    index.set_tree("cn", numa_tree())
    assert index.is_simple("lone")
    assert not index.is_simple("cn")               # children
    assert not index.is_simple("nope")
    index.set_tree("ss", [prov("ss", traits=[SHARES], aggs=["a"])])
    assert not index.is_simple("lone")             # a pool serves it
    assert index.is_simple("ss")                   # nothing serves it


def test_equal_trait_sets_are_held_once():
    index = pt.ProviderIndex()
    traits = ["HW_CPU_X86_AVX", "HW_CPU_X86_AVX2"]
    index.set_tree("a", [prov("a", traits=traits)])
    index.set_tree("b", [prov("b", traits=list(reversed(traits)))])
    assert index.get("a").traits is index.get("b").traits


def test_set_tree_never_changes_the_providers_given():
    index = pt.ProviderIndex()
    index.set_tree("a", [prov("a", traits=["CUSTOM_X"])])
    mine = prov("b", traits=["CUSTOM_X"])
    traits = mine.traits
    index.set_tree("b", [mine])
    assert mine.traits is traits
    assert index.get("b").traits is index.get("a").traits
