"""The orphan audit: allocations whose consumer never reached its host.

A conductor that dies between a claim and the build leaves an allocation
nobody will release. Agents that report ``instance_uuids`` say what really
runs on their host, so an allocation is an orphan when the host it is on
reported, more than ``grace`` seconds after the claim, without listing the
consumer. Hosts whose agent does not report instances are never judged.

A move's source is held by its migration consumer while the source host
still runs (and lists) the instance: an active move counts as listed when
its instance is.
"""

import collections
import dataclasses
import datetime
import json

import sqlalchemy as sa

from gantt.db import allocations
from gantt.db import models

RP = models.ResourceProvider.__table__
ALLOC = models.Allocation.__table__
CONSUMERS = models.Consumer.__table__
REPORTS = models.HostReport.__table__
MOVES = models.Move.__table__


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
