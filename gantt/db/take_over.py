"""A member's take-over of its reserved slot, in SQL, per backend (see
:func:`gantt.db.reservations.convert`, which chooses).

Each moves the slot's claim to the member behind the slot's
compare-and-swap (``instance_uuid IS NULL AND expires_at >= now`` on
the slot's row): the reservation consumer becomes the member's (its
uuid changes; owner and group stay) and its allocation rows follow; no
provider changes, so no generation moves. Each returns whether the
compare-and-swap took the row; nothing moves when it did not.
"""

import functools

import sqlalchemy as sa

from gantt.db import prepared
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import RESERVATIONS


def _params(row, instance_uuid, now):
    return {"take_slot": row.id, "take_member": instance_uuid,
            "take_now": now, "take_reservation": row.consumer_uuid}


def stepwise(conn, row, instance_uuid, now):
    """A take-over in three statements (SQLite), each built once and
    bound at execution."""
    taking, consumer, rows = _stepwise_statements()
    params = _params(row, instance_uuid, now)
    if conn.execute(taking, params).rowcount != 1:
        return False
    conn.execute(consumer, params)
    conn.execute(rows, params)
    return True


@functools.cache
def _stepwise_statements():
    """:func:`stepwise`'s UPDATEs: the slot's compare-and-swap, the
    consumer's new uuid, its allocation rows'."""
    member, now = sa.bindparam("take_member"), sa.bindparam("take_now")
    reservation = sa.bindparam("take_reservation")
    return (_taking_statement(),
            CONSUMERS.update().where(CONSUMERS.c.uuid == reservation)
            .values(uuid=member, generation=0, updated_at=now),
            ALLOC.update().where(ALLOC.c.consumer_uuid == reservation)
            .values(consumer_uuid=member))


def joined(conn, row, instance_uuid, now):
    """A take-over in one statement on MariaDB: a multiple-table
    ``UPDATE`` of the slot's row (behind its compare-and-swap), its
    consumer and its allocation rows, joined on the reservation consumer:
    the join is read before any row changes, and it is empty unless the
    slot's row passes the compare-and-swap (no foreign key ties the
    tables, so their order is free)."""
    return conn.execute(_joined_statement(),
                        _params(row, instance_uuid, now)).rowcount > 0


@functools.cache
def _joined_statement():
    """:func:`joined`'s ``UPDATE`` of three tables (bound at execution:
    ``take_slot``, ``take_member``, ``take_now``)."""
    member, now = sa.bindparam("take_member"), sa.bindparam("take_now")
    return RESERVATIONS.update().where(
        RESERVATIONS.c.id == sa.bindparam("take_slot"),
        RESERVATIONS.c.instance_uuid.is_(None),
        RESERVATIONS.c.expires_at >= now,
        CONSUMERS.c.uuid == RESERVATIONS.c.consumer_uuid,
        ALLOC.c.consumer_uuid == RESERVATIONS.c.consumer_uuid).values({
            RESERVATIONS.c.instance_uuid: member, CONSUMERS.c.uuid: member,
            CONSUMERS.c.generation: 0, CONSUMERS.c.updated_at: now,
            ALLOC.c.consumer_uuid: member})


def _taking_statement():
    """The slot's compare-and-swap: it takes the row only while nobody
    has and the reservation has not expired (bound at execution:
    ``take_slot``, ``take_member``, ``take_now``)."""
    return RESERVATIONS.update().where(
        RESERVATIONS.c.id == sa.bindparam("take_slot"),
        RESERVATIONS.c.instance_uuid.is_(None),
        RESERVATIONS.c.expires_at >= sa.bindparam("take_now")).values(
        instance_uuid=sa.bindparam("take_member"))


def at_once(conn, row, instance_uuid, now):
    """A take-over in one statement on PostgreSQL (data-modifying
    CTEs): the consumer and its allocation rows move only if the slot's
    compare-and-swap took a row. The statement is compiled once per
    dialect and run prepared (:mod:`gantt.db.prepared`), as claims' are."""
    sql, defaults = _at_once_sql(conn.dialect)
    (counts,) = prepared.execute(conn, sql, {
        **defaults, "take_slot": row.id, "take_member": instance_uuid,
        "take_now": now})
    return counts[0] == 1


@functools.lru_cache(maxsize=8)
def _at_once_sql(dialect):
    """:func:`at_once`'s SQL, bound at execution (``take_slot``,
    ``take_member``, ``take_now``) and its bound defaults."""
    member, now = sa.bindparam("take_member"), sa.bindparam("take_now")
    taken = (_taking_statement()
             .returning(RESERVATIONS.c.consumer_uuid).cte("taken"))
    mine = sa.select(taken.c.consumer_uuid).scalar_subquery()
    consumer = (CONSUMERS.update().where(CONSUMERS.c.uuid == mine)
                .values(uuid=member, generation=0, updated_at=now)
                .returning(CONSUMERS.c.id).cte("moved_consumer"))
    rows = (ALLOC.update().where(ALLOC.c.consumer_uuid == mine)
            .values(consumer_uuid=member)
            .returning(ALLOC.c.id).cte("moved_allocations"))
    compiled = sa.select(*[
        sa.select(sa.func.count()).select_from(cte).scalar_subquery()
        for cte in (taken, consumer, rows)]).compile(dialect=dialect)
    return str(compiled), dict(compiled.params)


#: the take-over of each backend that has its own; others: :func:`stepwise`
MOVES = {"postgresql": at_once, "mysql": joined}
