"""The in-memory allocation-candidates solver against Placement's rules.

Cases cite where Placement documents or implements the behaviour they
pin: "tree doc" is openstack/placement doc/source/user/provider-tree.rst,
"ac.py" placement/objects/allocation_candidate.py, "rc.py"
placement/objects/research_context.py, "rpc.py"
placement/objects/rp_candidates.py, "lib.py" placement/lib.py.
"""

import collections
import itertools
import random

import pytest

from gantt.scheduler.pipeline import allocation_candidates as ac
from gantt.scheduler.pipeline.request import ResourceGroup
from gantt.scheduler.state import provider_tree as pt

SHARES = pt.SHARES_VIA_AGGREGATE


def inv(total, reserved=0, min_unit=1, max_unit=None, step=1, ratio=1.0):
    return (total, reserved, min_unit, max_unit or total, step, ratio)


def P(uuid, parent=None, inventories=None, traits=(), aggs=(), usage=None):
    """A provider spec; its root is found by :func:`build`."""
    return (uuid, parent, inventories or {}, frozenset(traits),
            frozenset(aggs), usage or {})


def build(*specs):
    """A ProviderIndex of ``specs`` (parents before children)."""
    root_of, trees = {}, collections.defaultdict(list)
    for uuid, parent, inventories, traits, aggs, usage in specs:
        root = root_of[parent] if parent else uuid
        root_of[uuid] = root
        trees[root].append(pt.Provider(
            uuid, uuid, parent, root, generation=1,
            inventories={rc: (v if isinstance(v, tuple) else inv(v))
                         for rc, v in inventories.items()},
            usage=usage, traits=traits, aggregates=aggs))
    index = pt.ProviderIndex()
    for root, providers in trees.items():
        index.set_tree(root, providers)
    return index


def G(suffix="", res=None, required=(), forbidden=(), any_of=(),
      member_of=(), forbidden_aggs=(), in_tree=None):
    return ResourceGroup(
        suffix=suffix, resources=dict(res or {}),
        required_traits=frozenset(required),
        forbidden_traits=frozenset(forbidden),
        any_traits=tuple(frozenset(a) for a in any_of),
        member_of=tuple(frozenset(m) for m in member_of),
        forbidden_aggregates=frozenset(forbidden_aggs), in_tree=in_tree)


def Q(*groups, policy=None, same_subtree=(), root_required=(),
      root_forbidden=()):
    return ac.CandidateQuery(
        tuple(groups), policy, tuple(frozenset(s) for s in same_subtree),
        frozenset(root_required), frozenset(root_forbidden))


def key(allocations):
    return frozenset((u, rc, a) for u, by_rc in allocations.items()
                     for rc, a in by_rc.items())


def got(index, query, roots=None):
    cands = ac.allocation_candidates(index, query, roots)
    keys = [key(c.allocations) for c in cands]
    assert len(keys) == len(set(keys)), "duplicate allocations"
    for c in cands:
        assert all(a > 0 for by_rc in c.allocations.values()
                   for a in by_rc.values())
    return set(keys)


def want(*allocations):
    return {key(a) for a in allocations}


# ------------------------------------------------------------ lone root


LONE = build(P("cn", inventories={
    "VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100}))
FLAVOR = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_lone_provider_takes_everything():
    assert got(LONE, Q(G("", FLAVOR))) == want({"cn": FLAVOR})
    cand = ac.first_candidate(LONE, Q(G("", FLAVOR)), "cn")
    assert cand.root_uuid == "cn"
    assert cand.allocations == {"cn": FLAVOR}
    assert cand.mappings == {"": ("cn",)}


@pytest.mark.parametrize("res", [
    {"VCPU": 9},                        # over capacity
    {"PCPU": 1},                        # no inventory
    {"VCPU": 1, "VGPU": 1},             # one class missing
])
def test_lone_provider_without_room(res):
    assert got(LONE, Q(G("", res))) == set()
    assert ac.first_candidate(LONE, Q(G("", res)), "cn") is None


def test_usage_and_extra_used_reduce_capacity():
    index = build(P("cn", inventories={"VCPU": 8}, usage={"VCPU": 5}))
    q = Q(G("", {"VCPU": 3}))
    assert ac.first_candidate(index, q, "cn") is not None
    assert ac.first_candidate(index, Q(G("", {"VCPU": 4})), "cn") is None
    assert ac.first_candidate(index, q, "cn",
                              extra_used={"cn": {"VCPU": 1}}) is None
    assert list(ac.iter_candidates(index, q, "cn",
                                   extra_used={"cn": {"VCPU": 1}})) == []
    assert ac.first_candidate(index, q, "cn",
                              extra_used={"cn": {"MEMORY_MB": 9}})


# _capacity_check_clause (rc.py): min_unit, max_unit and step_size on the
# amount, capacity on usage + amount (int((total - reserved) * ratio))
@pytest.mark.parametrize("inventory,amount,ok", [
    (inv(8, min_unit=2), 1, False),
    (inv(8, min_unit=2), 2, True),
    (inv(8, max_unit=4), 5, False),
    (inv(8, step=2), 3, False),
    (inv(8, step=2), 4, True),
    (inv(8, reserved=6), 3, False),
    (inv(4, max_unit=8, ratio=1.5), 6, True),
    (inv(4, max_unit=8, ratio=1.5), 7, False),
])
def test_units_and_ratio(inventory, amount, ok):
    index = build(P("cn", inventories={"VCPU": inventory}))
    assert bool(got(index, Q(G("", {"VCPU": amount})))) is ok
    assert bool(got(index, Q(G("1", {"VCPU": amount})))) is ok


def test_baremetal_node_is_taken_whole_once():
    gold = inv(1, min_unit=1, max_unit=1)
    free = build(P("bm", inventories={"CUSTOM_BAREMETAL_GOLD": gold}))
    used = build(P("bm", inventories={"CUSTOM_BAREMETAL_GOLD": gold},
                   usage={"CUSTOM_BAREMETAL_GOLD": 1}))
    q = Q(G("", {"CUSTOM_BAREMETAL_GOLD": 1}))
    assert got(free, q) == want({"bm": {"CUSTOM_BAREMETAL_GOLD": 1}})
    assert got(used, q) == set()
    assert got(free, Q(G("", {"CUSTOM_BAREMETAL_GOLD": 2}))) == set()
    assert got(free, Q(G("", {"CUSTOM_BAREMETAL_SILVER": 1}))) == set()


@pytest.mark.parametrize("group,ok", [
    (G("", FLAVOR, required=["HW_CPU_X86_AVX"]), True),
    (G("", FLAVOR, required=["HW_CPU_X86_AVX2"]), False),
    (G("", FLAVOR, forbidden=["HW_CPU_X86_AVX"]), False),
    (G("", FLAVOR, any_of=[["HW_CPU_X86_AVX2", "HW_CPU_X86_AVX"]]), True),
    (G("", FLAVOR, any_of=[["HW_CPU_X86_AVX2", "CUSTOM_X"]]), False),
    (G("", FLAVOR, member_of=[["a", "z"]]), True),
    (G("", FLAVOR, member_of=[["a"], ["z"]]), False),
    (G("", FLAVOR, forbidden_aggs=["a"]), False),
    (G("", FLAVOR, forbidden_aggs=["z"]), True),
    (G("", FLAVOR, in_tree="cn"), True),
    (G("", FLAVOR, in_tree="other"), False),
    (G("", FLAVOR, in_tree="unknown"), False),
])
def test_lone_provider_traits_and_aggregates(group, ok):
    index = build(P("cn", inventories={"VCPU": 8, "MEMORY_MB": 4096,
                                       "DISK_GB": 100},
                    traits=["HW_CPU_X86_AVX"], aggs=["a"]),
                  P("other", inventories={"VCPU": 1}))
    assert (ac.first_candidate(index, Q(group), "cn") is not None) is ok
    assert bool(got(index, Q(group), ["cn"])) is ok


# ---------------------------------------------------- sharing providers


def test_doc_sharing_example():
    # tree doc, "Sharing Resource Providers": SS2 is in no aggregate and
    # shares with nobody
    index = build(
        P("SS1", inventories={"DISK_GB": 1000}, traits=[SHARES],
          aggs=["aggA"]),
        P("SS2", inventories={"DISK_GB": 1000}, traits=[SHARES]),
        P("CN1", inventories={"VCPU": 8, "MEMORY_MB": 1024,
                              "DISK_GB": 1000}, aggs=["aggA"]),
        P("CN2", inventories={"VCPU": 8, "MEMORY_MB": 1024,
                              "DISK_GB": 1000}))
    q = Q(G("", {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 500}))
    assert got(index, q) == want(
        {"CN1": {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 500}},
        {"CN2": {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 500}},
        {"CN1": {"VCPU": 1, "MEMORY_MB": 512}, "SS1": {"DISK_GB": 500}})


def nested_sharing_world():
    # tree doc, second "Sharing Resource Providers" picture
    return build(
        P("SS1", inventories={"DISK_GB": 1000}, traits=[SHARES],
          aggs=["aggA"]),
        P("CN1", inventories={"MEMORY_MB": 1024, "DISK_GB": 1000},
          aggs=["aggA", "aggB"]),
        P("NUMA1_1", "CN1", {"VCPU": 8}),
        P("NUMA1_2", "CN1", {"VCPU": 8}),
        P("CN2", inventories={"MEMORY_MB": 1024, "DISK_GB": 1000},
          aggs=["aggA"]),
        P("NUMA2_1", "CN2", {"VCPU": 8}, aggs=["aggB"]),
        P("NUMA2_2", "CN2", {"VCPU": 8}))


def _eight():
    out = []
    for cn, numas in (("CN1", ("NUMA1_1", "NUMA1_2")),
                      ("CN2", ("NUMA2_1", "NUMA2_2"))):
        for numa in numas:
            out.append({numa: {"VCPU": 1},
                        cn: {"MEMORY_MB": 512, "DISK_GB": 500}})
            out.append({numa: {"VCPU": 1}, cn: {"MEMORY_MB": 512},
                        "SS1": {"DISK_GB": 500}})
    return want(*out)


@pytest.mark.parametrize("member_of,expected", [
    # tree doc: eight candidates; the pool serves both trees via aggA on
    # their roots although the NUMA nodes are in no aggregate
    ((), _eight()),
    # tree doc, "Filtering Aggregates": aggA on the roots spans the trees
    ([["aggA"]], _eight()),
    # aggB on NUMA2_1 does not span CN2's tree, SS1 is not in aggB
    ([["aggB"]], want(
        {"NUMA1_1": {"VCPU": 1}, "CN1": {"MEMORY_MB": 512, "DISK_GB": 500}},
        {"NUMA1_2": {"VCPU": 1}, "CN1": {"MEMORY_MB": 512,
                                         "DISK_GB": 500}})),
])
def test_doc_nested_sharing_and_member_of(member_of, expected):
    q = Q(G("", {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 500},
            member_of=member_of))
    assert got(nested_sharing_world(), q) == expected


@pytest.mark.parametrize("pool", [
    # no MISC_SHARES_VIA_AGGREGATE: not shared (get_sharing_providers)
    P("pool", inventories={"DISK_GB": 100}, aggs=["a"]),
    # another aggregate: not shared (anchors_for_sharing_providers)
    P("pool", inventories={"DISK_GB": 100}, traits=[SHARES], aggs=["b"]),
])
def test_pool_not_shared(pool):
    index = build(P("cn", inventories={"VCPU": 4}, aggs=["a"]), pool)
    assert got(index, Q(G("", {"VCPU": 1, "DISK_GB": 10}))) == set()
    assert got(index, Q(G("", {"VCPU": 1}), G("1", {"DISK_GB": 10}))) \
        == set()


def test_pool_shared_through_a_child_aggregate():
    # anchors_for_sharing_providers joins any provider of the tree
    index = build(P("cn", inventories={"MEMORY_MB": 64}),
                  P("n0", "cn", {"VCPU": 4}, aggs=["a"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a"]))
    assert got(index, Q(G("", {"VCPU": 1, "DISK_GB": 10}))) == want(
        {"n0": {"VCPU": 1}, "pool": {"DISK_GB": 10}})


def test_sharing_only_candidate_found_once():
    # a request only for DISK_GB, offered only by the pool: Placement
    # anchors it on every tree it serves and on itself, and its
    # AllocationRequest equality (ac.py) ignores the anchor
    index = build(P("cn1", inventories={"VCPU": 4}, aggs=["a"]),
                  P("cn2", inventories={"VCPU": 4}, aggs=["a"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a"]))
    q = Q(G("", {"DISK_GB": 10}))
    assert got(index, q) == want({"pool": {"DISK_GB": 10}})
    for root in ("cn1", "cn2", "pool"):
        [cand] = ac.iter_candidates(index, q, root)
        assert cand.root_uuid == root
        assert cand.allocations == {"pool": {"DISK_GB": 10}}
    assert len(ac.allocation_candidates(index, q)) == 1
    # a pool in no aggregate still answers for itself
    lone = build(P("pool", inventories={"DISK_GB": 100}, traits=[SHARES]))
    assert got(lone, q) == want({"pool": {"DISK_GB": 10}})


def test_required_trait_met_by_the_pool_in_the_unsuffixed_group():
    # _check_traits_for_alloc_request: the providers of the candidate
    # collectively ("regardless of sharing or nested providers", tree doc)
    index = build(P("cn", inventories={"VCPU": 4, "DISK_GB": 100},
                    aggs=["a"]),
                  P("pool", inventories={"DISK_GB": 100},
                    traits=[SHARES, "STORAGE_DISK_SSD"], aggs=["a"]))
    q = Q(G("", {"VCPU": 1, "DISK_GB": 10}, required=["STORAGE_DISK_SSD"]))
    assert got(index, q) == want(
        {"cn": {"VCPU": 1}, "pool": {"DISK_GB": 10}})
    q = Q(G("", {"VCPU": 1, "DISK_GB": 10},
            forbidden=["STORAGE_DISK_SSD"]))
    assert got(index, q) == want({"cn": {"VCPU": 1, "DISK_GB": 10}})


def test_pool_must_itself_be_in_member_of():
    # get_rps_with_shared_capacity: sharing providers & rps_in_aggs
    index = build(P("cn", inventories={"VCPU": 4}, aggs=["a", "m"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a"]))
    q = Q(G("", {"VCPU": 1, "DISK_GB": 10}, member_of=[["m"]]))
    assert got(index, q) == set()
    q = Q(G("", {"VCPU": 1, "DISK_GB": 10}, member_of=[["a"]]))
    assert got(index, q) == want({"cn": {"VCPU": 1}, "pool": {"DISK_GB": 10}})


def test_forbidden_aggregate_on_the_pool_or_the_anchor():
    # filter_by_rp_nor_tree (rpc.py): neither the provider nor the anchor
    index = build(P("cn", inventories={"VCPU": 4}, aggs=["a", "x"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a", "y"]))
    res = {"VCPU": 1, "DISK_GB": 10}
    assert got(index, Q(G("", res, forbidden_aggs=["y"]))) == set()
    assert got(index, Q(G("", res, forbidden_aggs=["x"]))) == set()
    assert got(index, Q(G("", res, forbidden_aggs=["z"]))) == want(
        {"cn": {"VCPU": 1}, "pool": {"DISK_GB": 10}})


def test_root_required_looks_at_the_anchor_not_the_pool():
    # tree doc: "root_required applies only to the root of the non-sharing
    # provider tree"; in_filtered_anchors (rc.py)
    index = build(P("cn", inventories={"VCPU": 4}, traits=["CUSTOM_X"],
                    aggs=["a"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a"]))
    res = {"VCPU": 1, "DISK_GB": 10}
    assert got(index, Q(G("", res), root_required=["CUSTOM_X"])) == want(
        {"cn": {"VCPU": 1}, "pool": {"DISK_GB": 10}})
    assert got(index, Q(G("", res), root_forbidden=["CUSTOM_X"])) == set()
    disk = Q(G("", {"DISK_GB": 10}), root_required=["CUSTOM_X"])
    assert got(index, disk) == want({"pool": {"DISK_GB": 10}})
    [cand] = ac.allocation_candidates(index, disk)
    assert cand.root_uuid == "cn"
    # anchored on the pool itself, the pool is the root checked
    disk = Q(G("", {"DISK_GB": 10}), root_required=[SHARES])
    [cand] = ac.allocation_candidates(index, disk)
    assert cand.root_uuid == "pool"


# --------------------------------------------------------- NUMA children


def numa_host(usage0=None, usage1=None, **root):
    return build(P("cn", inventories={"DISK_GB": 100}, **root),
                 P("n0", "cn", {"VCPU": 4, "MEMORY_MB": 2048},
                   traits=["HW_NUMA_ROOT"], usage=usage0),
                 P("n1", "cn", {"VCPU": 4, "MEMORY_MB": 2048},
                   traits=["HW_NUMA_ROOT"], usage=usage1))


def test_unsuffixed_group_spreads_classes_over_the_tree():
    # _alloc_candidates_multiple_providers: one provider per class
    q = Q(G("", {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}))
    expected = set()
    for cpu, mem in itertools.product(("n0", "n1"), repeat=2):
        alloc = {"cn": {"DISK_GB": 10}}
        alloc.setdefault(cpu, {})["VCPU"] = 2
        alloc.setdefault(mem, {})["MEMORY_MB"] = 1024
        expected |= want(alloc)
    assert got(numa_host(), q) == expected
    # a class is never split: 6 VCPU fit in no one node
    assert got(numa_host(), Q(G("", {"VCPU": 6}))) == set()


def test_granular_groups_per_numa_node_and_usage():
    q = Q(G("", {"DISK_GB": 10}), G("1", {"VCPU": 2, "MEMORY_MB": 1024}),
          G("2", {"VCPU": 2, "MEMORY_MB": 1024}), policy="isolate")
    both = want({"cn": {"DISK_GB": 10}, "n0": {"VCPU": 2, "MEMORY_MB": 1024},
                 "n1": {"VCPU": 2, "MEMORY_MB": 1024}})
    assert got(numa_host(), q) == both
    assert got(numa_host(usage0={"VCPU": 3}), q) == set()
    cand = ac.first_candidate(numa_host(), q, "cn")
    assert key(cand.allocations) in both
    assert {cand.mappings["1"], cand.mappings["2"]} == {("n0",), ("n1",)}
    assert cand.mappings[""] == ("cn",)
    assert ac.first_candidate(numa_host(), q, "cn",
                              extra_used={"n1": {"MEMORY_MB": 1500}}) is None


def test_identical_groups_give_each_allocation_once():
    # ac.py keeps mapping-distinct duplicates; the allocations are equal
    q = Q(G("1", {"VCPU": 1}), G("2", {"VCPU": 1}), policy="none")
    assert got(numa_host(), q) == want(
        {"n0": {"VCPU": 2}}, {"n1": {"VCPU": 2}},
        {"n0": {"VCPU": 1}, "n1": {"VCPU": 1}})
    assert len(list(ac.iter_candidates(numa_host(), q, "cn"))) == 3
    q = Q(G("1", {"VCPU": 1}), G("2", {"VCPU": 1}), G("3", {"VCPU": 1}),
          policy="isolate")
    assert got(numa_host(), q) == set()


def test_summed_amounts_are_checked_against_capacity():
    # _consolidate_allocation_requests then exceeds_capacity (rc.py)
    q = Q(G("1", {"VCPU": 3}), G("2", {"VCPU": 3}), policy="none")
    assert got(numa_host(), q) == want({"n0": {"VCPU": 3},
                                        "n1": {"VCPU": 3}})
    q = Q(G("", {"VCPU": 2}), G("1", {"VCPU": 2}))
    assert got(numa_host(usage0={"VCPU": 1}), q) == want(
        {"n1": {"VCPU": 4}}, {"n0": {"VCPU": 2}, "n1": {"VCPU": 2}})


def test_summed_amounts_are_checked_against_max_unit():
    # exceeds_capacity: "this allocation exceeds the max_unit"
    index = build(P("cn", inventories={"VCPU": inv(16, max_unit=4)}))
    assert got(index, Q(G("", {"VCPU": 3}), G("1", {"VCPU": 2}))) == set()
    assert got(index, Q(G("", {"VCPU": 3}), G("1", {"VCPU": 1}))) == want(
        {"cn": {"VCPU": 4}})


def test_forbidden_and_required_traits_count_only_supplying_providers():
    # _check_traits_for_alloc_request looks at the providers of the
    # resource requests only: the root supplying nothing does not count
    index = numa_host(traits=["CUSTOM_X"])
    assert got(index, Q(G("", {"VCPU": 1}, forbidden=["CUSTOM_X"]))) == \
        want({"n0": {"VCPU": 1}}, {"n1": {"VCPU": 1}})
    assert got(index, Q(G("", {"VCPU": 1}, required=["CUSTOM_X"]))) == set()
    assert got(index, Q(G("", {"VCPU": 1, "DISK_GB": 1},
                          required=["CUSTOM_X"]))) == want(
        {"n0": {"VCPU": 1}, "cn": {"DISK_GB": 1}},
        {"n1": {"VCPU": 1}, "cn": {"DISK_GB": 1}})


def test_any_of_traits_unsuffixed_union_and_granular_one_provider():
    index = build(P("cn", inventories={"DISK_GB": 100},
                    traits=["STORAGE_DISK_SSD"]),
                  P("n0", "cn", {"VCPU": 4}, traits=["HW_CPU_X86_AVX"]))
    anyof = [["HW_CPU_X86_AVX2", "STORAGE_DISK_SSD"], ["HW_CPU_X86_AVX"]]
    q = Q(G("", {"VCPU": 1, "DISK_GB": 1}, any_of=anyof))
    assert got(index, q) == want({"n0": {"VCPU": 1}, "cn": {"DISK_GB": 1}})
    q = Q(G("1", {"VCPU": 1}, any_of=anyof))
    assert got(index, q) == set()
    q = Q(G("1", {"VCPU": 1}, any_of=[["HW_CPU_X86_AVX2",
                                        "HW_CPU_X86_AVX"]]))
    assert got(index, q) == want({"n0": {"VCPU": 1}})


@pytest.mark.parametrize("member_of,forbidden_aggs,unsuffixed,granular", [
    # aggregate on the root spans the tree for the unsuffixed group only
    # (filter_by_rp_or_tree; tree doc "member_of<N>" note)
    ([["r"]], (), {"n0", "n1"}, set()),
    ([["c"]], (), {"n0"}, {"n0"}),
    ([["r", "c"]], (), {"n0", "n1"}, {"n0"}),
    # provider and root are each checked against all the lists
    ([["r"], ["c"]], (), set(), set()),
    ([["c"], ["d"]], (), {"n0"}, {"n0"}),
    # a root in a forbidden aggregate empties its tree, unsuffixed only
    ((), ["r"], set(), {"n0", "n1"}),
    ((), ["c"], {"n1"}, {"n1"}),
])
def test_member_of_and_forbidden_aggregates(member_of, forbidden_aggs,
                                            unsuffixed, granular):
    index = build(P("cn", inventories={"DISK_GB": 100}, aggs=["r"]),
                  P("n0", "cn", {"VCPU": 4}, aggs=["c", "d"]),
                  P("n1", "cn", {"VCPU": 4}))
    for suffix, expected in (("", unsuffixed), ("1", granular)):
        q = Q(G(suffix, {"VCPU": 1}, member_of=member_of,
                forbidden_aggs=forbidden_aggs))
        assert got(index, q) == want(*({n: {"VCPU": 1}} for n in expected))


# ----------------------------------------------------- SR-IOV and policy


def sriov_host():
    # tree doc, "Filtering by Traits"
    return build(P("CN1", inventories={"VCPU": 8, "MEMORY_MB": 1024,
                                       "DISK_GB": 1000}),
                 P("NIC1_1", "CN1", {"SRIOV_NET_VF": 8},
                   traits=["HW_NIC_ACCEL_SSL"]),
                 P("NIC1_2", "CN1", {"SRIOV_NET_VF": 8}))


BASE = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 500}


@pytest.mark.parametrize("query,expected", [
    (Q(G("", dict(BASE, SRIOV_NET_VF=2), required=["HW_NIC_ACCEL_SSL"])),
     want({"CN1": BASE, "NIC1_1": {"SRIOV_NET_VF": 2}})),
    (Q(G("", dict(BASE, SRIOV_NET_VF=2), forbidden=["HW_NIC_ACCEL_SSL"])),
     want({"CN1": BASE, "NIC1_2": {"SRIOV_NET_VF": 2}})),
    (Q(G("", dict(BASE, SRIOV_NET_VF=2))),
     want({"CN1": BASE, "NIC1_1": {"SRIOV_NET_VF": 2}},
          {"CN1": BASE, "NIC1_2": {"SRIOV_NET_VF": 2}})),
    # tree doc, "Granular Resource Requests": isolate vs none
    (Q(G("", BASE), G("1", {"SRIOV_NET_VF": 1},
                      required=["HW_NIC_ACCEL_SSL"]),
       G("2", {"SRIOV_NET_VF": 1}), policy="isolate"),
     want({"CN1": BASE, "NIC1_1": {"SRIOV_NET_VF": 1},
           "NIC1_2": {"SRIOV_NET_VF": 1}})),
    (Q(G("", BASE), G("1", {"SRIOV_NET_VF": 1},
                      required=["HW_NIC_ACCEL_SSL"]),
       G("2", {"SRIOV_NET_VF": 1}), policy="none"),
     want({"CN1": BASE, "NIC1_1": {"SRIOV_NET_VF": 1},
           "NIC1_2": {"SRIOV_NET_VF": 1}},
          {"CN1": BASE, "NIC1_1": {"SRIOV_NET_VF": 2}})),
])
def test_doc_traits_and_granular(query, expected):
    assert got(sriov_host(), query) == expected


def physnet_host():
    return build(P("cn", inventories={"VCPU": 8, "MEMORY_MB": 1024}),
                 P("pf1", "cn", {"SRIOV_NET_VF": 4},
                   traits=["CUSTOM_PHYSNET_A"]),
                 P("pf2", "cn", {"SRIOV_NET_VF": 4},
                   traits=["CUSTOM_PHYSNET_B"]),
                 P("pf3", "cn", {"SRIOV_NET_VF": 4},
                   traits=["CUSTOM_PHYSNET_A"]))


def vf(*pfs):
    out = collections.Counter(pfs)
    return want({"cn": {"VCPU": 1}, **{pf: {"SRIOV_NET_VF": n}
                                      for pf, n in out.items()}})


@pytest.mark.parametrize("nets,policy,expected", [
    (("A", "B"), "isolate", vf("pf1", "pf2") | vf("pf3", "pf2")),
    (("A", "A"), "isolate", vf("pf1", "pf3")),
    (("A", "A"), "none", vf("pf1", "pf3") | vf("pf1", "pf1")
     | vf("pf3", "pf3")),
    (("B", "B"), "isolate", set()),
    (("B", "B"), "none", vf("pf2", "pf2")),
])
def test_physnet_ports(nets, policy, expected):
    groups = [G(str(i + 1), {"SRIOV_NET_VF": 1},
                required=["CUSTOM_PHYSNET_" + net])
              for i, net in enumerate(nets)]
    q = Q(G("", {"VCPU": 1}), *groups, policy=policy)
    assert got(physnet_host(), q) == expected


def test_isolate_leaves_the_unsuffixed_group_alone():
    # _satisfies_group_policy counts use_same_provider groups only
    index = build(P("cn", inventories={"VCPU": 8, "MEMORY_MB": 1024}))
    q = Q(G("", {"VCPU": 1}), G("1", {"VCPU": 1}), policy="isolate")
    assert got(index, q) == want({"cn": {"VCPU": 2}})
    q = Q(G("1", {"VCPU": 1}), G("2", {"MEMORY_MB": 1}), policy="isolate")
    assert got(index, q) == set()
    q = Q(G("1", {"VCPU": 1}), G("2", {"MEMORY_MB": 1}), policy="none")
    assert got(index, q) == want({"cn": {"VCPU": 1, "MEMORY_MB": 1}})


# ------------------------------------------------------------ in_tree


def in_tree_world():
    # tree doc, "Filtering by Tree"
    specs = [P("SS1", inventories={"DISK_GB": 1000}, traits=[SHARES],
               aggs=["x"]),
             P("SS2", inventories={"DISK_GB": 1000}, traits=[SHARES],
               aggs=["x"])]
    for n in ("1", "2"):
        specs += [P("CN" + n, inventories={"DISK_GB": 1000}, aggs=["x"]),
                  P("NUMA%s_1" % n, "CN" + n, {"VCPU": 4}),
                  P("NUMA%s_2" % n, "CN" + n, {"VCPU": 4})]
    return build(*specs)


def _pairs(numas, disks, amount):
    return want(*({numa: {"VCPU": 1}, disk: {"DISK_GB": amount}}
                  for numa in numas for disk in disks))


@pytest.mark.parametrize("query,expected", [
    (Q(G("", {"VCPU": 1, "DISK_GB": 50}, in_tree="CN1")),
     _pairs(("NUMA1_1", "NUMA1_2"), ("CN1",), 50)),
    (Q(G("", {"VCPU": 1, "DISK_GB": 50}, in_tree="NUMA1_1")),
     _pairs(("NUMA1_1", "NUMA1_2"), ("CN1",), 50)),
    # the unsuffixed in_tree does not bind the suffixed group
    (Q(G("", {"VCPU": 1}, in_tree="CN1"), G("1", {"DISK_GB": 10})),
     _pairs(("NUMA1_1", "NUMA1_2"), ("CN1", "SS1", "SS2"), 10)),
    # in_tree1 on a sharing provider: it still serves every tree
    (Q(G("", {"VCPU": 1}), G("1", {"DISK_GB": 10}, in_tree="SS1")),
     _pairs(("NUMA1_1", "NUMA1_2", "NUMA2_1", "NUMA2_2"), ("SS1",), 10)),
    (Q(G("1", {"VCPU": 1}, in_tree="CN1"),
       G("2", {"DISK_GB": 10}, in_tree="SS1"), policy="isolate"),
     _pairs(("NUMA1_1", "NUMA1_2"), ("SS1",), 10)),
    # an unsuffixed in_tree naming the pool: only the pool's own tree
    (Q(G("", {"DISK_GB": 10}, in_tree="SS2")), want({"SS2": {"DISK_GB": 10}})),
    (Q(G("", {"VCPU": 1}, in_tree="nowhere")), set()),
    (Q(G("", {"VCPU": 1}), G("1", {"DISK_GB": 1}, in_tree="nowhere")),
     set()),
])
def test_doc_in_tree(query, expected):
    assert got(in_tree_world(), query) == expected


# ----------------------------------------------------------- root traits


def root_traits_world():
    # tree doc, "Filtering by Root Provider Traits"
    return build(
        P("NON_NUMA_CN", inventories={"VCPU": 8, "MEMORY_MB": 1024,
                                      "DISK_GB": 1000},
          traits=["HW_CPU_X86_AVX2", "STORAGE_DISK_SSD",
                  "COMPUTE_VOLUME_MULTI_ATTACH",
                  "CUSTOM_WINDOWS_LICENSE_POOL"]),
        P("NUMA_CN", inventories={"DISK_GB": 1000},
          traits=["STORAGE_DISK_SSD", "COMPUTE_VOLUME_MULTI_ATTACH"]),
        P("NUMA1", "NUMA_CN", {"VCPU": 4, "MEMORY_MB": 1024}),
        P("NUMA2", "NUMA_CN", {"VCPU": 4, "MEMORY_MB": 1024},
          traits=["HW_CPU_X86_AVX2"]))


CPU_MEM = {"VCPU": 1, "MEMORY_MB": 512}


@pytest.mark.parametrize("query,expected", [
    (Q(G("1", CPU_MEM, required=["HW_CPU_X86_AVX2"]),
       G("2", {"DISK_GB": 100}), policy="none",
       root_required=["COMPUTE_VOLUME_MULTI_ATTACH"]),
     want({"NON_NUMA_CN": dict(CPU_MEM, DISK_GB=100)},
          {"NUMA_CN": {"DISK_GB": 100}, "NUMA2": CPU_MEM})),
    (Q(G("1", CPU_MEM), G("2", {"DISK_GB": 100}), policy="none",
       root_forbidden=["CUSTOM_WINDOWS_LICENSE_POOL"]),
     want({"NUMA_CN": {"DISK_GB": 100}, "NUMA1": CPU_MEM},
          {"NUMA_CN": {"DISK_GB": 100}, "NUMA2": CPU_MEM})),
    (Q(G("1", CPU_MEM), G("2", {"DISK_GB": 100}), policy="none",
       root_required=["HW_CPU_X86_AVX2"]),
     want({"NON_NUMA_CN": dict(CPU_MEM, DISK_GB=100)})),
])
def test_doc_root_required(query, expected):
    assert got(root_traits_world(), query) == expected


# --------------------------------------------------------- same_subtree


def fpga_world(*more):
    # tree doc, "Filtering by Same Subtree"
    return build(*more, P("CN"),
                 P("NUMA0", "CN", {"VCPU": 4, "MEMORY_MB": 2048},
                   traits=["HW_NUMA_ROOT"]),
                 P("NUMA1", "CN", {"VCPU": 4, "MEMORY_MB": 2048},
                   traits=["HW_NUMA_ROOT"]),
                 P("FPGA0_0", "NUMA0", {"ACCELERATOR_FPGA": 1},
                   traits=["CUSTOM_TYPE1"]),
                 P("FPGA1_0", "NUMA1", {"ACCELERATOR_FPGA": 1},
                   traits=["CUSTOM_TYPE1"]),
                 P("FPGA1_1", "NUMA1", {"ACCELERATOR_FPGA": 1},
                   traits=["CUSTOM_TYPE2"]))


def test_doc_same_subtree():
    q = Q(G("_COMPUTE", {"VCPU": 1, "MEMORY_MB": 256}),
          G("_ACCEL", {"ACCELERATOR_FPGA": 1}), policy="none",
          same_subtree=[["_COMPUTE", "_ACCEL"]])
    cpu = {"VCPU": 1, "MEMORY_MB": 256}
    fpga = {"ACCELERATOR_FPGA": 1}
    assert got(fpga_world(), q) == want(
        {"NUMA0": cpu, "FPGA0_0": fpga}, {"NUMA1": cpu, "FPGA1_0": fpga},
        {"NUMA1": cpu, "FPGA1_1": fpga})
    # without same_subtree the cross-NUMA pairs come back too
    q = Q(G("_COMPUTE", cpu), G("_ACCEL", fpga), policy="none")
    assert len(got(fpga_world(), q)) == 6


def test_doc_resourceless_group_in_same_subtree():
    q = Q(G("_NUMA", required=["HW_NUMA_ROOT"]),
          G("_ACCEL1", {"ACCELERATOR_FPGA": 1}, required=["CUSTOM_TYPE1"]),
          G("_ACCEL2", {"ACCELERATOR_FPGA": 1}, required=["CUSTOM_TYPE2"]),
          policy="none", same_subtree=[["_NUMA", "_ACCEL1", "_ACCEL2"]])
    [cand] = ac.allocation_candidates(fpga_world(), q)
    # the resourceless group is in mappings, not in the allocations
    assert cand.allocations == {"FPGA1_0": {"ACCELERATOR_FPGA": 1},
                                "FPGA1_1": {"ACCELERATOR_FPGA": 1}}
    assert cand.mappings == {"_NUMA": ("NUMA1",), "_ACCEL1": ("FPGA1_0",),
                             "_ACCEL2": ("FPGA1_1",)}


def test_same_subtree_with_an_ancestor_in_the_set_and_isolate():
    # _check_same_subtree: one of the providers is an ancestor of the rest
    q = Q(G("_N", required=["HW_NUMA_ROOT"]),
          G("_A", {"ACCELERATOR_FPGA": 1}), policy="isolate",
          same_subtree=[["_N", "_A"]])
    fpga = {"ACCELERATOR_FPGA": 1}
    assert got(fpga_world(), q) == want({"FPGA0_0": fpga},
                                        {"FPGA1_0": fpga},
                                        {"FPGA1_1": fpga})
    # the root is an ancestor of everything
    q = Q(G("_C", member_of=[["root"]]), G("_A", fpga), policy="none",
          same_subtree=[["_C", "_A"]])
    index = build(P("CN", aggs=["root"]),
                  P("F", "CN", {"ACCELERATOR_FPGA": 1}))
    [cand] = ac.allocation_candidates(index, q)
    assert cand.mappings["_C"] == ("CN",)


@pytest.mark.parametrize("group", [
    # no required traits and no member_of: Placement's
    # get_provider_ids_matching keeps nothing for a resourceless group
    G("_N"),
    G("_N", forbidden=["CUSTOM_X"]),
    G("_N", in_tree="NUMA0"),
])
def test_resourceless_group_without_a_positive_filter_matches_nothing(
        group):
    q = Q(group, G("_A", {"ACCELERATOR_FPGA": 1}), policy="none",
          same_subtree=[["_N", "_A"]])
    assert got(fpga_world(), q) == set()


def test_resourceless_group_in_tree_is_not_applied():
    # get_providers_with_root takes no tree for a resourceless group: an
    # in_tree naming another tree does not stop it (the uuid must exist)
    other = P("OTHER", inventories={"VCPU": 1})
    q = Q(G("_N", required=["HW_NUMA_ROOT"], in_tree="OTHER"),
          G("_A", {"ACCELERATOR_FPGA": 1}, required=["CUSTOM_TYPE2"]),
          policy="none", same_subtree=[["_N", "_A"]])
    [cand] = ac.allocation_candidates(fpga_world(other), q)
    assert cand.mappings["_N"] == ("NUMA1",)
    # the same in_tree on a group with resources binds it
    q = Q(G("_N", required=["HW_NUMA_ROOT"]),
          G("_A", {"ACCELERATOR_FPGA": 1}, in_tree="OTHER"),
          policy="none", same_subtree=[["_N", "_A"]])
    assert got(fpga_world(other), q) == set()


def test_same_subtree_across_a_sharing_provider():
    # the pool is in no ancestry of the tree: only a lone provider passes
    index = build(P("cn", inventories={"VCPU": 4}, aggs=["a"]),
                  P("pool", inventories={"DISK_GB": 100}, traits=[SHARES],
                    aggs=["a"]))
    q = Q(G("1", {"VCPU": 1}), G("2", {"DISK_GB": 1}), policy="none",
          same_subtree=[["1", "2"]])
    assert got(index, q) == set()
    q = Q(G("1", {"VCPU": 1}), G("2", {"DISK_GB": 1}), policy="none")
    assert got(index, q) == want({"cn": {"VCPU": 1}, "pool": {"DISK_GB": 1}})


# ------------------------------------------------------------ validation


@pytest.mark.parametrize("make", [
    lambda: Q(G("", {"VCPU": 1}), policy="strict"),
    lambda: Q(G("", {"VCPU": 1}), G("1", {"VCPU": 1}),
              G("2", {"VCPU": 1})),                  # policy needed
    lambda: Q(G("1", {"VCPU": 1}), G("1", {"VCPU": 1}), policy="none"),
    lambda: Q(G("", required=["CUSTOM_X"])),          # resourceless ''
    lambda: Q(G("1", required=["CUSTOM_X"])),         # no resources at all
    lambda: Q(G("", {"VCPU": 1}), G("1", required=["CUSTOM_X"])),
    lambda: Q(G("", {"VCPU": 1}), G("1", {"VCPU": 1}),
              same_subtree=[["", "1"]]),
    lambda: Q(G("1", {"VCPU": 1}), same_subtree=[["1", "2"]]),
    lambda: Q(G("", {"VCPU": 1}, required=["CUSTOM_X"],
                forbidden=["CUSTOM_X"])),
    lambda: Q(G("", {"VCPU": 1}, any_of=[["CUSTOM_X", "CUSTOM_Y"]],
                forbidden=["CUSTOM_X", "CUSTOM_Y"])),
    lambda: Q(G("", {"VCPU": 1}), root_required=["CUSTOM_X"],
              root_forbidden=["CUSTOM_X"]),
])
def test_queries_placement_refuses(make):
    # lib.py: RequestGroup.dict_from_request / RequestWideParams checks
    # and the allocation_candidates handler's group_policy rule
    with pytest.raises(ValueError):
        make()


def test_an_empty_unsuffixed_group_is_absent():
    index = numa_host()
    q = Q(G(""), G("1", {"VCPU": 1}))
    assert got(index, q) == want({"n0": {"VCPU": 1}}, {"n1": {"VCPU": 1}})
    assert set(ac.first_candidate(index, q, "cn").mappings) == {"1"}


def test_placement_mutation_hazard():
    shared = Q(G("", {"VCPU": 1, "DISK_GB": 1}), G("1", {"DISK_GB": 1}))
    assert ac.placement_mutation_hazard(shared)
    assert ac.placement_mutation_hazard(
        Q(G("", {"DISK_GB": 1}), G("1", {"DISK_GB": 1}), policy="isolate"))
    assert not ac.placement_mutation_hazard(
        Q(G("", {"DISK_GB": 1}), G("1", {"DISK_GB": 1}), policy="none"))
    assert not ac.placement_mutation_hazard(
        Q(G("", {"VCPU": 1}), G("1", {"DISK_GB": 1})))


def test_first_candidate_and_unknown_roots():
    index = numa_host()
    q = Q(G("", {"VCPU": 1}))
    assert ac.first_candidate(index, q, "nope") is None
    assert list(ac.iter_candidates(index, q, "nope")) == []
    assert ac.first_candidate(index, q, "n0") is None     # not a root
    assert got(index, q, roots=["nope", "cn"]) == want(
        {"n0": {"VCPU": 1}}, {"n1": {"VCPU": 1}})


# ------------------------------------------- against Placement's own flow


def _reference(index, query):
    """Placement's algorithm, restated step by step and unoptimised:
    each group's allocation requests per anchor, then the product per
    anchor filtered by policy, same_subtree and the summed capacity."""
    ref = _Reference(index, query)
    per_group = {}
    for g in ref.groups:
        areqs = ref.unsuffixed(g) if not g.suffix else ref.granular(g)
        if not areqs:
            return set()
        per_group[g.suffix] = areqs
    return ref.merge(per_group)


class _Reference:
    def __init__(self, index, query):
        self.q = query
        self.groups = [g for g in query.groups
                       if g.suffix or g.resources or g.required_traits
                       or g.forbidden_traits or g.any_traits or g.member_of
                       or g.forbidden_aggregates or g.in_tree]
        self.by_uuid = {p.uuid: p for r in index.roots()
                        for p in index.tree(r)}
        self.sharing = [p for p in self.by_uuid.values() if p.sharing]

    def anchors(self, s):
        return {q.root_uuid for q in self.by_uuid.values()
                if q.aggregates & s.aggregates}

    def anchor_ok(self, uuid):
        traits = self.by_uuid[uuid].traits
        return (self.q.root_required <= traits
                and not self.q.root_forbidden & traits)

    @staticmethod
    def need(g):
        return ([{t} for t in g.required_traits]
                + [set(a) for a in g.any_traits])

    @staticmethod
    def member(member_of, aggs):
        return all(m & aggs for m in member_of)

    def _rows(self, g, rc, amount, tree_root):
        rows = {(p.uuid, p.root_uuid) for p in self.by_uuid.values()
                if p.fits(rc, amount)
                and tree_root in (None, p.root_uuid)}
        if tree_root is None:
            for s in self.sharing:
                if s.fits(rc, amount) and self.member(g.member_of,
                                                      s.aggregates):
                    rows |= {(s.uuid, a) for a in self.anchors(s)}
        rows = {r for r in rows if self.anchor_ok(r[1])}
        agg = self.by_uuid
        rows = {(p, a) for p, a in rows
                if self.member(g.member_of, agg[p].aggregates)
                or self.member(g.member_of, agg[a].aggregates)}
        bad = g.forbidden_aggregates
        return {(p, a) for p, a in rows
                if not bad & agg[p].aggregates and not bad & agg[a].aggregates}

    def unsuffixed(self, g):
        tree_root = None
        if g.in_tree:
            if g.in_tree not in self.by_uuid:
                return []
            tree_root = self.by_uuid[g.in_tree].root_uuid
        res = sorted(g.resources.items())
        rows = [self._rows(g, rc, a, tree_root) for rc, a in res]
        common = set.intersection(*({a for _, a in r} for r in rows))
        out = []
        for anchor in common:
            lists = [[p for p, a in r if a == anchor] for r in rows]
            for combo in itertools.product(*lists):
                provs = [self.by_uuid[p] for p in set(combo)]
                if any(g.forbidden_traits & p.traits for p in provs):
                    continue
                union = frozenset().union(*(p.traits for p in provs))
                if all(s & union for s in self.need(g)):
                    items = [(p, rc, a) for p, (rc, a) in
                             zip(combo, res, strict=True)]
                    out.append((anchor, items, set(combo)))
        return out

    def _granular_ok(self, g, p, tree_root):
        return (all(p.fits(rc, a) for rc, a in g.resources.items())
                and tree_root in (None, p.root_uuid)
                and all(s & p.traits for s in self.need(g))
                and not g.forbidden_traits & p.traits
                and self.member(g.member_of, p.aggregates)
                and not g.forbidden_aggregates & p.aggregates)

    def granular(self, g):
        tree_root = None
        if g.in_tree:
            if g.in_tree not in self.by_uuid:
                return []
            if g.resources:
                tree_root = self.by_uuid[g.in_tree].root_uuid
        if not g.resources and not (self.need(g) or g.member_of):
            return []
        out = []
        for p in self.by_uuid.values():
            if not self._granular_ok(g, p, tree_root):
                continue
            anchors = {p.root_uuid} | (self.anchors(p) if p.sharing
                                       else set())
            items = [(p.uuid, rc, a) for rc, a in g.resources.items()]
            out += [(a, items, {p.uuid}) for a in anchors
                    if self.anchor_ok(a)]
        return out

    def ancestors(self, uuid):
        out = set()
        while uuid is not None:
            out.add(uuid)
            uuid = self.by_uuid[uuid].parent_uuid
        return out

    def subtree_ok(self, mapping):
        for names in self.q.same_subtree:
            uuids = set().union(*(mapping[s] for s in names))
            if len(uuids) > 1 and not set.intersection(
                    *map(self.ancestors, uuids)) & uuids:
                return False
        return True

    def policy_ok(self, mapping):
        granular = [s for s in mapping if s]
        return (self.q.group_policy != "isolate" or len(
            set().union(*(mapping[s] for s in granular))) == len(granular))

    def exceeds(self, sums):
        for (u, rc), total in sums.items():
            p = self.by_uuid[u]
            if (p.usage.get(rc, 0) + total > p.capacity(rc)
                    or total > p.max_unit(rc)):
                return True
        return False

    def merge(self, per_group):
        suffixes = list(per_group)
        by_anchor = collections.defaultdict(lambda: collections.defaultdict(
            list))
        for suffix, areqs in per_group.items():
            for anchor, items, mapped in areqs:
                by_anchor[anchor][suffix].append((items, mapped))
        found = set()
        for lists in by_anchor.values():
            if set(lists) != set(suffixes):
                continue
            for combo in itertools.product(*(lists[s] for s in suffixes)):
                mapping = {s: m for s, (_, m)
                           in zip(suffixes, combo, strict=True)}
                if not (self.policy_ok(mapping) and self.subtree_ok(mapping)):
                    continue
                sums = collections.Counter()
                for items, _ in combo:
                    for u, rc, a in items:
                        sums[u, rc] += a
                if not self.exceeds(sums):
                    found.add(frozenset((u, rc, a)
                                        for (u, rc), a in sums.items()))
        return found


TRAITS = ("CUSTOM_A", "CUSTOM_B", "CUSTOM_C")
AGGS = ("a", "b", "c")
CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")


def _random_inventory(r):
    total = r.randint(1, 10)
    return inv(total, reserved=r.choice((0, 0, 0, 1)),
               min_unit=r.choice((1, 1, 1, 2)),
               max_unit=r.choice((total, total, total, 2, 3)),
               step=r.choice((1, 1, 1, 2)), ratio=r.choice((1.0, 1.0, 1.5)))


def _random_provider(r, uuid, parent, sharing=False):
    inventories = {rc: _random_inventory(r) for rc in CLASSES
                   if r.random() < 0.75}
    usage = {rc: r.randint(0, 2) for rc in inventories if r.random() < 0.3}
    traits = {t for t in TRAITS if r.random() < 0.3}
    if sharing:
        traits.add(SHARES)
    aggs = {a for a in AGGS if r.random() < 0.3}
    return P(uuid, parent, inventories, traits, aggs, usage)


def _random_world(r):
    specs = []
    for t in range(r.randint(1, 3)):
        root = "cn%d" % t
        specs.append(_random_provider(r, root, None))
        parents = [root]
        for c in range(r.randint(0, 3)):
            uuid = "%s-%d" % (root, c)
            specs.append(_random_provider(r, uuid, r.choice(parents)))
            parents.append(uuid)
    for s in range(r.randint(0, 2)):
        specs.append(_random_provider(r, "ss%d" % s, None,
                                      sharing=r.random() < 0.8))
    return specs


def _random_group(r, suffix, uuids, resourceless=False):
    res = {} if resourceless else {
        rc: r.randint(1, 2) for rc in r.sample(CLASSES, r.randint(1, 2))}
    def pick(pool, p):
        return [x for x in pool if r.random() < p]

    def some(pool):     # a non-empty any-of list, as Placement needs
        return [r.sample(pool, r.randint(1, 2))] if r.random() < 0.2 else ()

    return G(suffix, res, required=pick(TRAITS, 0.1),
             forbidden=pick(TRAITS, 0.07), any_of=some(TRAITS),
             member_of=some(AGGS),
             forbidden_aggs=pick(AGGS, 0.1),
             in_tree=r.choice(uuids) if r.random() < 0.1 else None)


def _random_query(r, uuids):
    groups = []
    if r.random() < 0.8:
        groups.append(_random_group(r, "", uuids))
    for i in range(r.choice((0, 1, 1, 2, 3))):
        groups.append(_random_group(r, str(i + 1), uuids,
                                    resourceless=r.random() < 0.15))
    suffixes = [g.suffix for g in groups if g.suffix]
    subtree = ()
    if len(suffixes) > 1 and r.random() < 0.4:
        subtree = (r.sample(suffixes, r.randint(2, len(suffixes))),)
    return Q(*groups, policy=r.choice(("none", "isolate", None)),
             same_subtree=subtree,
             root_required=[t for t in TRAITS if r.random() < 0.05],
             root_forbidden=[t for t in TRAITS if r.random() < 0.05])


def test_against_placements_flow_on_random_worlds():
    r = random.Random(20240601)
    checked = nonempty = 0
    while checked < 3000:
        specs = _random_world(r)
        index = build(*specs)
        try:
            query = _random_query(r, [s[0] for s in specs])
        except ValueError:
            continue
        checked += 1
        expected = _reference(index, query)
        assert got(index, query) == expected, (specs, query)
        nonempty += bool(expected)
        for root in index.roots():
            first = ac.first_candidate(index, query, root)
            every = {key(c.allocations)
                     for c in ac.iter_candidates(index, query, root)}
            assert (first is None) == (not every)
            assert first is None or key(first.allocations) in every
            assert every <= expected
    assert nonempty > 800
