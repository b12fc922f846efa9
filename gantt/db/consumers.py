"""Consumers as Placement's REST API writes them, through the claim code.

A ``PUT /allocations/{consumer}`` or ``POST /allocations`` is one
transaction of :func:`gantt.db.allocations.claim` calls, the very claim
an RPC ``select_destinations`` makes: the same capacity rule, the same
compare-and-swap of every provider's generation and of the consumer's
(pinned, with :class:`~gantt.db.allocations.ConsumerPin`, at the
generation the caller named or the one read at the start). Around the
claims, Placement's consumer bookkeeping: the owner (project and user,
Placement's "incomplete consumer" ids when not given, before 1.8), the
consumer type (1.38), the generation as Placement numbers it (one more
per write, 1 after the first), and a consumer holding nothing is deleted.
A consumer's server group (set by RPC claims) is kept.
"""

import dataclasses

import sqlalchemy as sa

from gantt.db import allocations
from gantt.db import providers
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import RP

#: Placement's ``[placement] incomplete_consumer_project_id`` and
#: ``..._user_id`` defaults: the owner of a consumer written before 1.8
INCOMPLETE = "00000000-0000-0000-0000-000000000000"


@dataclasses.dataclass(frozen=True)
class Stored:
    """A consumer's row as read before the write (None: not stored)."""

    generation: int | None = None
    project_id: str | None = None
    user_id: str | None = None
    consumer_type: str | None = None
    group_uuid: str | None = None


@dataclasses.dataclass(frozen=True)
class Write:
    """One consumer's wanted allocations (``{}``: none) and owner."""

    consumer_uuid: str
    allocations: dict
    project_id: str | None = None
    user_id: str | None = None
    consumer_type: str | None = None


def stored(conn, consumer_uuid):
    row = conn.execute(sa.select(
        CONSUMERS.c.generation, CONSUMERS.c.project_id,
        CONSUMERS.c.user_id, CONSUMERS.c.consumer_type,
        CONSUMERS.c.instance_group_uuid).where(
        CONSUMERS.c.uuid == consumer_uuid)).first()
    return Stored() if row is None else Stored(*row)


def holds(conn, consumer_uuid):
    return conn.execute(sa.select(ALLOC.c.id).where(
        ALLOC.c.consumer_uuid == consumer_uuid).limit(1)).first() is not None


def involved(conn, writes):
    """The uuids of the providers ``writes`` may change: those named and
    those the consumers hold now."""
    uuids = {rp for w in writes for rp in w.allocations}
    consumers = [w.consumer_uuid for w in writes]
    uuids |= set(conn.execute(
        sa.select(RP.c.uuid).distinct()
        .join(ALLOC, ALLOC.c.resource_provider_id == RP.c.id)
        .where(ALLOC.c.consumer_uuid.in_(consumers))).scalars())
    return uuids


def settled(conn, before, states):
    """``states`` with the generations :func:`providers.settle_generations`
    gave (one step per write)."""
    final = providers.settle_generations(conn, before)
    return {uuid: dataclasses.replace(s, generation=final.get(
        uuid, s.generation)) for uuid, s in states.items()}


def write(conn, writes, seen, before=None):
    """Replace the allocations of every consumer in ``writes``, all or
    nothing (the caller's transaction).

    :param seen: ``{consumer uuid: Stored}`` as read by the caller (and
        checked against the generations its caller named)
    :param before: ``{provider uuid: generation}`` at the start of the
        transaction, when the caller settles generations itself (see
        :func:`settled`); else this call does
    :returns: ``{provider uuid: ProviderState}`` after the write
    :raises: CapacityExceeded, ClaimConflict (a provider changed since
        read: retry), ConsumerConflict (a consumer did: do not)
    """
    settle = before is None
    if settle:
        before = providers.generations(conn, involved(conn, writes))
    states = {}
    generations = {w.consumer_uuid: seen[w.consumer_uuid].generation
                   for w in writes}
    if len(writes) > 1:
        # free every consumer first, so that allocations moving from one
        # consumer to another in this call (a migration's) fit
        for w in writes:
            if holds(conn, w.consumer_uuid):
                _claim(conn, w.consumer_uuid, {}, w, generations, states)
    for w in writes:
        if w.allocations or generations[w.consumer_uuid] is not None:
            _claim(conn, w.consumer_uuid, w.allocations, w, generations,
                   states)
    for w in writes:
        _settle(conn, w, seen[w.consumer_uuid])
    return settled(conn, before, states) if settle else states


def _claim(conn, uuid, wanted, w, generations, states):
    found = allocations.claim(
        conn, uuid, wanted, project_id=w.project_id or INCOMPLETE,
        user_id=w.user_id or INCOMPLETE,
        pin=allocations.ConsumerPin.at(generations[uuid]))
    generations[uuid] = (generations[uuid] + 1
                         if generations[uuid] is not None else 0)
    for state in found:
        states[state.uuid] = state


def _settle(conn, w, before):
    """Placement's bookkeeping once the claims are written."""
    if not holds(conn, w.consumer_uuid):
        conn.execute(CONSUMERS.delete().where(
            CONSUMERS.c.uuid == w.consumer_uuid))
        return
    values = {"generation": (before.generation or 0) + 1,
              "instance_group_uuid": before.group_uuid}
    if w.consumer_type is not None:
        values["consumer_type"] = w.consumer_type
    conn.execute(CONSUMERS.update().where(
        CONSUMERS.c.uuid == w.consumer_uuid).values(**values))


def release(conn, consumer_uuid):
    """Delete a consumer's allocations (the RPC release's code).

    :returns: ``{provider uuid: ProviderState}`` freed
    """
    return {s.uuid: s for s in allocations.release(conn, consumer_uuid)}
