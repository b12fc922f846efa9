"""Moves (migrations, resizes) in SQL, with Placement's migration consumer.

A move holds two sets of allocations at once, as Nova does with
Placement: the migration consumer holds the source, the instance holds the
destination. ``move_claim`` hands the instance's allocations to the
migration and claims the destination for the instance in one transaction;
``confirm_move`` then frees the source, ``revert_move`` frees the
destination and gives the source back. A resize on the same host therefore
needs room for both sizes until it is confirmed or reverted.

Every function runs inside one transaction (``conn`` from
``Database.begin()``) and returns the :class:`~gantt.db.allocations.
ProviderState` of every provider whose usage changed.

Races: each function compares-and-swaps the generations of the consumers
it changes (instance and migration, in uuid order, after the providers),
so two of them on the same instance or migration never both commit; the
loser raises ClaimConflict and changed nothing. Providers whose usage
grows are compared-and-swapped as in a claim; those whose usage only
shrinks are bumped unconditionally, as ``allocations.release`` does.

The hand-over writes a ``moves`` row (migration, instance, "active");
confirm and revert mark it "confirmed" or "reverted" and keep it.
``move_claim`` naming a finished migration again, a duplicate that arrives
late, is refused: accepting it would hand the instance's destination to
the finished migration and claim another destination, counting the
instance twice until a second confirm that nobody sends. Two hand-overs
to one migration cannot both commit: the row's primary key lets one in.
"""

import collections

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations as alloc_db
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import MOVES
from gantt.db.models import RP

ACTIVE = "active"


def move_claim(conn, instance_uuid, migration_uuid, allocations, *,
               project_id=None, user_id=None, group=None):
    """Claim a move's destination for the instance.

    If the migration consumer holds nothing yet, everything the instance
    holds (the source) passes to it first; then ``allocations`` are claimed
    for the instance with the usual checks and compare-and-swap, the source
    still counted. Calling it again (a retry, or another destination)
    replaces only the instance's destination.

    :param allocations: the destination, ``{provider uuid: {class: n}}``
    :returns: list of :class:`ProviderState` of the providers changed
    :raises: InvalidRequest, ProviderNotFound, CapacityExceeded,
        GroupPolicyViolation, ClaimConflict
    """
    if instance_uuid == migration_uuid:
        raise exception.InvalidRequest(
            reason="the migration consumer %s must differ from the "
                   "instance" % migration_uuid)
    refuse_if_finished(conn, migration_uuid)

    def handed_over(conn, now):
        # the check above read before this transaction's writes: a confirm
        # or revert that committed since, and freed the migration, shows
        # here as the row that already exists. A savepoint keeps the
        # transaction usable (PostgreSQL aborts it on a unique violation)
        # so that the refusal can name the outcome.
        try:
            with conn.begin_nested():
                conn.execute(MOVES.insert().values(
                    migration_uuid=migration_uuid,
                    instance_uuid=instance_uuid, state=ACTIVE,
                    created_at=now))
        except db_exc.DBDuplicateEntry:
            raise _finished(migration_uuid, finished_outcome(
                conn, migration_uuid) or "finished") from None

    return alloc_db._claim(conn, instance_uuid, allocations,
                           project_id=project_id, user_id=user_id,
                           group=group, migration_uuid=migration_uuid,
                           handed_over=handed_over)


def confirm_move(conn, migration_uuid):
    """Free the source: drop the migration consumer and its allocations.

    A no-op (returning ``[]``) when the migration holds nothing.

    :returns: list of :class:`ProviderState` of the providers freed
    :raises: ClaimConflict when a concurrent change of the migration won
    """
    seen = alloc_db._consumer_generation(conn, migration_uuid)
    source = alloc_db._consumer_allocations(conn, migration_uuid)
    if seen is None and not source:
        return []
    _bump_providers(conn, source)
    _delete_consumer(conn, migration_uuid, seen)
    conn.execute(ALLOC.delete().where(
        ALLOC.c.consumer_uuid == migration_uuid))
    _remember(conn, migration_uuid, "confirmed")
    return _states(conn, source)


def revert_move(conn, instance_uuid, migration_uuid):
    """Free the destination and give the source back to the instance.

    A no-op (returning ``[]``) when the migration holds nothing: it was
    reverted or confirmed already, or never started.

    :returns: list of :class:`ProviderState` of the providers whose usage
        changed (those of the destination)
    :raises: ClaimConflict when a concurrent change of the instance or
        migration won
    """
    # generations before allocations (see allocations._claim)
    migration_seen = alloc_db._consumer_generation(conn, migration_uuid)
    instance_seen = alloc_db._consumer_generation(conn, instance_uuid)
    source = alloc_db._consumer_allocations(conn, migration_uuid)
    if not source:
        return []
    destination = alloc_db._consumer_allocations(conn, instance_uuid)
    _bump_providers(conn, destination)
    owner = alloc_db.consumer_info(conn, migration_uuid)
    for uuid in sorted((instance_uuid, migration_uuid)):
        if uuid == migration_uuid:
            _delete_consumer(conn, migration_uuid, migration_seen)
        else:
            _keep_consumer(conn, instance_uuid, instance_seen, owner)
    conn.execute(ALLOC.delete().where(
        ALLOC.c.consumer_uuid == instance_uuid))
    conn.execute(ALLOC.update().where(
        ALLOC.c.consumer_uuid == migration_uuid).values(
        consumer_uuid=instance_uuid))
    _remember(conn, migration_uuid, "reverted", instance_uuid)
    return _states(conn, destination)


def finished_outcome(conn, migration_uuid):
    """"confirmed" or "reverted" for a finished migration, else None."""
    state = conn.execute(sa.select(MOVES.c.state).where(
        MOVES.c.migration_uuid == migration_uuid)).scalar()
    return None if state == ACTIVE else state


def refuse_if_finished(conn, migration_uuid):
    """:raises: InvalidRequest if that migration finished already"""
    outcome = finished_outcome(conn, migration_uuid)
    if outcome is not None:
        raise _finished(migration_uuid, outcome)


def _finished(migration_uuid, outcome):
    return exception.InvalidRequest(
        reason="migration %s was %s already; a new move needs a new "
               "migration uuid" % (migration_uuid, outcome))


def _remember(conn, migration_uuid, outcome, instance_uuid=None):
    """Mark the move finished; a move handed over before the upgrade that
    added ``moves`` gets its row now (confirm does not know its
    instance)."""
    now = timeutils.utcnow()
    marked = conn.execute(MOVES.update().where(
        MOVES.c.migration_uuid == migration_uuid).values(
        state=outcome, updated_at=now)).rowcount
    if not marked:
        conn.execute(MOVES.insert().values(
            migration_uuid=migration_uuid, instance_uuid=instance_uuid,
            state=outcome, created_at=now, updated_at=now))


def _bump_providers(conn, held):
    """Bump the providers a consumer frees (``{rp_id: …}``), in id order
    like a claim. Freeing only makes room, so no compare-and-swap; the
    bump tells concurrent claims that they read an older usage."""
    if held:
        conn.execute(RP.update().where(RP.c.id.in_(sorted(held))).values(
            generation=RP.c.generation + 1))


def _delete_consumer(conn, consumer_uuid, seen):
    if seen is None:
        return   # allocations without a consumer row: nothing to swap
    deleted = conn.execute(CONSUMERS.delete().where(
        CONSUMERS.c.uuid == consumer_uuid).where(
        CONSUMERS.c.generation == seen)).rowcount
    if deleted != 1:
        raise exception.ClaimConflict(provider="consumer", seen=seen,
                                      consumer=consumer_uuid)


def _keep_consumer(conn, consumer_uuid, seen, owner):
    """The instance gets its source back: bump (compare-and-swap) its
    consumer, or create it with the migration's owner if it went away."""
    now = timeutils.utcnow()
    if seen is None:
        alloc_db._write_consumer(conn, consumer_uuid, None, owner.project_id,
                                 owner.user_id, None, now)
        return
    updated = conn.execute(
        CONSUMERS.update().where(CONSUMERS.c.uuid == consumer_uuid)
        .where(CONSUMERS.c.generation == seen)
        .values(generation=seen + 1, updated_at=now)).rowcount
    if updated != 1:
        raise exception.ClaimConflict(provider="consumer", seen=seen,
                                      consumer=consumer_uuid)


def _states(conn, held):
    """:class:`ProviderState` of the providers ``held`` names, as now."""
    if not held:
        return []
    rows = conn.execute(sa.select(RP.c.id, RP.c.uuid, RP.c.generation).where(
        RP.c.id.in_(sorted(held))).order_by(RP.c.id)).all()
    # a locking read: MariaDB's snapshot may predate claims that committed
    # before this transaction bumped the providers (summed here, as
    # PostgreSQL refuses FOR SHARE with GROUP BY)
    usage = {r.id: collections.Counter() for r in rows}
    for rp_id, rc, used in conn.execute(
            sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                      ALLOC.c.used)
            .where(ALLOC.c.resource_provider_id.in_(sorted(usage)))
            .with_for_update(read=True)):
        usage[rp_id][rc] += int(used)
    return [alloc_db.ProviderState(r.uuid, r.generation, dict(usage[r.id]))
            for r in rows]
