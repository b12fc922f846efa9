"""Failure domains in the claim: where hosts are, and a group's hard
policies per level checked against its placed members.

A host is a compute node or a standalone provider that is one (an L3
agent, a volume backend: :mod:`gantt.db.host_roots`). Its domain at a
level is the name its report's ``location`` gives (``room=r1/rack=b07``,
``host_reports`` or ``provider_reports``), else the name of a topology
aggregate it is in (metadata ``topology_level=<level>``: listed by host
name, a standalone provider's name being its host name, or reported by
the agent; of two, the first name in sorted order): the report wins, as
in the worker's cache (:mod:`gantt.scheduler.state.topology`). At level
``zone`` its domain is its reported availability zone, always.

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
  most ``limit`` (Kubernetes' skew; every domain some host of the
  candidate's kind is in counts, with 0 members where it has none).

A host with no domain at a hard policy's level is refused: nothing says
it is apart from (or together with) the others.
"""

import collections
import json
import typing

import sqlalchemy as sa

from gantt import exception
from gantt.db import host_roots
from gantt.db.models import AGGREGATE_HOSTS
from gantt.db.models import AGGREGATE_META
from gantt.db.models import AGGREGATES
from gantt.db.models import AGGS
from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS

#: the aggregate metadata key that makes an aggregate a domain
AGGREGATE_KEY = "topology_level"
HOST = "host"
ZONE = "zone"
COMPUTE = "compute"
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


class Places:
    """Where hosts are: per host root id its kind (``kinds``: ``compute``
    for a compute node, else its standalone provider's) and its
    ``{level: domain name}`` (``names``; none for a host nothing
    places). Two dicts rather than a record per host: a spread's claim
    reads every host."""

    def __init__(self, kinds=None, names=None):
        self.kinds = kinds if kinds is not None else {}
        self.names = names if names is not None else {}

    def keys(self):
        """The roots read (every one has a kind)."""
        return self.kinds.keys()

    def update(self, other):
        self.kinds.update(other.kinds)
        self.names.update(other.names)


def places(conn, roots):
    """The :class:`Places` of the host roots ``roots`` (None: every
    host, compute node or standalone), read in one statement."""
    rows = conn.execute(sa.union_all(*_place_queries(roots))).all()
    kinds, zones, found = {}, {}, collections.defaultdict(dict)
    tagged = collections.defaultdict(dict)
    for root, kind, location, name, level in rows:
        kinds[root] = kind         # every host read has an entry
        if level == ZONE:
            zones[root] = name
        elif location:
            found[root].update(p.split("=", 1) for p in location.split("/"))
        elif name is not None:
            known = tagged[root].get(level)
            tagged[root][level] = name if known is None else min(known,
                                                                  name)
    for root, names in tagged.items():
        for level, name in names.items():
            found[root].setdefault(level, name)
    for root, zone in zones.items():
        found[root][ZONE] = zone
    return Places(kinds, dict(found))


def _hosts():
    """The hosts a group's members may be on, as ``(root, kind, name,
    location, zone)`` selectables: compute nodes by their host name, and the
    standalone providers that are hosts (:mod:`gantt.db.host_roots`) by
    their provider name (an L3 agent named as its compute host is listed
    in that host's aggregates, as in the worker's cache)."""
    compute = sa.select(
        REPORTS.c.resource_provider_id.label("root"),
        sa.literal(COMPUTE, sa.String(32)).label("kind"),
        REPORTS.c.host.label("name"), REPORTS.c.location,
        REPORTS.c.availability_zone.label("zone"))
    sharing = (sa.exists()
               .where(TRAITS.c.resource_provider_id
                      == PROVIDER_REPORTS.c.resource_provider_id)
               .where(TRAITS.c.trait == host_roots.SHARING_TRAIT)
               .correlate_except(TRAITS))
    standalone = (sa.select(
        PROVIDER_REPORTS.c.resource_provider_id.label("root"),
        PROVIDER_REPORTS.c.kind, RP.c.name, PROVIDER_REPORTS.c.location,
        PROVIDER_REPORTS.c.availability_zone.label("zone"))
        .join(RP, RP.c.id == PROVIDER_REPORTS.c.resource_provider_id)
        .where(PROVIDER_REPORTS.c.kind != host_roots.POOL_KIND)
        .where(~sharing))
    return compute, standalone


def _place_queries(roots):
    """The parts of :func:`places`' UNION, per kind of host: reported
    locations, topology aggregates by host list and by report, and the
    availability zones (the domains at ``zone``; an aggregate never
    names one)."""
    tagged = (sa.select(AGGREGATES.c.id, AGGREGATES.c.uuid,
                        AGGREGATES.c.name, AGGREGATE_META.c.value)
              .join(AGGREGATE_META,
                    AGGREGATE_META.c.aggregate_id == AGGREGATES.c.id)
              .where(AGGREGATE_META.c.key == AGGREGATE_KEY)
              .where(AGGREGATE_META.c.value != ZONE).subquery())
    null = sa.null()
    parts = []
    for hosts in _hosts():
        if roots is not None:
            hosts = hosts.where(hosts.selected_columns.root.in_(
                sorted(roots)))
        hosts = hosts.subquery()
        head = (hosts.c.root, hosts.c.kind)
        parts += [
            sa.select(*head, hosts.c.location, null.label("name"),
                      null.label("level")),
            sa.select(*head, null, tagged.c.name, tagged.c.value)
            .join(AGGREGATE_HOSTS, AGGREGATE_HOSTS.c.host == hosts.c.name)
            .join(tagged, tagged.c.id == AGGREGATE_HOSTS.c.aggregate_id),
            sa.select(*head, null, tagged.c.name, tagged.c.value)
            .join(AGGS, AGGS.c.resource_provider_id == hosts.c.root)
            .join(tagged, tagged.c.uuid == AGGS.c.aggregate_uuid),
            sa.select(*head, null, hosts.c.zone,
                      sa.literal(ZONE, sa.String(255)))
            .where(hosts.c.zone.is_not(None))]
    return parts


def domain_of(place, root, level):
    """The domain of host root ``root`` at ``level`` (None: unknown)."""
    if level == HOST:
        return root
    names = place.names.get(root)
    return None if names is None else names.get(level)


def every_domain(place, level, kinds):
    """The domains at ``level`` some host of one of ``kinds`` is in (a
    spread's eligible domains: a volume service's spread counts the
    racks of volume backends, not those of compute hosts)."""
    return {domain_of(place, root, level)
            for root, kind in place.kinds.items() if kind in kinds} - {None}


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
        if domain is None or _breaks(policy, counts, domain, place, root):
            raise exception.GroupPolicyViolation(
                consumer=consumer, policy=str(policy), group=group_uuid,
                host="%s %s" % (policy.level, domain or "unknown"))


def _breaks(policy, counts, domain, place, root):
    if policy.rule == "anti-affinity":
        return counts[domain] >= 1
    if policy.rule == "max-per":
        return counts[domain] >= policy.limit
    if policy.rule == "affinity":
        return bool(counts) and set(counts) != {domain}
    every = every_domain(place, policy.level, {place.kinds[root]})
    floor = min((counts[d] for d in every), default=0)
    return counts[domain] + 1 - floor > policy.limit
