"""A server group's members per failure domain, over a view's rows.

The filter of hard policies per level and the distance weigher read the
same numbers, vectorised with the table's domain codes
(:meth:`HostView.domains`): a :class:`Census` per level counts the
group's members per domain with one ``np.bincount``. The claim checks
the same rules in SQL (:mod:`gantt.db.domains`); the two must agree.
"""

import typing

import numpy as np

from gantt.scheduler.state import topology as topology_mod


class Census(typing.NamedTuple):
    """Members per domain at one level."""

    codes: np.ndarray      # per row its domain code, -1: unknown
    counts: np.ndarray     # per domain code its members
    floors: np.ndarray     # per row: the fewest members of a domain some
                           # host of the row's kind is in (a spread's min)

    def members_at(self, rows=slice(None)):
        """Per row the members in its domain (0 where unknown)."""
        codes = self.codes[rows]
        return np.where(codes >= 0, self.counts[np.maximum(codes, 0)], 0)


def census(view, group, level):
    """The :class:`Census` of ``group`` (a GroupState) at ``level``,
    once per filter pass."""
    return view.memo(("census", group.uuid, level, _key(group)),
                     lambda: _census(view, group, level))


def _key(group):
    # members change between the instances of a request: a new census
    return tuple(sorted(group.hosts.items()))


def _census(view, group, level):
    codes = view.domains(level)
    # at least one domain: counts[0] is read (and masked) for unknown rows
    size = max(int(codes.max()) + 1 if len(codes) else 0, 1)
    rows, weights = [], []
    for host, members in group.hosts.items():
        row = view.row_of_host(host)
        if row is not None and codes[row] >= 0:
            rows.append(codes[row])
            weights.append(members)
    counts = np.bincount(np.array(rows, dtype=np.int64),
                         weights=np.array(weights, dtype=np.float64),
                         minlength=size).astype(np.int64)
    return Census(codes, counts, _floors(view.column("kind"), codes,
                                         counts))


def _floors(kinds, codes, counts):
    """Per row the fewest members over the domains the hosts of its kind
    are in: a volume service's spread counts the racks of volume
    backends, not those of compute hosts (the claim's rule too)."""
    located = (codes >= 0) & (kinds >= 0)
    if not located.any():
        return np.zeros(len(codes), dtype=np.int64)
    every = np.zeros((int(kinds.max()) + 1, len(counts)), dtype=bool)
    every[kinds[located], codes[located]] = True
    fewest = np.where(every, counts, np.iinfo(np.int64).max).min(axis=1)
    fewest[~every.any(axis=1)] = 0
    return np.where(kinds >= 0, fewest[np.maximum(kinds, 0)], 0)


def allowed(policy, found, rows=slice(None)):
    """Whether ``policy`` lets the next member go to each of ``rows``."""
    codes = found.codes[rows]
    here = found.members_at(rows)
    known = codes >= 0
    if policy.rule == topology_mod.ANTI_AFFINITY:
        return known & (here == 0)
    if policy.rule == topology_mod.MAX_PER:
        return known & (here < policy.limit)
    if policy.rule == topology_mod.AFFINITY:
        occupied = np.flatnonzero(found.counts)
        if len(occupied) == 0:
            return known
        return known & (codes == occupied[0]) & (len(occupied) == 1)
    return known & (here + 1 - found.floors[rows] <= policy.limit)


def why(policy, found, removed, level_name):
    """What ``policy`` removed, for NoValidHost and explain: "anti-affinity
    at rack: 3 members already on the 3 racks that fit"."""
    codes = found.codes[removed]
    unknown = int(np.count_nonzero(codes < 0))
    domains = np.unique(codes[codes >= 0])
    members = int(found.counts[domains].sum())
    reasons = {}
    if unknown:
        reasons["had no %s in their location (%s)" % (
            level_name, policy)] = unknown
    if len(domains):
        reasons["were ruled out by %s: %d member(s) already on the %d "
                "%s(s) that fit" % (policy, members, len(domains),
                                    level_name)] = len(codes) - unknown
    return reasons


def distances(view, group, levels, rows=slice(None)):
    """Per row the distance to the group's nearest member: 0 on a
    member's host, else the number of levels below the lowest level at
    which the row's domain holds a member (``len(levels)``: none, or no
    member yet). ``levels`` outermost first, ``host`` last."""
    depth = len(levels)
    size = view.n if isinstance(rows, slice) else len(rows)
    result = np.full(size, depth, dtype=np.int64)
    if not group.hosts:
        return result
    for index, level in enumerate(levels):
        here = census(view, group, level).members_at(rows) > 0
        result[here] = depth - 1 - index
    return result
