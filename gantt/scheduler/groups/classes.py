"""Member patterns and host classes: what keeps the joint model small.

A *pattern* is how many members of each shape one host takes (``(1, 0)``:
one member of the first shape). A host *fits* a pattern when it passed
the filters of every shape the pattern holds, has the room for all of
them and may hold that many members under the group's hard limits.

Hosts are folded into *classes*: hosts with the same domain at every
level a policy names and the same fitting patterns (and, for the
``balanced`` objective, about the same cost per pattern) are
interchangeable, so the model counts how many hosts of a class take each
pattern instead of deciding host by host. The unused hosts of a member's
class are its alternates: any of them keeps every policy the plan keeps.
"""

import dataclasses
import itertools

import numpy as np

from gantt.scheduler.groups import problem as problem_mod

#: more patterns than this: the joint model is not built (the sequential
#: answer is used, and says so)
MAX_PATTERNS = 2000


class TooLarge(Exception):
    """The model would need more patterns than :data:`MAX_PATTERNS`."""


@dataclasses.dataclass(frozen=True, eq=False)
class Classes:
    """Interchangeable hosts and the patterns they fit."""

    patterns: np.ndarray     # (patterns, shapes) members per shape
    hosts: list              # per class: host rows, best first
    fits: np.ndarray         # (classes, patterns) bool
    cost: np.ndarray         # (classes, patterns) balanced cost
    domains: dict            # level -> (classes,) domain id
    of_host: np.ndarray      # (hosts,) class of each host, -1 none

    @property
    def size(self):
        return np.array([len(h) for h in self.hosts], dtype=np.int64)


def usable(problem):
    """Hosts a member may go to at all: a known domain at every level a
    hard policy names, and, when the group already holds members under
    an affinity policy, the domain they are in."""
    mask = np.ones(problem.hosts, dtype=bool)
    held = problem.held()
    for policy in problem.hard():
        domain = problem.domain(policy.level)
        mask &= domain >= 0
        if policy.rule == "affinity" and held.any():
            mask &= np.isin(domain, np.unique(domain[held > 0]))
    return mask


def patterns(problem):
    """Every pattern a host could take, as a (patterns, shapes) array.

    :raises: TooLarge
    """
    cap = problem_mod.host_limit(problem)
    counts = [min(s.count, cap) for s in problem.shapes]
    total = 1
    for c in counts:
        total *= c + 1
        if total > MAX_PATTERNS * 4:
            raise TooLarge()
    rows = [p for p in itertools.product(*[range(c + 1) for c in counts])
            if 0 < sum(p) <= cap]
    if len(rows) > MAX_PATTERNS:
        raise TooLarge()
    return np.array(rows, dtype=np.int64).reshape(-1, len(counts))


def fitting(problem, pats):
    """(hosts, patterns) bool: which host fits which pattern."""
    demand = np.stack([s.demand for s in problem.shapes]).astype(float)
    need = pats @ demand                                   # (P, R)
    room = np.all(need[None, :, :] <= problem.free[:, None, :] + 1e-9,
                  axis=2)
    eligible = np.stack([s.eligible for s in problem.shapes], axis=1)
    # a pattern needs every shape it holds to be eligible on the host
    missing = (~eligible).astype(np.int64) @ (pats > 0).T.astype(np.int64)
    left = problem_mod.host_limit(problem) - problem.held()
    fits = room & (missing == 0) & (pats.sum(axis=1)[None, :] <= left[:, None])
    return fits & usable(problem)[:, None]


def balanced_cost(problem, pats):
    """(hosts, patterns): the largest share of a host's free room the
    pattern takes (lower is better: roomier hosts)."""
    demand = np.stack([s.demand for s in problem.shapes]).astype(float)
    need = pats @ demand
    with np.errstate(divide="ignore", invalid="ignore"):
        share = need[None, :, :] / problem.free[:, None, :]
    share = np.where(need[None, :, :] > 0, share, 0.0)
    return np.nan_to_num(share.max(axis=2), posinf=1.0)


def build(problem):
    """Fold the hosts into :class:`Classes`.

    :raises: TooLarge
    """
    pats = patterns(problem)
    fits = fitting(problem, pats)
    keep = np.flatnonzero(fits.any(axis=1))
    levels = sorted({p.level for p in problem.policies} - {problem_mod.HOST})
    cost = balanced_cost(problem, pats)[keep]
    columns = [problem.domain(level)[keep][:, None] for level in levels]
    columns.append(fits[keep].astype(np.int64))
    if problem.objective == "balanced":
        columns.append(np.round(cost * 10).astype(np.int64))
    signature = np.concatenate(columns, axis=1) if len(keep) else (
        np.zeros((0, 1), dtype=np.int64))
    _, first, inverse = np.unique(signature, axis=0, return_index=True,
                                  return_inverse=True)
    inverse = inverse.reshape(-1)
    order = _best_first(problem, keep)
    members = [[] for _ in first]
    for i in order:
        members[inverse[i]].append(int(keep[i]))
    of_host = np.full(problem.hosts, -1, dtype=np.int64)
    of_host[keep] = inverse
    class_cost = np.zeros((len(first), len(pats)))
    np.add.at(class_cost, inverse, cost)
    class_cost /= np.maximum(np.bincount(inverse, minlength=len(first)),
                             1)[:, None]
    return Classes(
        patterns=pats, hosts=[np.array(m, dtype=np.int64) for m in members],
        fits=fits[keep][first], cost=class_cost,
        domains={level: problem.domain(level)[keep][first]
                 for level in levels},
        of_host=of_host)


def _best_first(problem, keep):
    """Positions in ``keep`` in the order a class hands its hosts out:
    roomiest first, or fullest first when packing (fewest hosts)."""
    room = problem.free[keep].sum(axis=1) if len(keep) else np.zeros(0)
    order = np.argsort(room, kind="stable")
    return order if problem.objective == "fewest-hosts" else order[::-1]
