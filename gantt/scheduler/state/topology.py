"""Failure domains: where a host is in the datacenter, and group policies
per level.

An operator names the datacenter's levels, outermost first
(``[topology] levels = datacenter,room,row,rack``); ``host`` is always the
last, implicit level. A provider's :class:`Location` is a path of named
levels, ``room=r1/row=b/rack=b07``: each level at most once, in the
configured order, not necessarily all of them (an unknown level is -1 in
:meth:`DomainColumns.domains`).

A domain is named by its level and its name alone: rack ``b07`` is one
rack wherever a report says it is, so names must be unique within a level
(a rack's name is usually its row's and its own, ``b07``).

Where a location comes from (see doc/source/admin/topology.rst): the
agent's report (``ComputeNode.location``, ``ProviderReport.location``)
wins; aggregates whose metadata says ``topology_level=<level>`` fill the
levels the report leaves out, the aggregate's name being the domain's
name (:meth:`Location.filled`).

This module depends on numpy and :mod:`gantt.exception` only: the claim
(:mod:`gantt.db.allocations`) parses the stored locations with it.
"""

import dataclasses
import re

import numpy as np

from gantt import exception

#: the last level, implicit in every topology: each host its own domain
HOST = "host"
#: the availability zone: a level every hard policy may name, listed in
#: ``[topology] levels`` or not (listing it places it for distance); a
#: host's domain there is its reported ``availability_zone``, never a
#: location's part nor a topology aggregate
ZONE = "zone"
#: ``[topology] levels``' default
DEFAULT_LEVELS = ("datacenter", "room", "row", "rack")
#: the aggregate metadata key that makes an aggregate a domain
AGGREGATE_KEY = "topology_level"
#: the bounds a reported location is checked against
MAX_NAME = 64
MAX_TEXT = 255
#: the largest weight of a soft level policy (NaN and infinities refused)
MAX_WEIGHT = 1000.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")

AFFINITY = "affinity"
ANTI_AFFINITY = "anti-affinity"
MAX_PER = "max-per"
SPREAD = "spread"
SOFT_AFFINITY = "soft-affinity"
SOFT_ANTI_AFFINITY = "soft-anti-affinity"
#: rules the claim enforces (the soft ones are weighers)
HARD_RULES = (AFFINITY, ANTI_AFFINITY, MAX_PER, SPREAD)
SOFT_RULES = (SOFT_AFFINITY, SOFT_ANTI_AFFINITY)
RULES = HARD_RULES + SOFT_RULES


@dataclasses.dataclass(frozen=True)
class Location:
    """A path of ``(level, name)`` pairs, outermost first."""

    parts: tuple = ()

    @classmethod
    def parse(cls, text):
        """``room=r1/rack=b07`` -> Location (syntax only; levels are
        checked by :meth:`Topology.check`). Empty or None: no location.

        :raises: InvalidLocation
        """
        if not text:
            return NOWHERE
        if len(text) > MAX_TEXT:
            raise _invalid(text[:40] + "...", "longer than %d" % MAX_TEXT)
        return cls(tuple(_pair(text, part) for part in text.split("/")))

    def get(self, level):
        """The domain's name at ``level``, or None."""
        return next((name for lvl, name in self.parts if lvl == level),
                    None)

    def levels(self):
        return tuple(level for level, _ in self.parts)

    def filled(self, other, order):
        """This location with ``other``'s levels where this one has none,
        in ``order`` (the topology's levels)."""
        names = dict(other.parts)
        names.update(self.parts)
        return Location(tuple((lvl, names[lvl]) for lvl in order
                              if lvl in names))

    def __str__(self):
        return "/".join("%s=%s" % part for part in self.parts)


NOWHERE = Location()


def _pair(text, part):
    level, sep, name = part.partition("=")
    if not sep:
        raise _invalid(text, "%r is not level=name" % part)
    for word in (level, name):
        if len(word) > MAX_NAME or not _NAME.match(word):
            raise _invalid(text, "%r is not a name (letters, digits, "
                           "'.', '_', ':', '-'; at most %d)" % (
                               word, MAX_NAME))
    return level, name


def _invalid(text, reason):
    return exception.InvalidLocation(location=text, reason=reason)


class Topology:
    """The configured levels, outermost first, ``host`` last."""

    def __init__(self, levels=()):
        levels = [lvl.strip() for lvl in levels if lvl.strip()]
        if HOST in levels[:-1]:
            raise exception.ConfigurationError(
                reason="[topology] levels: %s must be the last level" % HOST)
        if len(set(levels)) != len(levels):
            raise exception.ConfigurationError(
                reason="[topology] levels: a level is named twice")
        if levels[-1:] != [HOST]:
            levels.append(HOST)
        self.levels = tuple(levels)
        self._rank = {lvl: i for i, lvl in enumerate(self.levels)}

    def index(self, level):
        """The level's rank (0 outermost); UnknownLevel if not configured.
        """
        try:
            return self._rank[level]
        except KeyError:
            raise exception.UnknownLevel(
                level=level, levels=",".join(self.levels)) from None

    def check(self, location):
        """``location`` if its levels are known, below ``host`` and in
        order; InvalidLocation otherwise."""
        ranks = []
        for level in location.levels():
            if level == ZONE:
                raise _invalid(str(location), "%r is the availability zone, "
                               "reported as availability_zone" % ZONE)
            if level == HOST or level not in self._rank:
                raise _invalid(str(location), "unknown level %r (levels: "
                               "%s)" % (level, ",".join(self.levels[:-1])))
            ranks.append(self._rank[level])
        if ranks != sorted(set(ranks)):
            raise _invalid(str(location), "levels out of order or repeated "
                           "(order: %s)" % ",".join(self.levels[:-1]))
        return location

    def parse(self, text):
        """Parse and :meth:`check` a location's text."""
        return self.check(Location.parse(text))

    def unknown_levels(self, location):
        """The levels of ``location`` this topology does not have."""
        return [lvl for lvl in location.levels()
                if lvl not in self._rank or lvl in (HOST, ZONE)]

    def distance(self, a, b, same_host=False):
        """How far apart two locations are: 0 on one host, else the number
        of levels below the lowest level at which both name the same
        domain (1: same rack in ``…,rack,host``; ``len(levels)``: none).
        """
        if same_host:
            return 0
        common = [rank for rank, level in enumerate(self.levels[:-1])
                  if a.get(level) is not None
                  and a.get(level) == b.get(level)]
        return len(self.levels) - 1 - max(common) if common else len(
            self.levels)


@dataclasses.dataclass(frozen=True)
class LevelPolicy:
    """A group's rule at one level: ``anti-affinity`` at ``rack`` (every
    member on a distinct rack), ``affinity`` at ``row`` (all in one row),
    ``max-per`` (at most ``limit`` members per domain), ``spread`` (max
    skew ``limit``, as Kubernetes' topology spread), or the soft ones,
    weighed with ``weight``."""

    level: str
    rule: str
    limit: int = 1
    weight: float = 1.0

    @property
    def is_hard(self):
        return self.rule in HARD_RULES

    def __str__(self):
        if self.rule in (MAX_PER, SPREAD):
            return "%s %d at %s" % (self.rule, self.limit, self.level)
        return "%s at %s" % (self.rule, self.level)


def check_policy(topology, policy):
    """``policy`` if valid for ``topology``; InvalidRequest otherwise."""
    if policy.rule not in RULES:
        raise exception.InvalidRequest(reason="unknown level policy rule "
                                       "%r (rules: %s)" % (
                                           policy.rule, ", ".join(RULES)))
    if policy.level != ZONE or not policy.is_hard:
        # a soft rule's distance needs the level's place among the others
        topology.index(policy.level)
    if policy.limit < 1:
        raise exception.InvalidRequest(
            reason="%s: the limit must be at least 1" % policy)
    if not 0 <= policy.weight <= MAX_WEIGHT:
        raise exception.InvalidRequest(
            reason="%s: the weight must be within [0, %g]" % (
                policy, MAX_WEIGHT))
    return policy


#: policies per level a group may carry (a few per level is plenty)
MAX_POLICIES = 16


def policies_of(wire, topology):
    """A group's ``level_policies`` (GroupLevelPolicy objects) as
    :class:`LevelPolicy` records, each checked (:func:`check_policy`).

    :raises: InvalidRequest, UnknownLevel
    """
    if len(wire) > MAX_POLICIES:
        raise exception.InvalidRequest(
            reason="at most %d level policies per group" % MAX_POLICIES)
    policies = tuple(check_policy(topology, LevelPolicy(
        p.level, p.rule, p.limit, p.weight)) for p in wire)
    if len({(p.level, p.rule) for p in policies}) != len(policies):
        raise exception.InvalidRequest(
            reason="a level policy is given twice")
    return policies


class DomainColumns:
    """Integer domain codes per level, one per host-table row.

    ``domains(level)[row]`` is the code of the row's domain at ``level``
    (an index into ``names(level)``), -1 where its location does not say.
    Codes are never reused; a level's column appears when a first row
    names it. Grown with the table (:meth:`grown`) like other columns.
    """

    def __init__(self, rows, codes=None, index=None, levels=None):
        self._rows = rows
        self._codes = codes or {}
        self._index = index or {}
        #: the configured levels, outermost first (the order locations
        #: are written in)
        self.levels = levels or Topology(DEFAULT_LEVELS).levels

    def set(self, row, location):
        """Write ``row``'s location (every level it does not name: -1)."""
        named = dict(location.parts)
        for level in set(named) - set(self._codes):
            self._codes[level] = np.full(self._rows, -1, dtype=np.int32)
            self._index[level] = {}
        for level, column in self._codes.items():
            name = named.get(level)
            column[row] = -1 if name is None else self._code(level, name)

    def _code(self, level, name):
        index = self._index[level]
        return index.setdefault(name, len(index))

    def domains(self, level, n=None):
        """The codes at ``level`` for rows ``[0, n)`` (all rows if None);
        at ``host`` each row is its own domain."""
        n = self._rows if n is None else n
        if level == HOST:
            return np.arange(n, dtype=np.int32)
        column = None if level == ZONE else self._codes.get(level)
        if column is None:
            return np.full(n, -1, dtype=np.int32)
        return column[:n]

    def names(self, level):
        """Domain names at ``level``, by code."""
        return list(self._index.get(level, ()))

    def grown(self, rows):
        codes = {}
        for level, column in self._codes.items():
            codes[level] = np.full(rows, -1, dtype=np.int32)
            codes[level][:column.shape[0]] = column
        index = {level: dict(names) for level, names in self._index.items()}
        return DomainColumns(rows, codes, index, self.levels)
