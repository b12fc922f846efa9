"""Reserved member slots of holistic groups, in SQL.

A group's plan is claimed whole, in one transaction, under one
*reservation consumer* per member slot (:func:`reserve`, which uses
:func:`gantt.db.allocations.claim_plan`: capacity, the group's claim rule
and the providers' and group's compare-and-swaps as for any claim, the
group's members read once for the whole plan). Each slot then
leaves the reserved state exactly once, by one of three paths, all of
which start with a compare-and-swap on the slot's row, so that of two
racing paths exactly one wins:

* :func:`convert`: a member takes the slot over: ``UPDATE … SET
  instance_uuid = :member WHERE id = :id AND instance_uuid IS NULL AND
  expires_at >= :now``, then the reservation consumer becomes the
  member's (its uuid changes) and its allocation rows follow (same rows,
  new owner: no provider changes, so no generation moves), in one
  statement on PostgreSQL and MariaDB (:mod:`gantt.db.take_over`);
* :func:`expire`: the sweeper: ``DELETE … WHERE consumer_uuid = :c AND
  instance_uuid IS NULL AND expires_at < :now``; only the worker whose
  ``DELETE`` removed the row releases the allocations, so any number of
  sweepers may run at once;
* :func:`drop`: ``release_group``: the same ``DELETE`` without the
  expiry condition.

Taken-over rows stay: they say which member took which slot (a retried
call is answered with the member's claim) and number the slots an
``extend_group`` adds after them.
"""

import collections
import dataclasses
import functools
import json

from oslo_db import exception as db_exc
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import prepared
from gantt.db import take_over
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import GROUP_PLANS
from gantt.db.models import RESERVATIONS
from gantt.db.models import RP


@dataclasses.dataclass(frozen=True)
class SlotClaim:
    """One slot of a plan to reserve."""

    slot: int
    member: str
    consumer_uuid: str
    allocations: dict        # {provider uuid: {class: amount}}
    alternates: tuple = ()   # provider uuids the plan decided, best first


@dataclasses.dataclass(frozen=True)
class Stored:
    """A group's stored rules (see :func:`save_plan`)."""

    policies: list           # [{"level", "rule", "limit", "weight"}]
    objective: str
    project_id: str | None
    user_id: str | None


#: slots claimed per statement (see :func:`reserve` and
#: :func:`gantt.db.allocations.claim_plan`)
CHUNK = allocations.PLAN_CHUNK


#: the slot was taken over by another member already (or its number by
#: a concurrent reserve)
SlotTaken = exception.GroupSlotTaken


def save_plan(conn, group_uuid, policies, objective, project_id, user_id,
              now):
    """Store (or replace) the group's rules."""
    values = {"policies": json.dumps(policies), "objective": objective,
              "project_id": project_id, "user_id": user_id}
    updated = conn.execute(GROUP_PLANS.update().where(
        GROUP_PLANS.c.group_uuid == group_uuid).values(
        updated_at=now, **values)).rowcount
    if not updated:
        conn.execute(GROUP_PLANS.insert().values(
            group_uuid=group_uuid, created_at=now, **values))


def load_plan(conn, group_uuid):
    """The group's :class:`Stored` rules, or None for an unknown group."""
    row = conn.execute(sa.select(GROUP_PLANS).where(
        GROUP_PLANS.c.group_uuid == group_uuid)).first()
    if row is None:
        return None
    return Stored(json.loads(row.policies), row.objective, row.project_id,
                  row.user_id)


def reserve(conn, group_uuid, slots, expires_at, *, project_id, user_id,
            group, now):
    """Claim every slot under its reservation consumer and record the
    slots, all or nothing (in the caller's transaction).

    :param group: the GroupClaim the claim keeps
    :returns: the touched providers' states
    :raises: as :func:`gantt.db.allocations.claim_new`; SlotTaken when a
        concurrent reserve or extend of the group took a slot number
    """
    # one transaction: the group's members are read once, each chunk's
    # snapshot sees the chunks before it, so capacity, the group rule and
    # the compare-and-swaps hold for the whole plan
    states = allocations.claim_plan(
        conn, [allocations.NewClaim(s.consumer_uuid, s.allocations)
               for s in slots],
        project_id=project_id, user_id=user_id, group=group, chunk=CHUNK)
    try:
        conn.execute(RESERVATIONS.insert(), [
            {"group_uuid": group_uuid, "slot": s.slot, "member": s.member,
             "consumer_uuid": s.consumer_uuid, "expires_at": expires_at,
             "alternates": json.dumps(list(s.alternates)),
             "created_at": now} for s in slots])
    except db_exc.DBDuplicateEntry:
        raise SlotTaken(consumer=group_uuid,
                        reason="another call reserved slots of this group "
                               "at the same time; nothing was claimed"
                        ) from None
    return states


def members_by_provider(conn, group_uuid):
    """``{provider uuid: members}`` of the group's members, built or
    reserved (one statement; group plans are one provider per member)."""
    return {uuid: int(count) for uuid, count
            in conn.execute(_members_query(group_uuid))}


def _members_query(group_uuid):
    """Counted per provider id first, then named: one provider lookup per
    provider rather than per allocation row (a member has one per
    resource class), and the grouping on an integer."""
    per_id = (
        sa.select(ALLOC.c.resource_provider_id.label("rp_id"),
                  sa.func.count(sa.distinct(ALLOC.c.consumer_uuid))
                  .label("members"))
        .select_from(CONSUMERS)
        .join(ALLOC, ALLOC.c.consumer_uuid == CONSUMERS.c.uuid)
        .where(CONSUMERS.c.instance_group_uuid == group_uuid)
        .group_by(ALLOC.c.resource_provider_id)).subquery()
    return (sa.select(RP.c.uuid, per_id.c.members)
            .join_from(per_id, RP, RP.c.id == per_id.c.rp_id))


@dataclasses.dataclass(frozen=True)
class SlotRead:
    """One read of a slot (:func:`read_slot`)."""

    stored: Stored | None     # None: the group is not reserved here
    row: object               # the slot's row, or None
    holds: dict               # {provider uuid: {class: amount}} it holds

    def alternates(self):
        """The provider uuids the plan decided as the slot's alternates,
        best first; None for a slot reserved before they were kept."""
        if self.row is None or self.row.alternates is None:
            return None
        return tuple(json.loads(self.row.alternates))


def read_slot(conn, group_uuid, slot):
    """The group's rules, the slot's row (with its plan's alternates) and
    what its holder (the reservation, or the member that took it) holds,
    in one statement: one row per allocation of the holder. Where the
    group's members are is not read: a member taking its slot over is
    answered with the alternates its plan kept."""
    rows = _read_rows(conn, {"group_uuid": group_uuid, "slot": slot})
    if not rows:
        return SlotRead(None, None, {})
    first = rows[0]
    stored = Stored(json.loads(first.policies), first.objective,
                    first.project_id, first.user_id)
    if first.r_id is None:
        return SlotRead(stored, None, {})
    row = _SlotRow(**{c.name: getattr(first, "r_" + c.name)
                      for c in RESERVATIONS.c})
    holds = {}
    for r in rows:
        if r.provider is not None:
            holds.setdefault(r.provider, {})[r.resource_class] = int(r.used)
    return SlotRead(stored, row, holds)


def _read_rows(conn, params):
    """:func:`read_slot`'s rows; prepared on PostgreSQL, as a claim's
    statements are (planning the joins costs about as much as running
    them)."""
    if conn.dialect.name != "postgresql":
        return conn.execute(_read_slot_statement(), params).all()
    sql, defaults, row = _read_slot_sql(conn.dialect)
    return [row(*r) for r in prepared.execute(conn, sql,
                                              {**defaults, **params})]


@functools.lru_cache(maxsize=8)
def _read_slot_sql(dialect):
    """:func:`_read_slot_statement` compiled for ``dialect``: its SQL,
    bound defaults and a row type naming its columns."""
    statement = _read_slot_statement()
    compiled = statement.compile(dialect=dialect)
    row = collections.namedtuple(
        "SlotReadRow", [c.name for c in statement.selected_columns])
    return str(compiled), dict(compiled.params), row


@functools.cache
def _read_slot_statement():
    """:func:`read_slot`'s SELECT, built once (bound at execution)."""
    group_uuid, slot = sa.bindparam("group_uuid"), sa.bindparam("slot")
    holder = sa.func.coalesce(RESERVATIONS.c.instance_uuid,
                              RESERVATIONS.c.consumer_uuid)
    return (
        sa.select(GROUP_PLANS.c.policies, GROUP_PLANS.c.objective,
                  GROUP_PLANS.c.project_id, GROUP_PLANS.c.user_id,
                  *[c.label("r_" + c.name) for c in RESERVATIONS.c],
                  RP.c.uuid.label("provider"), ALLOC.c.resource_class,
                  ALLOC.c.used)
        .select_from(GROUP_PLANS.outerjoin(RESERVATIONS, sa.and_(
            RESERVATIONS.c.group_uuid == GROUP_PLANS.c.group_uuid,
            RESERVATIONS.c.slot == slot))
            .outerjoin(ALLOC, ALLOC.c.consumer_uuid == holder)
            .outerjoin(RP, RP.c.id == ALLOC.c.resource_provider_id))
        .where(GROUP_PLANS.c.group_uuid == group_uuid))


@dataclasses.dataclass(frozen=True)
class _SlotRow:
    """A slot's row, as :func:`slot_row` returns it."""

    id: int
    group_uuid: str
    slot: int
    member: str
    consumer_uuid: str
    instance_uuid: str | None
    expires_at: object
    created_at: object
    alternates: str | None    # JSON, see :meth:`SlotRead.alternates`


def next_slot(conn, group_uuid):
    """The first slot number after every recorded one."""
    top = conn.execute(sa.select(sa.func.max(RESERVATIONS.c.slot)).where(
        RESERVATIONS.c.group_uuid == group_uuid)).scalar()
    return 0 if top is None else top + 1


def slot_row(conn, group_uuid, slot):
    return conn.execute(sa.select(RESERVATIONS).where(
        RESERVATIONS.c.group_uuid == group_uuid,
        RESERVATIONS.c.slot == slot)).first()


def convert(conn, row, instance_uuid, *, now):
    """Hand a reserved slot's claim (``row``, as :func:`slot_row` read
    it) to its member: the reservation consumer becomes the member's
    consumer (its uuid changes; owner and group stay) and its allocation
    rows follow, so nothing else is read or written.

    :returns: whether the member holds the slot's claim now (False: the
        slot expired, or was released or swept meanwhile)
    :raises: SlotTaken (another member took it), ConsumerExists (the
        member holds a claim already; nothing changed)
    """
    if row.instance_uuid is not None:
        if row.instance_uuid == instance_uuid:
            return True
        raise SlotTaken(consumer=instance_uuid,
                        reason="slot %d of group %s was taken over by %s"
                               % (row.slot, row.group_uuid,
                                  row.instance_uuid))
    try:
        return take_over.MOVES.get(conn.dialect.name, take_over.stepwise)(
            conn, row, instance_uuid, now)
    except db_exc.DBDuplicateEntry:
        raise allocations.ConsumerExists(
            provider="consumer", seen=None, consumer=instance_uuid) from None


def expired(conn, now, limit=100):
    """Reservation consumers whose slots expired unconverted."""
    return [r.consumer_uuid for r in conn.execute(
        sa.select(RESERVATIONS.c.consumer_uuid).where(
            RESERVATIONS.c.instance_uuid.is_(None),
            RESERVATIONS.c.expires_at < now).limit(limit))]


def reserved_of(conn, group_uuid):
    """The group's reservation consumers not taken over yet."""
    return [r.consumer_uuid for r in conn.execute(
        sa.select(RESERVATIONS.c.consumer_uuid).where(
            RESERVATIONS.c.group_uuid == group_uuid,
            RESERVATIONS.c.instance_uuid.is_(None)))]


def expire(conn, consumer_uuid, now):
    """Release one expired slot, if this transaction is the one whose
    ``DELETE`` removed its row.

    :returns: the freed providers' states, or None when another worker
        expired it, or a member took it over, first
    """
    return _drop(conn, consumer_uuid, RESERVATIONS.c.expires_at < now)


def drop(conn, consumer_uuid):
    """Release one reserved slot (``release_group``); as :func:`expire`
    without the expiry condition."""
    return _drop(conn, consumer_uuid, sa.true())


def _drop(conn, consumer_uuid, condition):
    deleted = conn.execute(RESERVATIONS.delete().where(
        RESERVATIONS.c.consumer_uuid == consumer_uuid,
        RESERVATIONS.c.instance_uuid.is_(None), condition)).rowcount
    if deleted != 1:
        return None
    return allocations.release(conn, consumer_uuid)
