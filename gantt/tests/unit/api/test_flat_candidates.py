"""The flat path over numpy columns gives the solver's candidates, in
the solver's order, on generated flat clouds and requests; and it keeps
out of what it does not answer."""

import dataclasses
import random

import pytest

from gantt.api import flat_candidates as flat
from gantt.scheduler.pipeline import allocation_candidates as ac
from gantt.tests.unit.scheduler.test_allocation_candidates import G
from gantt.tests.unit.scheduler.test_allocation_candidates import P
from gantt.tests.unit.scheduler.test_allocation_candidates import Q
from gantt.tests.unit.scheduler.test_allocation_candidates import build
from gantt.tests.unit.scheduler.test_allocation_candidates import inv

CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB", "CUSTOM_GPU")
TRAITS = ("T0", "T1", "T2", "T3", "COMPUTE_STATUS_DISABLED")
AGGS = ("a0", "a1", "a2")


def _inventory(rnd):
    total = rnd.randint(1, 64)
    return inv(total, reserved=rnd.choice((0, 0, 1, 3)),
               min_unit=rnd.choice((1, 1, 2)),
               max_unit=rnd.choice((None, None, 8, 16)),
               step=rnd.choice((1, 1, 2, 4)),
               ratio=rnd.choice((1.0, 1.0, 1.5, 4.0, 0.7)))


def _world(rnd, size):
    specs = []
    for i in range(size):
        classes = rnd.sample(CLASSES, rnd.randint(0, len(CLASSES)))
        inventories = {rc: _inventory(rnd) for rc in classes}
        usage = {rc: rnd.randint(0, 40) for rc in classes
                 if rnd.random() < 0.6}
        specs.append(P("rp%03d" % i, inventories=inventories,
                       traits=rnd.sample(TRAITS, rnd.randint(0, 3)),
                       aggs=rnd.sample(AGGS, rnd.randint(0, 2)),
                       usage=usage))
    return build(*specs)


def _some(rnd, names, most):
    return rnd.sample(names, rnd.randint(0, most))


def _query(rnd, size):
    res = {rc: rnd.choice((1, 2, 3, 4, 8, 12))
           for rc in rnd.sample(CLASSES, rnd.randint(1, 3))}
    traits = list(TRAITS)
    rnd.shuffle(traits)
    required = traits[:rnd.randint(0, 1)]
    forbidden = traits[2:2 + rnd.randint(0, 2)]
    allowed = [t for t in TRAITS if t not in forbidden]
    aggs = list(AGGS)
    rnd.shuffle(aggs)
    in_tree = None
    if rnd.random() < 0.15:
        in_tree = rnd.choice(("rp%03d" % rnd.randrange(size), "nowhere"))
    return Q(G(res=res, required=required, forbidden=forbidden,
               any_of=[rnd.sample(allowed, 2)] if rnd.random() < 0.3
               else (),
               member_of=[aggs[:rnd.randint(1, 2)]] if rnd.random() < 0.3
               else (),
               forbidden_aggs=aggs[2:] if rnd.random() < 0.2 else (),
               in_tree=in_tree),
             policy=rnd.choice((None, "none", "isolate")),
             root_required=_some(rnd, TRAITS[:2], 1),
             root_forbidden=_some(rnd, TRAITS[2:], 1))


def _solver(index, query):
    """The root uuids of the solver's candidates, in its order (the
    handler's early answer for an unknown in_tree included)."""
    g = query.groups[0]
    if g.in_tree is not None and index.get(g.in_tree) is None:
        return []
    return [c.root_uuid for c in ac.allocation_candidates(index, query)]


def _flat(columns, query, limit=None):
    found = flat.select(columns, query, limit)
    return [columns.providers[i].uuid for i in found]


@pytest.mark.parametrize("seed", range(40))
def test_the_solvers_candidates_in_its_order(seed):
    rnd = random.Random(seed)
    size = rnd.randint(1, 40)
    index = _world(rnd, size)
    columns = flat.FlatColumns.build(index)
    assert columns is not None
    for _ in range(15):
        query = _query(rnd, size)
        assert flat.applies(query)
        want = _solver(index, query)
        assert _flat(columns, query) == want, query
        limit = rnd.randint(1, 5)
        assert _flat(columns, query, limit) == want[:limit]


def test_every_check_excludes_a_provider():
    index = build(
        P("ok", inventories={"VCPU": inv(8)}, traits=["T0"], aggs=["a0"]),
        P("full", inventories={"VCPU": inv(8)}, usage={"VCPU": 7}),
        P("reserved", inventories={"VCPU": inv(8, reserved=7)}),
        P("ratio", inventories={"VCPU": inv(8, ratio=0.2)}),
        P("min", inventories={"VCPU": inv(8, min_unit=4)}),
        P("max", inventories={"VCPU": inv(8, max_unit=1)}),
        P("step", inventories={"VCPU": inv(8, step=3)}),
        P("none", inventories={"DISK_GB": inv(8)}),
        P("over", inventories={"VCPU": inv(8, ratio=4.0)},
          usage={"VCPU": 31}))
    columns = flat.FlatColumns.build(index)
    assert _flat(columns, Q(G(res={"VCPU": 2}))) == ["ok"]
    assert _flat(columns, Q(G(res={"VCPU": 2}, required=["T0"]))) == ["ok"]
    assert _flat(columns, Q(G(res={"VCPU": 2}, forbidden=["T0"]))) == []
    assert _flat(columns, Q(G(res={"VCPU": 2}, member_of=[["a1"]]))) == []
    assert _flat(columns, Q(G(res={"VCPU": 2}),
                            root_forbidden=["T0"])) == []


def test_a_tree_or_a_shared_pool_is_not_flat():
    tree = build(P("cn", inventories={"VCPU": inv(8)}),
                 P("numa", parent="cn", inventories={"VCPU": inv(8)}))
    assert flat.FlatColumns.build(tree) is None
    pool = build(P("cn", inventories={"VCPU": inv(8)}, aggs=["a0"]),
                 P("pool", inventories={"DISK_GB": inv(8)},
                   traits=["MISC_SHARES_VIA_AGGREGATE"], aggs=["a0"]))
    assert flat.FlatColumns.build(pool) is None
    lone_pool = build(P("pool", inventories={"DISK_GB": inv(8)},
                        traits=["MISC_SHARES_VIA_AGGREGATE"]))
    assert flat.FlatColumns.build(lone_pool) is not None


def test_only_one_unsuffixed_group_applies():
    assert flat.applies(Q(G(res={"VCPU": 1}), policy="isolate"))
    assert not flat.applies(Q(G(suffix="1", res={"VCPU": 1})))
    assert not flat.applies(Q(G(res={"VCPU": 1}),
                              G(suffix="1", res={"DISK_GB": 1})))


def test_a_capacity_beyond_64_bits_leaves_it_to_the_solver():
    index = build(P("big", inventories={"VCPU": inv(2 ** 62, ratio=16.0)}))
    columns = flat.FlatColumns.build(index)
    assert flat.select(columns, Q(G(res={"VCPU": 1}))) is None
    assert _solver(index, Q(G(res={"VCPU": 1}))) == ["big"]


def test_patched_columns_follow_replaced_providers_and_old_ones_stay():
    index = build(*(P("rp%d" % i, inventories={"VCPU": inv(4)},
                      traits=["T0"]) for i in range(4)))
    before = flat.FlatColumns.build(index)
    query = Q(G(res={"VCPU": 2}, required=["T0"]))
    assert _flat(before, query) == ["rp0", "rp1", "rp2", "rp3"]
    full = dataclasses.replace(index.get("rp1"), usage={"VCPU": 3},
                               generation=2)
    untraited = dataclasses.replace(index.get("rp2"), traits=frozenset(),
                                    generation=2)
    index.set_tree("rp1", [full])
    index.set_tree("rp2", [untraited])
    after = before.patched(index, ["rp1", "rp2"])
    assert _flat(after, query) == ["rp0", "rp3"]
    assert _flat(after, query) == _flat(flat.FlatColumns.build(index),
                                        query)
    assert _flat(before, query) == ["rp0", "rp1", "rp2", "rp3"]


def test_patched_columns_are_none_once_a_pool_shares():
    index = build(P("cn", inventories={"VCPU": inv(8)}, aggs=["a0"]),
                  P("pool", inventories={"DISK_GB": inv(8)}, aggs=["a0"]))
    columns = flat.FlatColumns.build(index)
    sharing = dataclasses.replace(
        index.get("pool"), traits=frozenset(["MISC_SHARES_VIA_AGGREGATE"]),
        generation=2)
    index.set_tree("pool", [sharing])
    assert columns.patched(index, ["pool"]) is None
