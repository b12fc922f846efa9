"""The referee of ``groups.py``: the exact per-host ILP of a group, and a
checker of any answer.

Independent of Gantt's joint model on purpose: one integer count per
host and shape (no host classes, no patterns), every hard policy as its
own rows, no time limit (HiGHS runs to a proof). A group it finds no
assignment for has none; the acceptance ratio of the solver under test
is measured against it. :func:`violations` re-checks an answer from
scratch (capacity, eligibility, every hard policy at every level).
"""

import numpy as np
from scipy import optimize
from scipy import sparse

HARD_LIMITS = {"anti-affinity": 1}


def _limit(policy):
    if policy.rule == "max-per":
        return policy.limit
    return HARD_LIMITS.get(policy.rule)


def _domain(problem, level):
    return np.arange(problem.hosts) if level == "host" else (
        problem.domains[level])


class _Rows:
    def __init__(self, width):
        self.width, self.rows, self.low, self.high = width, [], [], []

    def add(self, entries, low, high):
        self.rows.append(entries)
        self.low.append(low)
        self.high.append(high)

    def matrix(self):
        r, c, v = [], [], []
        for i, entries in enumerate(self.rows):
            for col, value in entries.items():
                r.append(i)
                c.append(col)
                v.append(value)
        return sparse.csr_array((v, (r, c)), shape=(len(self.rows),
                                                    self.width))


def feasible(problem):
    """Whether any assignment keeps every hard rule (HiGHS, no limit)."""
    hosts, shapes = problem.hosts, len(problem.shapes)
    held = problem.held()
    affinity = [p for p in problem.policies if p.rule == "affinity"
                and p.level != "host"]
    spread = [p for p in problem.policies if p.rule == "spread"]
    z_domains = {p.level: np.unique(_domain(problem, p.level)[
        _domain(problem, p.level) >= 0]) for p in affinity}
    width = hosts * shapes + sum(len(d) for d in z_domains.values()) + len(
        spread)
    x = lambda h, s: h * shapes + s          # noqa: E731
    upper = np.zeros(width)
    for s, shape in enumerate(problem.shapes):
        upper[[x(h, s) for h in range(hosts)]] = np.where(
            shape.eligible, shape.count, 0)
    rows = _Rows(width)
    for s, shape in enumerate(problem.shapes):
        rows.add({x(h, s): 1.0 for h in range(hosts)}, shape.count,
                 shape.count)
    demand = np.stack([s.demand for s in problem.shapes])
    for h in range(hosts):
        for r in range(problem.free.shape[1]):
            rows.add({x(h, s): demand[s, r] for s in range(shapes)},
                     -np.inf, problem.free[h, r])
    start = hosts * shapes
    for policy in problem.policies:
        domain = _domain(problem, policy.level)
        if policy.rule in ("affinity", "anti-affinity", "max-per",
                           "spread"):
            for s in range(shapes):
                upper[[x(h, s) for h in np.flatnonzero(domain < 0)]] = 0
        limit = _limit(policy)
        for d in np.unique(domain[domain >= 0]):
            members = {x(h, s): 1.0 for h in np.flatnonzero(domain == d)
                       for s in range(shapes)}
            fixed = held[domain == d].sum()
            if limit is not None:
                rows.add(members, -np.inf, limit - fixed)
        if policy in affinity:
            start = _affinity(problem, policy, rows, upper, z_domains,
                              start, x)
        if policy in spread:
            start = _spread(problem, policy, rows, upper, start, x)
    integrality = np.ones(width)
    result = optimize.milp(
        np.zeros(width), integrality=integrality,
        bounds=optimize.Bounds(0, upper),
        constraints=optimize.LinearConstraint(rows.matrix(), rows.low,
                                              rows.high))
    return result.x is not None


def _affinity(problem, policy, rows, upper, z_domains, start, x):
    domain = _domain(problem, policy.level)
    shapes, held = len(problem.shapes), problem.held()
    big = problem.members
    chosen = {}
    for i, d in enumerate(z_domains[policy.level]):
        col = start + i
        upper[col] = 1
        entries = {x(h, s): 1.0 for h in np.flatnonzero(domain == d)
                   for s in range(shapes)}
        entries[col] = -big
        rows.add(entries, -np.inf, 0)
        chosen[col] = 1.0
        if held[domain == d].any():
            rows.add({col: 1.0}, 1, 1)
    rows.add(chosen, 1, 1)
    return start + len(z_domains[policy.level])


def _spread(problem, policy, rows, upper, start, x):
    domain = _domain(problem, policy.level)
    shapes, held = len(problem.shapes), problem.held()
    upper[start] = problem.members
    open_rows = np.flatnonzero(np.any(np.stack(
        [s.eligible for s in problem.shapes]), axis=0) & (domain >= 0))
    for d in np.unique(domain[open_rows]):
        entries = {x(h, s): 1.0 for h in np.flatnonzero(domain == d)
                   for s in range(shapes)}
        fixed = held[domain == d].sum()
        rows.add({**entries, start: -1.0}, -fixed, np.inf)
        rows.add({**entries, start: -1.0}, -np.inf, policy.limit - fixed)
    return start + 1


def violations(problem, rows):
    """What an answer (host row per member, shapes in order) breaks."""
    broken = []
    used = np.zeros_like(problem.free, dtype=float)
    members = problem.held().astype(np.int64).copy()
    start = 0
    for shape in problem.shapes:
        mine = rows[start:start + shape.count]
        start += shape.count
        if not shape.eligible[mine].all():
            broken.append("a member on a host its filters refused")
        np.add.at(used, mine, shape.demand)
        np.add.at(members, mine, 1)
    if (used > problem.free + 1e-9).any():
        broken.append("capacity")
    for policy in problem.policies:
        broken += _broken(problem, policy, members)
    return broken


def _broken(problem, policy, members):
    domain = _domain(problem, policy.level)
    placed = members > 0
    if policy.rule in ("affinity", "anti-affinity", "max-per", "spread") \
            and (domain[placed] < 0).any():
        return ["%s at %s: unknown domain" % (policy.rule, policy.level)]
    per = np.bincount(domain[placed], weights=members[placed],
                      minlength=int(domain.max(initial=0)) + 1)
    limit = _limit(policy)
    if limit is not None and per.max(initial=0) > limit:
        return ["%s at %s" % (policy.rule, policy.level)]
    if policy.rule == "affinity" and np.count_nonzero(per) > 1:
        return ["affinity at %s" % policy.level]
    return []
