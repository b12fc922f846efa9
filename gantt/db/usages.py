"""Usages as Placement's REST API reports them: per provider (every class
it has inventory of, 0 when unused), and per project (and user, and
consumer type from 1.38)."""

import collections

import sqlalchemy as sa

from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import INV


def of_provider(conn, rp_id):
    """``{class: used}`` for every class ``rp_id`` has inventory of."""
    used = (sa.select(sa.func.coalesce(sa.func.sum(ALLOC.c.used), 0))
            .where(ALLOC.c.resource_provider_id == INV.c.resource_provider_id)
            .where(ALLOC.c.resource_class == INV.c.resource_class)
            .scalar_subquery())
    return {rc: int(amount) for rc, amount in conn.execute(
        sa.select(INV.c.resource_class, used)
        .where(INV.c.resource_provider_id == rp_id))}


def _owned(query, project_id, user_id):
    query = query.join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
    query = query.where(CONSUMERS.c.project_id == project_id)
    if user_id:
        query = query.where(CONSUMERS.c.user_id == user_id)
    return query


def of_project(conn, project_id, user_id=None):
    """``{class: used}`` by the consumers of a project (and user)."""
    query = _owned(sa.select(ALLOC.c.resource_class,
                             sa.func.sum(ALLOC.c.used))
                   .select_from(ALLOC), project_id, user_id)
    return {rc: int(amount) for rc, amount in conn.execute(
        query.group_by(ALLOC.c.resource_class))}


def by_consumer_type(conn, project_id, user_id=None, consumer_type=None):
    """``{type: {class: used, "consumer_count": n}}`` (1.38).

    ``consumer_type`` "all" sums every type under "all"; "unknown" those
    of no type; another name that type alone; None every type apart (a
    consumer of no type under "unknown").
    """
    base = _owned(sa.select(ALLOC.c.resource_class, ALLOC.c.used,
                            ALLOC.c.consumer_uuid,
                            CONSUMERS.c.consumer_type)
                  .select_from(ALLOC), project_id, user_id)
    if consumer_type == "unknown":
        base = base.where(CONSUMERS.c.consumer_type.is_(None))
    elif consumer_type not in (None, "all"):
        base = base.where(CONSUMERS.c.consumer_type == consumer_type)
    result = collections.defaultdict(lambda: collections.defaultdict(int))
    consumers = collections.defaultdict(set)
    for rc, used, consumer, ctype in conn.execute(base):
        key = (consumer_type if consumer_type in ("all", "unknown")
               else ctype or "unknown")
        result[key][rc] += int(used)
        consumers[key].add(consumer)
    return {key: dict(usage, consumer_count=len(consumers[key]))
            for key, usage in result.items()}
