"""The joint answer: a mixed-integer model of the group, solved by HiGHS
(``scipy.optimize.milp``).

Variables: ``y[k, p]``, how many hosts of class ``k`` take pattern ``p``
(see :mod:`.classes`); one binary per domain for an affinity level (the
domain chosen) and for a soft-affinity level (the domain used); one
continuous excess per domain for a soft-anti-affinity level; one floor
per spread level. Rows:

* each class lends at most its number of hosts;
* each shape gets exactly its count of members;
* ``anti-affinity``/``max-per`` at a level: members per domain (the
  group's held members counted) at most the limit (at ``host`` the
  patterns already keep it);
* ``affinity`` at a level: members only in the one chosen domain;
* ``spread`` with max skew K: every open domain between a floor ``t``
  and ``t + K``.

Objective: ``most-spread`` -1 per host used, ``fewest-hosts`` +1,
``balanced`` the largest share of its free room a pattern takes of the
host; plus each soft policy's weight per domain used (soft-affinity) or
per member beyond the first in a domain (soft-anti-affinity).
"""

import dataclasses

import numpy as np
from scipy import optimize
from scipy import sparse

from gantt.scheduler.groups import problem as problem_mod


@dataclasses.dataclass(frozen=True, eq=False)
class Result:
    """What HiGHS found: hosts per (class, pattern), or None."""

    counts: np.ndarray | None   # (classes, patterns) hosts taking each
    status: str                 # optimal | feasible | infeasible | none
    objective: float | None
    bound: float | None         # the proven lower bound, when known


class _Model:
    """Columns and rows, added as the policies ask."""

    def __init__(self, problem, classes):
        self.problem, self.classes = problem, classes
        self.cells = np.argwhere(classes.fits)          # (k, p) per y
        n = len(self.cells)
        self.cost = [_pattern_cost(problem, classes, self.cells)]
        self.upper = [classes.size[self.cells[:, 0]].astype(float)]
        self.integer = [np.ones(n)]
        self.rows, self.lower_b, self.upper_b = [], [], []
        self.size = np.array(
            [classes.patterns[p].sum() for _, p in self.cells], dtype=float)

    @property
    def width(self):
        return sum(len(c) for c in self.cost)

    def add_columns(self, count, cost, upper, integer):
        start = self.width
        self.cost.append(np.full(count, float(cost)))
        self.upper.append(np.full(count, float(upper)))
        self.integer.append(np.full(count, 1.0 if integer else 0.0))
        return start

    def add_row(self, entries, low, high):
        """``entries``: {column: coefficient}."""
        self.rows.append(entries)
        self.lower_b.append(low)
        self.upper_b.append(high)

    def in_domain(self, level, domain):
        """{y column: members it puts in ``domain`` at ``level``}."""
        where = self.classes.domains[level][self.cells[:, 0]] == domain
        return {int(i): self.size[i] for i in np.flatnonzero(where)}

    def matrix(self):
        data, row_ids, col_ids = [], [], []
        for r, entries in enumerate(self.rows):
            for col, value in entries.items():
                row_ids.append(r)
                col_ids.append(col)
                data.append(value)
        return sparse.csr_array((data, (row_ids, col_ids)),
                                shape=(len(self.rows), self.width))


def _pattern_cost(problem, classes, cells):
    ks, ps = cells[:, 0], cells[:, 1]
    members = classes.patterns[ps].sum(axis=1).astype(float)
    cost = {"most-spread": -np.ones(len(cells)),
            "fewest-hosts": np.ones(len(cells)),
            "balanced": classes.cost[ks, ps]}[problem.objective].copy()
    for policy in problem.soft():
        if policy.level != problem_mod.HOST:
            continue
        if policy.rule == "soft-affinity":
            cost += policy.weight
        else:
            cost += policy.weight * (members - 1)
    return cost


def solve(problem, classes, time_limit):
    """Solve the joint model within ``time_limit`` seconds."""
    model = _Model(problem, classes)
    if not len(model.cells):
        return Result(None, "infeasible", None, None)
    _capacity_rows(model)
    for policy in problem.policies:
        if policy.level != problem_mod.HOST:
            _LEVEL_ROWS[policy.rule](model, policy)
    return _run(model, time_limit)


def _capacity_rows(model):
    cells, classes = model.cells, model.classes
    for k in range(len(classes.hosts)):
        cols = np.flatnonzero(cells[:, 0] == k)
        if len(cols):
            model.add_row({int(c): 1.0 for c in cols}, 0, classes.size[k])
    for s, shape in enumerate(model.problem.shapes):
        per = classes.patterns[cells[:, 1], s]
        model.add_row({int(c): float(per[c]) for c in np.flatnonzero(per)},
                      shape.count, shape.count)


def _domains(model, level):
    return np.unique(model.classes.domains[level])


def _held_in(model, level):
    """Members the group holds per domain id at ``level``."""
    problem = model.problem
    domain, held = problem.domain(level), problem.held()
    known = domain >= 0
    return np.bincount(domain[known], weights=held[known],
                       minlength=int(domain.max(initial=-1)) + 1)


def _cap_rows(model, policy):
    held = _held_in(model, policy.level)
    limit = problem_mod.level_limit(policy)
    for d in _domains(model, policy.level):
        model.add_row(model.in_domain(policy.level, d), 0, limit - held[d])


def _affinity_rows(model, policy):
    domains = _domains(model, policy.level)
    start = model.add_columns(len(domains), 0.0, 1.0, True)
    big = float(model.problem.members)
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -big
        model.add_row(entries, -np.inf, 0)
    model.add_row({start + i: 1.0 for i in range(len(domains))}, 1, 1)


def _spread_rows(model, policy):
    floor = model.add_columns(1, 0.0, np.inf, False)
    held = _held_in(model, policy.level)
    for d in _domains(model, policy.level):
        entries = model.in_domain(policy.level, d)
        model.add_row({**entries, floor: -1.0}, -held[d], np.inf)
        model.add_row({**entries, floor: -1.0}, -np.inf,
                      policy.limit - held[d])


def _soft_affinity_rows(model, policy):
    domains = _domains(model, policy.level)
    start = model.add_columns(len(domains), policy.weight, 1.0, True)
    big = float(model.problem.members)
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -big
        model.add_row(entries, -np.inf, 0)


def _soft_anti_rows(model, policy):
    domains = _domains(model, policy.level)
    start = model.add_columns(len(domains), policy.weight, np.inf, False)
    held = _held_in(model, policy.level)
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -1.0
        model.add_row(entries, -np.inf, 1 - held[d])


_LEVEL_ROWS = {"anti-affinity": _cap_rows, "max-per": _cap_rows,
               "affinity": _affinity_rows, "spread": _spread_rows,
               "soft-affinity": _soft_affinity_rows,
               "soft-anti-affinity": _soft_anti_rows}


def _run(model, time_limit):
    n = len(model.cells)
    result = optimize.milp(
        np.concatenate(model.cost),
        integrality=np.concatenate(model.integer),
        bounds=optimize.Bounds(0, np.concatenate(model.upper)),
        constraints=optimize.LinearConstraint(
            model.matrix(), model.lower_b, model.upper_b),
        options={"time_limit": time_limit, "presolve": True})
    bound = getattr(result, "mip_dual_bound", None)
    if result.x is None:
        status = "infeasible" if result.status == 2 else "none"
        return Result(None, status, None, bound)
    counts = np.zeros(model.classes.fits.shape, dtype=np.int64)
    ks, ps = model.cells[:, 0], model.cells[:, 1]
    counts[ks, ps] = np.round(result.x[:n]).astype(np.int64)
    status = "optimal" if result.status == 0 else "feasible"
    return Result(counts, status, float(result.fun), bound)


def decode(problem, classes, counts):
    """Host row per member (shapes in order) from ``counts``."""
    per_shape = [[] for _ in problem.shapes]
    for k, hosts in enumerate(classes.hosts):
        taken = 0
        for p in np.flatnonzero(counts[k]):
            for host in hosts[taken:taken + counts[k, p]]:
                for s, n in enumerate(classes.patterns[p]):
                    per_shape[s].extend([int(host)] * int(n))
            taken += counts[k, p]
    return np.array([r for rows in per_shape for r in rows], dtype=np.int64)
