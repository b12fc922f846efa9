"""A group placement problem as plain arrays, and its policy rules.

A :class:`Problem` is what the solver sees: each host's free room (one
column per resource class), each host's domain at every topology level a
policy names (``-1``: unknown), the member shapes (count, demand, which
hosts pass the shape's filters), the group's per-level policies and how
many members of the group each host holds already (a group that grows).
Level ``host`` is implicit: each host is its own domain.
"""

import dataclasses

import numpy as np

from gantt import exception
from gantt.scheduler.state import topology

HOST = topology.HOST
HARD_RULES = topology.HARD_RULES
SOFT_RULES = topology.SOFT_RULES
RULES = topology.RULES

OBJECTIVES = ("most-spread", "fewest-hosts", "balanced")

#: one rule at one level (failure domains' record)
Policy = topology.LevelPolicy


@dataclasses.dataclass(frozen=True, eq=False)
class Shape:
    """``count`` members asking ``demand`` each, on ``eligible`` hosts."""

    name: str
    count: int
    demand: np.ndarray       # (resources,)
    eligible: np.ndarray     # (hosts,) bool: passed this shape's filters


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """Everything the solver needs; see the module docstring."""

    free: np.ndarray                       # (hosts, resources)
    domains: dict                          # level -> (hosts,) int
    shapes: tuple
    policies: tuple = ()
    fixed: np.ndarray | None = None        # (hosts,) members held now
    objective: str = "most-spread"

    @property
    def hosts(self):
        return self.free.shape[0]

    @property
    def members(self):
        return sum(s.count for s in self.shapes)

    def held(self):
        """Members the group holds per host now (zeros if new)."""
        if self.fixed is None:
            return np.zeros(self.hosts, dtype=np.int64)
        return self.fixed

    def domain(self, level):
        """Each host's domain id at ``level`` (-1 unknown)."""
        if level == HOST:
            return np.arange(self.hosts)
        return self.domains[level]

    def hard(self):
        return [p for p in self.policies if p.rule in HARD_RULES]

    def soft(self):
        return [p for p in self.policies if p.rule in SOFT_RULES]


def check(problem):
    """Refuse a problem the solver cannot read (a typed InvalidRequest,
    never a traceback further on)."""
    if problem.objective not in OBJECTIVES:
        _refuse("objective %r is not one of %s" % (
            problem.objective, ", ".join(OBJECTIVES)))
    if len(problem.policies) > topology.MAX_POLICIES:
        _refuse("at most %d policies" % topology.MAX_POLICIES)
    for policy in problem.policies:
        _check_policy(problem, policy)
    affinities = [p.level for p in problem.policies if p.rule == "affinity"]
    if len(affinities) > 1:
        _refuse("one affinity level at most, got %s" % ", ".join(affinities))
    for shape in problem.shapes:
        if shape.count < 0 or len(shape.demand) != problem.free.shape[1]:
            _refuse("shape %s: bad count or demand" % shape.name)


def _check_policy(problem, policy):
    if policy.rule not in RULES:
        _refuse("rule %r is not one of %s" % (policy.rule, ", ".join(RULES)))
    if policy.level != HOST and policy.level not in problem.domains:
        _refuse("level %r is not a known topology level" % (policy.level,))
    if policy.rule == "spread" and policy.level == HOST:
        _refuse("spread at host: ask anti-affinity or max-per at host")
    if not 0 <= policy.weight <= topology.MAX_WEIGHT:
        _refuse("%s at %s: the weight must be within [0, %g]" % (
            policy.rule, policy.level, topology.MAX_WEIGHT))
    if policy.limit < (0 if policy.rule == "spread" else 1):
        _refuse("%s at %s: limit %d is too small" % (
            policy.rule, policy.level, policy.limit))


def _refuse(reason):
    raise exception.InvalidRequest(reason="group: " + reason)


def host_limit(problem):
    """The most members any one host may hold: the smallest hard limit
    at any level (a host is inside every domain that holds it)."""
    limits = [problem.members + int(problem.held().max(initial=0))]
    for policy in problem.hard():
        if policy.rule == "anti-affinity":
            limits.append(1)
        elif policy.rule == "max-per":
            limits.append(policy.limit)
    return min(limits)


def level_limit(policy):
    """The most members one domain may hold under a hard policy (None:
    no such cap)."""
    return {"anti-affinity": 1, "max-per": policy.limit}.get(policy.rule)
