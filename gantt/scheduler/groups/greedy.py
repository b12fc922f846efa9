"""The sequential answer: one member after another, as server groups are
placed today (each member sees the members placed before it, never the
ones still to come).

It is the baseline the benchmarks compare against, the joint model's
starting solution (HiGHS's first incumbent: the joint answer is never
worse), and the answer used when HiGHS finds no better one in time or the
model is too large.
"""

import numpy as np

from gantt.scheduler.groups import classes as classes_mod
from gantt.scheduler.groups import problem as problem_mod


def place(problem):
    """Host row per member (shapes in order), or None if a member found
    no host."""
    state = _State(problem)
    rows = []
    for index, shape in enumerate(problem.shapes):
        for _ in range(shape.count):
            row = state.best(index)
            if row is None:
                return None
            state.put(index, row)
            rows.append(row)
    return np.array(rows, dtype=np.int64)


def ranked(problem, count):
    """The best ``count`` hosts for a one-member problem, best first
    (every host its hard policies allow is ranked: for one member the
    sequential answer is the joint one)."""
    state = _State(problem)
    ok = state.allowed(0)
    rows = np.flatnonzero(ok)
    order = np.argsort(-state.score(0)[rows], kind="stable")[:count]
    return rows[order]


class _State:
    """Free room and member counts as the members are placed."""

    def __init__(self, problem):
        self.problem = problem
        self.free = problem.free.astype(float).copy()
        self.count = problem.held().astype(np.int64).copy()
        self.usable = classes_mod.usable(problem)
        self.cap = problem_mod.host_limit(problem)
        self.levels = {p.level: problem.domain(p.level)
                       for p in problem.policies}
        self.demand = np.stack([s.demand for s in problem.shapes]).astype(
            float).reshape(len(problem.shapes), -1)
        # room, fit and what is left open kept up to date row by row as
        # members are put (a host-level cap is the host limit's: skipped)
        self.room = self.free.sum(axis=1)
        self.fits = np.all(
            self.free[None, :, :] >= self.demand[:, None, :] - 1e-9, axis=2)
        self.fits &= np.stack([s.eligible for s in problem.shapes])
        self.fits &= self.usable
        self.open = self.count < self.cap
        self.checked = [p for p in problem.hard()
                        if p.level != problem_mod.HOST
                        or problem_mod.level_limit(p) is None]

    def per_domain(self, level):
        """Members per domain id at ``level``."""
        domain = self.levels[level]
        known = domain >= 0
        return np.bincount(domain[known], weights=self.count[known],
                           minlength=int(domain.max(initial=-1)) + 1)

    def in_domain(self, level):
        """Members in each host's domain at ``level``."""
        if level == problem_mod.HOST:
            return self.count
        domain = self.levels[level]
        per = self.per_domain(level)
        return np.where(domain >= 0, per[np.maximum(domain, 0)], 0)

    def allowed(self, index):
        ok = self.open & self.fits[index]
        for policy in self.checked:
            ok &= self._keeps(policy, ok)
        return ok

    def _keeps(self, policy, ok):
        members = self.in_domain(policy.level)
        limit = problem_mod.level_limit(policy)
        if limit is not None:
            return members < limit
        if policy.rule == "affinity":
            return (members > 0) if self.count.any() else ok
        # spread: a member may go where its domain stays within the skew
        # of the emptiest domain still open to the shape
        domain = self.levels[policy.level]
        open_domains = np.unique(domain[ok])
        if not len(open_domains):
            return ok
        low = self.per_domain(policy.level)[open_domains].min()
        return members + 1 <= low + policy.limit

    def best(self, index):
        ok = self.allowed(index)
        row = int(np.argmax(np.where(ok, self.score(index), -np.inf)))
        return row if ok[row] else None

    def score(self, index):
        """Higher is better: soft policies, then the objective."""
        score = 0.0        # an array once a soft policy adds to it
        for policy in self.problem.soft():
            members = self.in_domain(policy.level)
            sign = 1.0 if policy.rule == "soft-affinity" else -1.0
            score = score + sign * policy.weight * (
                members > 0 if sign > 0 else members)
        room = self.room / max(self.room.max(initial=0), 1.0) * 1e-3
        objective = self.problem.objective
        if objective == "fewest-hosts":
            return score + (self.count > 0) - room
        if objective == "most-spread":
            return score - (self.count > 0) + room
        demand = self.problem.shapes[index].demand
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(demand > 0, demand / self.free, 0.0)
        return score - np.nan_to_num(share, posinf=1.0).max(axis=1) * 1e-2

    def put(self, index, row):
        self.free[row] -= self.demand[index]
        self.count[row] += 1
        self.open[row] = self.count[row] < self.cap
        self.room[row] = self.free[row].sum()
        self.fits[:, row] &= np.all(
            self.free[row][None, :] >= self.demand - 1e-9, axis=1)
