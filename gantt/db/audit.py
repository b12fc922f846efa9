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
functional tests.
"""

import collections
import dataclasses
import datetime
import json
import typing

import sqlalchemy as sa

from gantt.db import allocations
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
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
