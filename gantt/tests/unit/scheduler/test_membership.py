"""Sparse aggregate membership answers as the dense matrix it replaced."""

import random

import numpy as np
import pytest

from gantt.scheduler.state import aggregates
from gantt.scheduler.state import columns
from gantt.scheduler.state import host_cache
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers


class Dense:
    """The reference: a rows x aggregates boolean matrix."""

    def __init__(self, rows):
        self.matrix = np.zeros((rows, 0), dtype=bool)
        self.index = {}

    def write(self, row, members):
        for uuid in members:
            if uuid not in self.index:
                self.index[uuid] = len(self.index)
                wider = np.zeros((self.matrix.shape[0], len(self.index)),
                                 dtype=bool)
                wider[:, :self.matrix.shape[1]] = self.matrix
                self.matrix = wider
        self.matrix[row] = False
        for uuid in members:
            self.matrix[row, self.index[uuid]] = True

    def grown(self, rows):
        bigger = np.zeros((rows, self.matrix.shape[1]), dtype=bool)
        bigger[:self.matrix.shape[0]] = self.matrix
        self.matrix = bigger


def _check(sparse, dense, n):
    names = list(dense.index)
    assert sparse.shape == (len(sparse.by_row), len(names))
    for uuid in names + ["never-seen"]:
        col = sparse.index.get(uuid)
        want = (dense.matrix[:n, dense.index[uuid]] if uuid in dense.index
                else np.zeros(n, dtype=bool))
        got = (sparse.column(col, n) if col is not None
               else np.zeros(n, dtype=bool))
        assert got.tolist() == want.tolist(), uuid
        if col is not None:
            assert sparse[:n, col].tolist() == want.tolist()
    rng = random.Random(len(names))
    for _ in range(5):
        some = rng.sample(names, min(len(names), rng.randint(0, 6)))
        cols = [sparse.index.get(u) for u in some]
        want = np.zeros(n, dtype=bool)
        for uuid in some:
            want |= dense.matrix[:n, dense.index[uuid]]
        assert sparse.any_of(cols, n).tolist() == want.tolist()
    for row in range(n):
        held = {u for u in names if dense.matrix[row, dense.index[u]]}
        assert sparse.members(row) == held
        # the matrix form tree_source reads: a row over every column
        flags = sparse[row, :len(names)]
        assert {names_by_col(sparse)[c] for c in np.flatnonzero(flags)} == (
            held)


def names_by_col(sparse):
    return sparse.index.names


@pytest.mark.parametrize("seed", range(6))
def test_random_writes_read_back_as_a_dense_matrix(seed):
    rng = random.Random(seed)
    rows = rng.choice((16, 64, 200))
    index = columns.KeyIndex()
    sparse = aggregates.Membership(rows, index)
    dense = Dense(rows)
    pool = ["agg-%d" % k for k in range(rng.choice((3, 12, 40)))]
    n = 0
    for _step in range(300):
        if rng.random() < 0.05:
            # the table grows: a copy with more rows, a copy of the index
            rows += rng.randint(1, 40)
            index = columns.KeyIndex(index.names)
            sparse = sparse.grown(rows, index)
            dense.grown(rows)
            continue
        row = rng.randrange(min(rows, n + 1))
        n = max(n, row + 1)
        # small and large aggregates: some rows stay sparse, others go
        # dense (an aggregate holding 1/16 of the rows or more)
        members = frozenset(rng.sample(pool, rng.randint(0, 3)))
        if rng.random() < 0.3:
            members |= {pool[0]}
        for uuid in members:
            index.add(uuid)
        sparse.write(row, members)
        dense.write(row, members)
    _check(sparse, dense, n)
    _check(sparse, dense, max(0, n // 2))    # a view of fewer rows


def test_rows_added_in_bulk_read_as_if_written_one_by_one():
    rng = random.Random(7)
    index = columns.KeyIndex()
    one_by_one = aggregates.Membership(500, index)
    sets = [frozenset(), frozenset({"zone"}), frozenset({"zone", "r1"}),
            frozenset({"r2"}), frozenset({"zone", "r2", "ssd"})]
    for s in sets:
        for uuid in s:
            index.add(uuid)
    # some rows held before the bulk, as reports cast while loading
    for row in range(20):
        one_by_one.write(row, sets[rng.randrange(len(sets))])
    bulk = one_by_one.grown(500, columns.KeyIndex(index.names))
    codes = np.array([rng.randrange(len(sets)) for _ in range(480)])
    bulk.add_rows(20, codes, sets)
    for row, code in enumerate(codes.tolist(), 20):
        one_by_one.write(row, sets[code])
    for col in range(len(index)):
        assert (bulk.column(col, 500).tolist()
                == one_by_one.column(col, 500).tolist())
    assert bulk.by_row == one_by_one.by_row
    assert bulk.any_of([0, 1, 2], 500).tolist() == one_by_one.any_of(
        [0, 1, 2], 500).tolist()


def test_equal_member_sets_are_held_once():
    index = columns.KeyIndex(["a", "b"])
    sparse = aggregates.Membership(8, index)
    for row in range(8):
        sparse.write(row, frozenset({"a", "b"}))
    assert len({id(sparse.members(row)) for row in range(8)}) == 1


def test_filters_see_aggregates_as_the_hosts_report_them():
    # 40 hosts; a zone every host is in, a rack of 3, a pair
    nodes = [helpers.node("h%02d" % i, aggregates=["zone"] + (
        ["rack"] if i < 3 else []) + (["pair"] if i in (5, 30) else []))
        for i in range(40)]
    view = helpers.make_view(*nodes)
    for agg, rows in (("zone", range(40)), ("rack", range(3)),
                      ("pair", (5, 30)), ("none", ())):
        want = np.zeros(40, dtype=bool)
        want[list(rows)] = True
        assert view.in_aggregate(agg).tolist() == want.tolist()
    assert view.in_any_aggregate(["rack", "pair", "none"]).tolist() == [
        i < 3 or i in (5, 30) for i in range(40)]
    assert view.record(30).aggregates == {"zone", "pair"}
    assert aggregates.rows_in(view, ["pair"]).tolist() == [
        i in (5, 30) for i in range(40)]


def test_a_view_does_not_see_rows_added_after_it():
    cache = helpers.make_cache(helpers.node("a", aggregates=["x"]))
    view = helpers.view_of(cache, 60)
    cache.apply_report(host_cache.HostReport.from_compute_node(
        factories.compute_node_obj("b", aggregates=["x"]),
        received_at=helpers.NOW))
    assert view.in_aggregate("x").tolist() == [True]
    assert view.in_any_aggregate(["x"]).tolist() == [True]
