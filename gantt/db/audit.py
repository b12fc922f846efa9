"""The orphan audit: allocations whose consumer never reached its host.

A conductor that dies between a claim and the build leaves an allocation
nobody will release. Agents that report ``instance_uuids`` say what really
runs on their host, so an allocation is an orphan when the host it is on
reported, more than ``grace`` seconds after the claim, without listing the
consumer. Hosts whose agent does not report instances are never judged.

A move's source is held by its migration consumer while the source host
still runs (and lists) the instance: an active move counts as listed when
its instance is.

:func:`overcommitted` checks the invariant every claim keeps (no provider
allocated beyond its capacity), for the demo, the C1M benchmark and the
functional tests; :func:`level_breaches` checks every server group's
policies per level against where its members are.
"""

import collections
import dataclasses
import datetime
import json
import typing

import sqlalchemy as sa

from gantt.db import allocations
from gantt.db import domains
from gantt.db import host_roots
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import GROUPS
from gantt.db.models import INV
from gantt.db.models import MOVES
from gantt.db.models import REPORTS
from gantt.db.models import RP


@dataclasses.dataclass(frozen=True)
class Orphan:
    consumer_uuid: str
    host: str
    claimed_at: datetime.datetime
    reported_at: datetime.datetime
    resources: dict          # class -> amount on that host


def find_orphans(db, grace_seconds):
    """Every orphaned allocation, oldest claim first.

    :param grace_seconds: how long after a claim an agent may still not
        list the instance (builds take time; reports are periodic)
    """
    grace = datetime.timedelta(seconds=grace_seconds)
    query = (
        sa.select(ALLOC.c.consumer_uuid, ALLOC.c.resource_class,
                  ALLOC.c.used, REPORTS.c.host, REPORTS.c.instance_uuids,
                  REPORTS.c.received_at,
                  sa.func.coalesce(CONSUMERS.c.updated_at,
                                   CONSUMERS.c.created_at).label("claimed"),
                  MOVES.c.instance_uuid.label("moving"))
        .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
        .join(REPORTS,
              REPORTS.c.resource_provider_id == RP.c.root_provider_id)
        .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
        .outerjoin(MOVES, sa.and_(
            MOVES.c.migration_uuid == ALLOC.c.consumer_uuid,
            MOVES.c.state == "active"))
        .where(REPORTS.c.instance_uuids.is_not(None)))
    found = collections.OrderedDict()
    with db.begin() as conn:
        for row in conn.execute(query):
            if row.received_at - row.claimed < grace:
                continue
            listed = json.loads(row.instance_uuids)
            if row.consumer_uuid in listed or (
                    row.moving is not None and row.moving in listed):
                continue
            key = (row.consumer_uuid, row.host)
            entry = found.setdefault(key, {
                "claimed": row.claimed, "reported": row.received_at,
                "resources": {}})
            entry["resources"][row.resource_class] = int(row.used)
    orphans = [Orphan(consumer, host, e["claimed"], e["reported"],
                      e["resources"])
               for (consumer, host), e in found.items()]
    return sorted(orphans, key=lambda o: (o.claimed_at, o.consumer_uuid))


def release_orphans(db, orphans):
    """Release each orphan's consumer; returns how many were released.

    Workers' caches see the freed room at their next usage sync.
    """
    released = 0
    for consumer in sorted({o.consumer_uuid for o in orphans}):
        with db.begin() as conn:
            if allocations.release(conn, consumer):
                released += 1
    return released


class Overcommit(typing.NamedTuple):
    """A provider's class allocated beyond its capacity."""

    provider_id: int
    resource_class: str
    used: int
    capacity: float | None       # None: allocated, but no inventory


def overcommitted(conn):
    """Every provider class whose allocations exceed its capacity,
    ``(total - reserved) * allocation_ratio``, or that is allocated with
    no inventory at all: what no claim may ever leave behind.

    :returns: a list of :class:`Overcommit`, by provider id and class
    """
    used = (sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                      sa.func.sum(ALLOC.c.used).label("used"))
            .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class)
            .subquery())
    capacity = (INV.c.total - INV.c.reserved) * INV.c.allocation_ratio
    query = (
        sa.select(used.c.resource_provider_id, used.c.resource_class,
                  used.c.used, capacity)
        .select_from(used.outerjoin(INV, sa.and_(
            INV.c.resource_provider_id == used.c.resource_provider_id,
            INV.c.resource_class == used.c.resource_class)))
        .where(sa.or_(INV.c.id.is_(None), used.c.used > capacity))
        .order_by(used.c.resource_provider_id, used.c.resource_class))
    return [Overcommit(rp_id, rc, int(amount),
                       None if cap is None else float(cap))
            for rp_id, rc, amount, cap in conn.execute(query)]


class Breach(typing.NamedTuple):
    """A server group whose members break one of its level policies."""

    group_uuid: str
    policy: str             # "anti-affinity at rack"
    members: dict           # domain name (None: unknown) -> members


def level_breaches(conn):
    """Every group policy per level its placed members break: a domain
    with more members than anti-affinity (1) or max-per allows, members
    in more than one domain under affinity, a skew above a spread's limit
    (``max - min`` over every domain: releases may leave one, as in
    Kubernetes), or a member on a host with no domain at the level.

    :returns: a list of :class:`Breach`, by group and policy
    """
    members = collections.defaultdict(collections.Counter)
    policies = {}
    for uuid, levels, root, count in conn.execute(_group_members_query()):
        policies[uuid] = domains.loads(levels)
        members[uuid][root] += int(count)
    place = domains.places(conn, None) if policies else domains.Places()
    return [breach for uuid in sorted(policies)
            for policy in policies[uuid]
            for breach in _breaches(uuid, policy, members[uuid], place)]


def _group_members_query():
    """Per group with level policies, its members per host root."""
    return (sa.select(GROUPS.c.uuid, GROUPS.c.level_policies,
                      RP.c.root_provider_id,
                      sa.func.count(sa.distinct(CONSUMERS.c.uuid)))
            .join(CONSUMERS, CONSUMERS.c.instance_group_uuid == GROUPS.c.uuid)
            .join(ALLOC, ALLOC.c.consumer_uuid == CONSUMERS.c.uuid)
            .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
            .where(host_roots.is_host(RP.c.root_provider_id))
            .where(GROUPS.c.level_policies.is_not(None))
            .group_by(GROUPS.c.uuid, GROUPS.c.level_policies,
                      RP.c.root_provider_id))


def _breaches(uuid, policy, members, place):
    counts = collections.Counter()
    for root, n in members.items():
        counts[domains.domain_of(place, root, policy.level)] += n
    known = {d: n for d, n in counts.items() if d is not None}
    if policy.rule == "anti-affinity":
        broken = any(n > 1 for n in known.values())
    elif policy.rule == "max-per":
        broken = any(n > policy.limit for n in known.values())
    elif policy.rule == "affinity":
        broken = len(known) > 1
    else:
        kinds = {place.kinds[root] for root in members if root in place.kinds}
        floor = min((known.get(d, 0) for d in domains.every_domain(
            place, policy.level, kinds)), default=0)
        broken = max(known.values(), default=0) - floor > policy.limit
    if broken or None in counts:
        return [Breach(uuid, str(policy), dict(counts))]
    return []
