"""Decide a group: the sequential answer first, then the joint model
from it, within the time budget.

The sequential answer (:mod:`.greedy`) is HiGHS's starting solution (its
first incumbent), so the joint answer is never worse than it; when the
budget runs out before HiGHS finds better, the sequential answer is the
plan. :class:`Answer` says which answer was used (``method``) and, when
HiGHS proved a bound, how far the used answer may be from the optimum
(``gap``, HiGHS's relative gap: ``|objective - bound| / |objective|``).
The joint model is not built (the sequential answer is used) when the
model would be too large (:data:`.classes.MAX_PATTERNS`).
"""

import dataclasses
import time

import numpy as np

from gantt.scheduler.groups import classes as classes_mod
from gantt.scheduler.groups import greedy
from gantt.scheduler.groups import highs
from gantt.scheduler.groups import milp
from gantt.scheduler.groups import problem as problem_mod

#: which answer a plan uses
OPTIMAL = "solver-optimal"
FEASIBLE = "solver-feasible"
GREEDY = "greedy-fallback"
#: relative: objectives closer than this are the same
_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True, eq=False)
class Answer:
    """The plan's hosts, or why there is none."""

    rows: np.ndarray | None          # host row per member slot
    alternates: tuple = ()           # per slot: host rows, best first
    method: str = GREEDY
    gap: float | None = None         # relative, when a bound is known
    objective: float | None = None
    seconds: float = 0.0
    reason: str = ""

    @property
    def placed(self):
        return self.rows is not None


def decide(problem, time_budget=1.0, alternates=2, use_solver=True,
           node_limit=None):
    """The plan for ``problem`` (see the module docstring); ``node_limit``
    also bounds HiGHS's branch-and-bound nodes (a budget that does not
    depend on the machine's speed).

    :raises: InvalidRequest for a problem the solver cannot read
    """
    problem_mod.check(problem)
    started = time.monotonic()
    if problem.members == 1 and len(problem.shapes) == 1:
        return _one_member(problem, alternates, started)
    try:
        classes = classes_mod.build(problem)
    except classes_mod.TooLarge:
        classes = None
    if _host_affinity(problem):
        rows, method, gap = _one_host(problem), OPTIMAL, 0.0
    else:
        rows, method, gap = _joint(problem, classes, time_budget,
                                   use_solver, node_limit)
    seconds = time.monotonic() - started
    if rows is None:
        return Answer(None, method=method, seconds=seconds,
                      reason=_why_not(problem, method))
    return Answer(rows, _alternates(problem, classes, rows, alternates),
                  method, gap, score(problem, rows), seconds)


def _joint(problem, classes, time_budget, use_solver, node_limit):
    """(rows, method, gap): HiGHS's answer from the sequential one, or
    the sequential one when HiGHS did not improve on it in time."""
    sequential = greedy.place(problem)
    if not use_solver or classes is None or problem.members == 0:
        return sequential, GREEDY, None
    result = milp.solve(problem, classes, max(time_budget, 0.0),
                        sequential, node_limit)
    if result.status == "infeasible":
        return None, OPTIMAL, None
    if result.status == "optimal":
        return (milp.decode(problem, classes, result.counts), OPTIMAL,
                result.gap)
    return _stopped(problem, classes, result, sequential)


def _stopped(problem, classes, result, sequential):
    """(rows, method, gap) when the budget ran out: HiGHS's incumbent if
    it beats the sequential answer, else the sequential answer."""
    rows = (None if result.counts is None
            else milp.decode(problem, classes, result.counts))
    if rows is not None and (sequential is None or _better(
            problem, result, rows, sequential)):
        return rows, FEASIBLE, result.gap
    if sequential is None:
        return None, GREEDY, None
    # its gap as the model counts its objective (HiGHS's bound is in it)
    value = (score(problem, sequential) if result.start is None
             else result.start)
    return sequential, GREEDY, highs.gap(value, result.bound)


def _better(problem, result, rows, sequential):
    """Whether HiGHS's incumbent beats the sequential answer (by the
    model's objective when that answer was HiGHS's start)."""
    if result.start is None:
        return score(problem, rows) < score(problem, sequential)
    return result.objective < result.start - _TOLERANCE * max(
        1.0, abs(result.start))


def _one_member(problem, alternates, started):
    """One member (a member built anew, a member's alternates): every
    host the hard policies allow is ranked, which is exact."""
    best = greedy.ranked(problem, alternates + 1)
    seconds = time.monotonic() - started
    if not len(best):
        return Answer(None, method=OPTIMAL, seconds=seconds,
                      reason=_why_not(problem, OPTIMAL))
    rows = best[:1]
    return Answer(rows, (tuple(int(r) for r in best[1:]),), OPTIMAL, 0.0,
                  score(problem, rows), seconds)


def _host_affinity(problem):
    return any(p.rule == "affinity" and p.level == problem_mod.HOST
               for p in problem.policies)


def _one_host(problem):
    """Every member on one host (affinity at host): the best host that
    takes them all, exactly."""
    whole = np.array([[s.count for s in problem.shapes]], dtype=np.int64)
    fits = classes_mod.fitting(problem, whole)[:, 0]
    if not fits.any():
        return None
    room = problem.free.sum(axis=1)
    if problem.objective == "fewest-hosts":
        room = -room
    host = int(np.flatnonzero(fits)[np.argmax(room[fits])])
    return np.full(problem.members, host, dtype=np.int64)


def score(problem, rows):
    """The objective (lower is better) of a host per member, as the joint
    model counts it."""
    counts = np.bincount(rows, minlength=problem.hosts)
    used = np.flatnonzero(counts)
    if problem.objective == "balanced":
        value = _balanced(problem, rows)
    else:
        value = {"most-spread": -float(len(used)),
                 "fewest-hosts": float(len(used))}[problem.objective]
    for policy in problem.soft():
        per = np.bincount(problem.domain(policy.level)[rows])
        per = per[per > 0]
        if policy.rule == "soft-affinity":
            value += policy.weight * len(per)
        else:
            value += policy.weight * float(np.maximum(per - 1, 0).sum())
    return value


def _balanced(problem, rows):
    need = np.zeros_like(problem.free, dtype=float)
    start = 0
    for shape in problem.shapes:
        np.add.at(need, rows[start:start + shape.count], shape.demand)
        start += shape.count
    used = need.any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(need > 0, need / problem.free, 0.0)
    return float(np.nan_to_num(share, posinf=1.0).max(axis=1)[used].sum())


def _alternates(problem, classes, rows, count):
    """Per member: hosts of its class (same domains, same fitting
    patterns) the plan leaves empty: moving the member there keeps every
    policy the plan keeps. Hosts of no class (host affinity) have none."""
    if count <= 0 or classes is None:
        return tuple(() for _ in rows)
    empty = (np.bincount(rows, minlength=problem.hosts) == 0) & (
        problem.held() == 0)
    spare = [tuple(int(h) for h in hosts[empty[hosts]][:count])
             for hosts in classes.hosts]
    return tuple(spare[classes.of_host[row]] if classes.of_host[row] >= 0
                 else () for row in rows)


def _why_not(problem, method):
    levels = ", ".join("%s at %s" % (p.rule, p.level) for p in problem.hard())
    proof = ("proved by the joint model" if method == OPTIMAL
             else "the sequential answer found none and the joint model "
                  "found none in time")
    return "%d members cannot be placed together under %s (%s)" % (
        problem.members, levels or "their resources", proof)
