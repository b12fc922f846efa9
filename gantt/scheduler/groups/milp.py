"""The joint answer: a mixed-integer model of the group, solved by HiGHS
(:mod:`.highs`) from a starting solution, within a time budget.

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

A starting solution is a host per member (the sequential answer): its
hosts counted per class and pattern, and every other column given the
value that answer implies (the domain it uses, its floor, its excess).
An answer that uses a host of no class or a pattern its class does not
fit has no starting solution (HiGHS then starts from nothing).
"""

import dataclasses

import numpy as np

from gantt.scheduler.groups import highs
from gantt.scheduler.groups import problem as problem_mod


@dataclasses.dataclass(frozen=True, eq=False)
class Result:
    """What HiGHS found: hosts per (class, pattern), or None."""

    counts: np.ndarray | None   # (classes, patterns) hosts taking each
    status: str                 # optimal | stopped | infeasible
    objective: float | None     # of ``counts``, as the model counts it
    bound: float | None         # the proven lower bound, when known
    gap: float | None           # HiGHS's relative gap of ``counts``
    start: float | None = None  # the starting solution's objective


class _Model:
    """Columns and rows, added as the policies ask."""

    def __init__(self, problem, classes):
        self.problem, self.classes = problem, classes
        self.cells = np.argwhere(classes.fits)          # (k, p) per y
        n = len(self.cells)
        self.cost = [_pattern_cost(problem, classes, self.cells)]
        self.upper = [classes.size[self.cells[:, 0]].astype(float)]
        self.integer = [np.ones(n, dtype=bool)]
        self.fills = []         # per added block: y -> its start values
        self.rows, self.lower_b, self.upper_b = [], [], []
        self.size = np.array(
            [classes.patterns[p].sum() for _, p in self.cells], dtype=float)

    @property
    def width(self):
        return sum(len(c) for c in self.cost)

    def add_columns(self, count, cost, upper, integer, fill):
        """``count`` columns; ``fill(y)``: their values in the starting
        solution whose hosts per cell are ``y``."""
        start = self.width
        self.cost.append(np.full(count, float(cost)))
        self.upper.append(np.full(count, float(upper)))
        self.integer.append(np.full(count, integer, dtype=bool))
        self.fills.append(fill)
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

    def placed(self, level, y):
        """Members ``y`` puts in each domain of :func:`_domains`."""
        # shifted by one: a soft policy's level may be unknown (-1)
        domain = self.classes.domains[level][self.cells[:, 0]] + 1
        per = np.bincount(domain, weights=y * self.size,
                          minlength=int(domain.max(initial=0)) + 1)
        return per[_domains(self, level) + 1]

    def start(self, y):
        """The full starting solution of hosts per cell ``y``."""
        return np.concatenate([y] + [fill(y) for fill in self.fills])

    def mip(self):
        rows, cols, values = [], [], []
        for r, entries in enumerate(self.rows):
            rows.extend([r] * len(entries))
            cols.extend(entries)
            values.extend(entries.values())
        upper = np.concatenate(self.upper)
        return highs.Mip(
            np.concatenate(self.cost), np.zeros(len(upper)), upper,
            np.concatenate(self.integer), np.array(self.lower_b, float),
            np.array(self.upper_b, float), np.array(rows, np.int64),
            np.array(cols, np.int64), np.array(values, float))


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


def solve(problem, classes, time_limit, start=None, node_limit=None):
    """Solve the joint model within ``time_limit`` seconds (and
    ``node_limit`` nodes), from ``start`` (a host row per member, shapes
    in order) when given."""
    model = _Model(problem, classes)
    if not len(model.cells):
        return Result(None, "infeasible", None, None, None)
    _capacity_rows(model)
    for policy in problem.policies:
        if policy.level != problem_mod.HOST:
            _LEVEL_ROWS[policy.rule](model, policy)
    y = None if start is None else _cells_of(model, start)
    return _run(model, time_limit, y, node_limit)


def _cells_of(model, rows):
    """Hosts per cell of a host per member, or None when a host is of no
    class or takes a pattern its class does not fit."""
    problem, classes = model.problem, model.classes
    shape_of = np.repeat(np.arange(len(problem.shapes)),
                         [s.count for s in problem.shapes])
    taken = np.zeros((problem.hosts, len(problem.shapes)), dtype=np.int64)
    np.add.at(taken, (rows, shape_of), 1)
    used = np.flatnonzero(taken.any(axis=1))
    pattern_of = {tuple(p): i for i, p in enumerate(classes.patterns)}
    cell_of = {(int(k), int(p)): i for i, (k, p) in enumerate(model.cells)}
    y = np.zeros(len(model.cells))
    for host in used:
        cell = cell_of.get((int(classes.of_host[host]),
                            pattern_of.get(tuple(taken[host]), -1)))
        if cell is None:
            return None
        y[cell] += 1
    return y


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


def _used(model, level):
    """Start values of one binary per domain: 1 where members go."""
    return lambda y: (model.placed(level, y) > 0).astype(float)


def _affinity_rows(model, policy):
    domains = _domains(model, policy.level)
    start = model.add_columns(len(domains), 0.0, 1.0, True,
                              _used(model, policy.level))
    big = float(model.problem.members)
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -big
        model.add_row(entries, -np.inf, 0)
    model.add_row({start + i: 1.0 for i in range(len(domains))}, 1, 1)


def _spread_rows(model, policy):
    held = _held_in(model, policy.level)
    domains = _domains(model, policy.level)
    floor = model.add_columns(
        1, 0.0, np.inf, False,
        lambda y: [(model.placed(policy.level, y) + held[domains]).min()])
    for d in domains:
        entries = model.in_domain(policy.level, d)
        model.add_row({**entries, floor: -1.0}, -held[d], np.inf)
        model.add_row({**entries, floor: -1.0}, -np.inf,
                      policy.limit - held[d])


def _soft_affinity_rows(model, policy):
    domains = _domains(model, policy.level)
    start = model.add_columns(len(domains), policy.weight, 1.0, True,
                              _used(model, policy.level))
    big = float(model.problem.members)
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -big
        model.add_row(entries, -np.inf, 0)


def _soft_anti_rows(model, policy):
    domains = _domains(model, policy.level)
    held = _held_in(model, policy.level)
    start = model.add_columns(
        len(domains), policy.weight, np.inf, False,
        lambda y: np.maximum(
            model.placed(policy.level, y) + held[domains] - 1, 0))
    for i, d in enumerate(domains):
        entries = model.in_domain(policy.level, d)
        entries[start + i] = -1.0
        model.add_row(entries, -np.inf, 1 - held[d])


_LEVEL_ROWS = {"anti-affinity": _cap_rows, "max-per": _cap_rows,
               "affinity": _affinity_rows, "spread": _spread_rows,
               "soft-affinity": _soft_affinity_rows,
               "soft-anti-affinity": _soft_anti_rows}


def _run(model, time_limit, y, node_limit):
    mip = model.mip()
    start = None if y is None else model.start(y)
    outcome = highs.solve(mip, time_limit, start, node_limit)
    start_value = None if start is None else float(mip.cost @ start)
    if outcome.x is None:
        return Result(None, outcome.status, None, outcome.bound, None,
                      start_value)
    counts = np.zeros(model.classes.fits.shape, dtype=np.int64)
    ks, ps = model.cells[:, 0], model.cells[:, 1]
    counts[ks, ps] = np.round(outcome.x[:len(model.cells)]).astype(np.int64)
    return Result(counts, outcome.status, outcome.objective, outcome.bound,
                  outcome.gap, start_value)


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
