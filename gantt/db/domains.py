"""Failure domains in the claim: where hosts are, and a group's hard
policies per level checked against its placed members.

A host's domain at a level is the name its report's ``location`` gives
(``room=r1/rack=b07``), else the name of a topology aggregate it is in
(metadata ``topology_level=<level>``: listed by host name or reported by
the agent; of two, the first name in sorted order): the report wins, as
in the worker's cache (:mod:`gantt.scheduler.state.topology`).

:func:`places` reads them in **one** statement, in the claim's
transaction, after the group's members were read; the group row's
compare-and-swap (``gantt.db.allocations``) serialises the claims of one
group's members, so two claims can never both count the members without
each other. Locations themselves are the operator's data: a claim racing
an operator's move of a host between racks sees the host in one of them.

The rules (``LevelPolicy.rule``), for a member about to be placed in
domain ``d`` with ``counts`` members per domain so far:

* ``anti-affinity``: no member in ``d`` yet;
* ``max-per``: fewer than ``limit`` in ``d``;
* ``affinity``: ``d`` holds every member placed so far (or there is none);
* ``spread``: ``counts[d] + 1 - min(counts over every domain)`` is at
  most ``limit`` (Kubernetes' skew; every domain some host is in counts,
  with 0 members where it has none).

A host with no domain at a hard policy's level is refused: nothing says
it is apart from (or together with) the others.
"""

import collections
import json
import typing

import sqlalchemy as sa

from gantt import exception
from gantt.db.models import AGGREGATE_HOSTS
from gantt.db.models import AGGREGATE_META
from gantt.db.models import AGGREGATES
from gantt.db.models import AGGS
from gantt.db.models import REPORTS

#: the aggregate metadata key that makes an aggregate a domain
AGGREGATE_KEY = "topology_level"
HOST = "host"
HARD = ("affinity", "anti-affinity", "max-per", "spread")


class LevelRule(typing.NamedTuple):
    """A stored hard policy per level (the claim's view of a
    ``LevelPolicy``)."""

    level: str
    rule: str
    limit: int = 1

    def __str__(self):
        if self.rule in ("max-per", "spread"):
            return "%s %d at %s" % (self.rule, self.limit, self.level)
        return "%s at %s" % (self.rule, self.level)


def dumps(levels):
    """The ``instance_groups.level_policies`` text of hard policies."""
    if not levels:
        return None
    return json.dumps([[p.level, p.rule, p.limit] for p in levels])


def loads(text):
    """:func:`dumps`' reverse: a tuple of :class:`LevelRule`."""
    return tuple(LevelRule(*item) for item in json.loads(text or "[]"))


def places(conn, roots):
    """``{host root id: {level: domain name}}`` of the host roots
    ``roots`` (None: every host), in one statement."""
    located, listed, reported = _place_queries(roots)
    rows = conn.execute(sa.union_all(located, listed, reported)).all()
    found = collections.defaultdict(dict)
    tagged = collections.defaultdict(dict)
    for root, location, name, level in rows:
        entry = found[root]         # every host read has an entry
        if location:
            entry.update(p.split("=", 1) for p in location.split("/"))
        elif name is not None:
            known = tagged[root].get(level)
            tagged[root][level] = name if known is None else min(known,
                                                                  name)
    for root, names in tagged.items():
        for level, name in names.items():
            found[root].setdefault(level, name)
    return found


def _place_queries(roots):
    """The three parts of :func:`places`' UNION: reported locations, and
    topology aggregates by host list and by the agent's report."""
    root = REPORTS.c.resource_provider_id
    tagged = (sa.select(AGGREGATES.c.id, AGGREGATES.c.uuid,
                        AGGREGATES.c.name, AGGREGATE_META.c.value)
              .join(AGGREGATE_META,
                    AGGREGATE_META.c.aggregate_id == AGGREGATES.c.id)
              .where(AGGREGATE_META.c.key == AGGREGATE_KEY).subquery())
    null = sa.null()
    located = sa.select(root, REPORTS.c.location, null.label("name"),
                        null.label("level"))
    listed = (sa.select(root, null, tagged.c.name, tagged.c.value)
              .join(AGGREGATE_HOSTS, AGGREGATE_HOSTS.c.host == REPORTS.c.host)
              .join(tagged, tagged.c.id == AGGREGATE_HOSTS.c.aggregate_id))
    reported = (sa.select(root, null, tagged.c.name, tagged.c.value)
                .join(AGGS, AGGS.c.resource_provider_id == root)
                .join(tagged, tagged.c.uuid == AGGS.c.aggregate_uuid))
    if roots is not None:
        wanted = sorted(roots)
        located, listed, reported = (q.where(root.in_(wanted)) for q in (
            located, listed, reported))
    return located, listed, reported


def domain_of(place, root, level):
    """The domain of host root ``root`` at ``level`` (None: unknown)."""
    if level == HOST:
        return root
    return place.get(root, {}).get(level)


def check(policy, members, place, roots, consumer, group_uuid):
    """Refuse placing ``consumer`` on host roots ``roots`` if it would
    break ``policy`` given ``members`` (``Counter({root: members})``).

    :raises: GroupPolicyViolation naming the policy and its level
    """
    counts = collections.Counter()
    for member_root, n in members.items():
        domain = domain_of(place, member_root, policy.level)
        if domain is not None:
            counts[domain] += n
    for root in roots:
        domain = domain_of(place, root, policy.level)
        if domain is None or _breaks(policy, counts, domain, place):
            raise exception.GroupPolicyViolation(
                consumer=consumer, policy=str(policy), group=group_uuid,
                host="%s %s" % (policy.level, domain or "unknown"))


def _breaks(policy, counts, domain, place):
    if policy.rule == "anti-affinity":
        return counts[domain] >= 1
    if policy.rule == "max-per":
        return counts[domain] >= policy.limit
    if policy.rule == "affinity":
        return bool(counts) and set(counts) != {domain}
    every = {domain_of(place, root, policy.level) for root in place}
    floor = min((counts[d] for d in every - {None}), default=0)
    return counts[domain] + 1 - floor > policy.limit
