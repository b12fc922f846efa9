"""Claims: write a placement into the database, optimistically.

``Claimer.claim`` runs the compare-and-swap transaction of
:mod:`gantt.db.allocations` and retries it a bounded number of times when
another transaction won the race (a generation moved, or the database
reported a deadlock or serialization failure). A retry re-reads everything,
so it succeeds whenever the room is still there; when the room is gone the
caller gets ``CapacityExceeded`` and moves to its next candidate.

A race over a *consumer* is never retried: if another call claimed or
released the same consumer since this transaction read it, the caller gets
``ConsumerConflict``. Retrying would replace the other call's claim after
that call had answered with it, and its caller would then build on a host
that holds nothing.
"""

import logging
import random
import threading
import time

from oslo_db import exception as db_exc

from gantt import exception
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import moves

LOG = logging.getLogger(__name__)


class Claimer:
    def __init__(self, db, conflict_retries=5):
        self.db = db
        self.conflict_retries = conflict_retries
        self._lock = threading.Lock()
        #: transactions that lost a race and were retried
        self.conflicts = 0

    def claim(self, consumer_uuid, allocation_map, *, project_id=None,
              user_id=None, group=None, new=False):
        """Replace the consumer's allocations with ``allocation_map``.

        :param allocation_map: ``{provider uuid: {class: amount}}``
        :param group: :class:`~gantt.db.allocations.GroupClaim` or None
        :param new: the consumer is believed not to be stored yet: the
            claim skips reading it, and raises ConsumerExists if it was
        :returns: the touched providers' new states
        :raises: CapacityExceeded, GroupPolicyViolation, ProviderNotFound,
            ConsumerExists, ConsumerConflict (another call changed the
            consumer meanwhile), ClaimConflict (only after every retry
            lost its race)
        """
        if group is not None:
            allocations.ensure_group(self.db, group)
        pin = allocations.ConsumerPin()
        return self._retrying(
            consumer_uuid, ",".join(sorted(allocation_map)),
            lambda conn: allocations.claim(
                conn, consumer_uuid, allocation_map, project_id=project_id,
                user_id=user_id, group=group, new=new, pin=pin))

    def claim_new(self, claims, *, project_id=None, user_id=None,
                  group=None):
        """Claim for many new consumers in one transaction, all or none.

        :param claims: list of :class:`~gantt.db.allocations.NewClaim`
        :returns: the touched providers' new states
        :raises: CapacityExceeded, GroupPolicyViolation, ProviderNotFound,
            ConsumerExists, ClaimConflict (a lost race: not retried, the
            caller claims one by one instead)
        """
        if group is not None:
            allocations.ensure_group(self.db, group)
        return self._retrying(
            ",".join(c.consumer_uuid for c in claims[:3]), "*",
            lambda conn: allocations.claim_new(
                conn, claims, project_id=project_id, user_id=user_id,
                group=group),
            retries=0)

    def move_claim(self, instance_uuid, allocation_map, *, migration_uuid,
                   project_id=None, user_id=None, group=None):
        """Claim a move's destination for the instance; the migration
        consumer holds the source (see :func:`gantt.db.moves.move_claim`).
        """
        if group is not None:
            allocations.ensure_group(self.db, group)
        return self._retrying(
            instance_uuid, ",".join(sorted(allocation_map)),
            lambda conn: moves.move_claim(
                conn, instance_uuid, migration_uuid, allocation_map,
                project_id=project_id, user_id=user_id, group=group))

    def confirm_move(self, migration_uuid):
        """Drop the source a migration held (idempotent)."""
        return self._retrying(migration_uuid, "*", lambda conn: (
            moves.confirm_move(conn, migration_uuid)))

    def revert_move(self, instance_uuid, migration_uuid):
        """Give the instance its source back, drop the destination."""
        return self._retrying(instance_uuid, "*", lambda conn: (
            moves.revert_move(conn, instance_uuid, migration_uuid)))

    def _retrying(self, consumer_uuid, providers, work, retries=None):
        """Run ``work(conn)`` in a transaction, again when it loses a race.

        :raises: ClaimConflict only after every retry lost its race
        """
        last = None
        if retries is None:
            retries = self.conflict_retries
        for attempt in range(retries + 1):
            try:
                with self.db.begin() as conn:
                    return work(conn)
            except (allocations.ConsumerExists, exception.ConsumerConflict):
                # no race over room: the caller's belief was wrong, or
                # another call changed this consumer's claim; claiming
                # again would silently replace what that call answered
                raise
            except exception.ClaimConflict as exc:
                last = exc
            except db_exc.DBConnectionError as exc:
                # the connection died, maybe during COMMIT: the claim was
                # made once or not at all, and claiming again for the same
                # consumer replaces it, so a retry can never double it
                LOG.warning("Database connection lost while claiming for "
                            "%s (%s); retrying", consumer_uuid, exc)
                last = exception.ClaimConflict(
                    provider="(connection lost)", seen="?",
                    consumer=consumer_uuid)
            except Exception as exc:
                if not db_api.is_conflict(exc):
                    raise
                last = exception.ClaimConflict(
                    provider=providers, seen="?", consumer=consumer_uuid)
            with self._lock:
                self.conflicts += 1
            LOG.debug("Claim for %s lost a race (%s); retrying",
                      consumer_uuid, last)
            _backoff(attempt)
        raise last

    def release(self, consumer_uuid):
        """Drop every allocation of the consumer (idempotent).

        :returns: the freed providers' states; empty when this call freed
            nothing (of two releases at once, one gets them)
        """
        for attempt in range(self.conflict_retries + 1):
            try:
                with self.db.begin() as conn:
                    return allocations.release(conn, consumer_uuid)
            except db_exc.DBConnectionError:
                LOG.warning("Database connection lost while releasing %s; "
                            "retrying", consumer_uuid)
            except Exception as exc:
                if not db_api.is_conflict(exc):
                    raise
            _backoff(attempt)
        raise exception.ClaimConflict(provider="*", seen="?",
                                      consumer=consumer_uuid)

    def consumer_info(self, consumer_uuid):
        with self.db.begin() as conn:
            return allocations.consumer_info(conn, consumer_uuid)

    def consumer_allocations(self, consumer_uuid):
        with self.db.begin() as conn:
            return allocations.consumer_allocations(conn, consumer_uuid)

    def refuse_finished_move(self, migration_uuid):
        """:raises: InvalidRequest if that migration finished already"""
        with self.db.begin() as conn:
            moves.refuse_if_finished(conn, migration_uuid)

    def allocations_of(self, consumer_uuids):
        """``{consumer: {provider uuid: {class: amount}}}`` of those that
        hold any allocation (one query)."""
        with self.db.begin() as conn:
            return allocations.allocations_of(conn, consumer_uuids)


def _backoff(attempt):
    """Sleep a little, more after each lost race, with jitter so that the
    losers of one race do not all meet again in the next."""
    time.sleep(random.uniform(0, 0.002 * (2 ** min(attempt, 5))))


class DatabaseLookup:
    """What building a request needs to know from the database."""

    def __init__(self, db):
        self.db = db

    def group_hosts(self, group_uuid):
        with self.db.begin() as conn:
            return allocations.group_hosts(conn, group_uuid)

    def consumer_hosts(self, consumer_uuids):
        with self.db.begin() as conn:
            return allocations.hosts_of_consumers(conn, consumer_uuids)
