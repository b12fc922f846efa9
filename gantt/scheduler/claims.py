"""Claims: the only writer of allocations.

:class:`ClaimService` claims, releases, reclaims and moves; every change it
commits is published (the worker's cache, then the peers) before it
returns, so that no request decided afterwards misses it. It writes through
:class:`Claimer`, the transactions and their retries:
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

Just over 400 lines: the claim service and its retrying claimer share the
publication of every commit, and splitting them would hand that ordering
across a module boundary.
"""

import functools
import logging
import random
import threading
import time

from oslo_db import exception as db_exc

from gantt import exception
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import host_load
from gantt.db import moves
from gantt.objects import usage as usage_obj
from gantt.scheduler.pipeline import translate

LOG = logging.getLogger(__name__)

#: errors after which a claim moves on to the next candidate host
NEXT_CANDIDATE = (exception.CapacityExceeded, exception.ClaimConflict,
                  exception.GroupPolicyViolation, exception.ProviderNotFound)

#: a race over the consumer itself (ClaimConflicts too, caught first):
#: another host would not help, and claiming again would replace what the
#: other call answered
CONSUMER_RACE = (allocations.ConsumerExists, exception.ConsumerConflict)


def database_outage_is_retryable(method):
    """Turn a lost database connection into a typed, retryable error."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except db_exc.DBConnectionError as exc:
            LOG.warning("%s failed: the database is unreachable (%s)",
                        method.__name__, exc)
            raise exception.ServiceUnavailable(
                reason="database unreachable; retry with the same "
                       "instance uuids") from None
    return wrapper


class Claimer:
    """Claim transactions, retried when they lose a race over room."""

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

    def transaction(self, label, work):
        """``work(conn)`` in one transaction, retried as a claim is
        (holistic groups' reservations, :mod:`gantt.db.reservations`)."""
        return self._retrying(label, "*", work)

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


def _backoff(attempt):
    """Sleep a little, more after each lost race, with jitter so that the
    losers of one race do not all meet again in the next."""
    time.sleep(random.uniform(0, 0.002 * (2 ** min(attempt, 5))))


def owner_of(request):
    """Who claims for ``request``: its project, user and the server-group
    rule the claim must keep (hard policies only)."""
    group = request.instance_group
    rule = None
    if group is not None and group.is_hard:
        rule = allocations.GroupClaim(group.uuid, group.policy,
                                      group.max_per_host,
                                      group.hard_levels)
    return allocations.ConsumerInfo(project_id=request.spec.project_id,
                                    user_id=request.spec.user_id,
                                    group=rule)


class ClaimService:
    """The only writer of allocations.

    Every committed change is published (the cache, then the peers) before
    the method that made it returns.
    """

    def __init__(self, conf, db, cache, lookup, broadcast=None,
                 after_commit=None):
        self.conf = conf
        self.db = db
        self.cache = cache
        self.lookup = lookup
        self.claimer = Claimer(db)
        self._broadcast = broadcast or (lambda states: None)
        # told of every committed change once the cache holds it
        # (vacancy.VacancyWatch)
        self._after_commit = after_commit or (lambda states: None)

    @property
    def conflicts(self):
        """Transactions that lost a race and were retried."""
        return self.claimer.conflicts

    @functools.cached_property
    def _scheduler(self):
        """``[scheduler]``, looked up once (it reads each value live)."""
        return self.conf.scheduler

    def claim(self, consumer_uuid, allocation_map, *, owner, new=False):
        """Replace the consumer's allocations (see :meth:`Claimer.claim`).

        :param owner: a ConsumerInfo (see :func:`owner_of`)
        :returns: the touched providers' new states, published
        """
        return self.publish(self.claimer.claim(
            consumer_uuid, allocation_map, project_id=owner.project_id,
            user_id=owner.user_id, group=owner.group, new=new))

    def claim_new(self, claims, *, owner):
        """Claim for many new consumers in one transaction, all or none
        (see :meth:`Claimer.claim_new`)."""
        return self.publish(self.claimer.claim_new(
            claims, project_id=owner.project_id, user_id=owner.user_id,
            group=owner.group))

    def claim_move(self, instance_uuid, allocation_map, *, owner,
                   migration_uuid):
        """Claim a move's destination; the migration holds the source."""
        return self.publish(self.claimer.move_claim(
            instance_uuid, allocation_map, migration_uuid=migration_uuid,
            project_id=owner.project_id, user_id=owner.user_id,
            group=owner.group))

    @database_outage_is_retryable
    def claim_allocations(self, consumer_uuid, allocation_request,
                          project_id=None, user_id=None):
        """Claim exactly ``allocation_request`` for a consumer, replacing
        what it held (Placement's ``PUT /allocations/{consumer}``).

        :raises: InvalidRequest, CapacityExceeded, ProviderNotFound,
            ClaimConflict
        """
        allocation = translate.validate_allocation_request(
            allocation_request)
        self.claim(consumer_uuid, allocation, owner=allocations.ConsumerInfo(
            project_id=project_id, user_id=user_id))
        LOG.info("Claimed for %s on %s", consumer_uuid,
                 ", ".join(sorted(allocation)))
        return True

    @database_outage_is_retryable
    def release(self, consumer_uuid):
        """Free everything the consumer holds; a no-op if it holds nothing."""
        states = self.publish(self.claimer.release(consumer_uuid))
        if states:
            LOG.info("Released %s from %d provider(s)", consumer_uuid,
                     len(states))
        return bool(states)

    @database_outage_is_retryable
    def reclaim(self, instance_uuid, failed_selection, alternates):
        """Move an instance whose build failed to its first fitting alternate.

        The failed host's allocation is released first; then each alternate
        is claimed in turn with its own allocation request and the
        instance's server-group rule. Returns the claimed Selection.

        :raises: MaxRetriesExceeded, with nothing left allocated
        """
        owner = self.lookup.consumer_info(instance_uuid)
        self.publish(self.claimer.release(instance_uuid))
        LOG.info("Build of %s failed on %s; released, trying %d alternate(s)",
                 instance_uuid, failed_selection.service_host
                 if failed_selection else "?", len(alternates))
        reasons = []
        for alt in alternates:
            try:
                self.claim(instance_uuid, alt.allocation_request.as_mapping(),
                           owner=owner)
            except CONSUMER_RACE:
                raise
            except NEXT_CANDIDATE as exc:
                reasons.append("%s: %s" % (alt.service_host, exc))
                continue
            LOG.info("Re-claimed %s on alternate %s", instance_uuid,
                     alt.service_host)
            alt = alt.obj_clone()
            alt.claimed = True
            alt.consumer_uuid = instance_uuid
            return alt
        raise exception.MaxRetriesExceeded(
            instance_uuid=instance_uuid,
            reason="; ".join(reasons) or "no alternates were given")

    @database_outage_is_retryable
    def confirm_move(self, migration_uuid):
        """Free the source a move held; False if there was nothing."""
        states = self.publish(self.claimer.confirm_move(migration_uuid))
        LOG.info("Move %s confirmed: %s", migration_uuid,
                 "source freed" if states else "nothing held")
        return bool(states)

    @database_outage_is_retryable
    def revert_move(self, instance_uuid, migration_uuid):
        """Give the instance its source back and free the destination;
        False when the migration held nothing (already reverted or
        confirmed)."""
        states = self.publish(self.claimer.revert_move(instance_uuid,
                                                       migration_uuid))
        LOG.info("Move %s of %s reverted: %s", migration_uuid, instance_uuid,
                 "source restored" if states else "nothing held")
        return bool(states)

    def roll_back(self, consumer_uuids, best_effort=False):
        """Release what an all-or-nothing request claimed so far.

        :param best_effort: log, rather than raise, a release that fails
        """
        for uuid in consumer_uuids:
            try:
                self.publish(self.claimer.release(uuid))
            except Exception:
                if not best_effort:
                    raise
                LOG.error("Could not roll back the claim of %s; the caller "
                          "must release it (or retry with the same uuid, "
                          "which replaces it)", uuid)
        if consumer_uuids:
            LOG.info("Rolled back %d claim(s) of an all-or-nothing request",
                     len(consumer_uuids))

    def refresh(self, allocation, exc, group=None):
        """Re-read what a failed claim found changed: the providers' usage
        and, after a group rule was broken, where the group's members are.

        :param group: the request's GroupState, or None
        """
        for uuid, (generation, usage) in host_load.usages_by_uuid(
                self.db, list(allocation)).items():
            self.cache.apply_usage(uuid, generation, usage)
        if group is not None and isinstance(
                exc, exception.GroupPolicyViolation):
            group.reset(self.lookup.group_hosts(group.uuid))

    def publish(self, states):
        """Take committed provider states into the cache, then tell the
        peers (when ``broadcast_claims``).

        :returns: ``states``
        """
        for state in states:
            self.cache.apply_usage(state.uuid, state.generation, state.usages)
        self._after_commit(states)
        if self._scheduler.broadcast_claims and states:
            now = time.time()
            self._broadcast([usage_obj.ProviderUsage(
                resource_provider_uuid=s.uuid, generation=s.generation,
                usages=s.usages, changed_at=now) for s in states])
        return states
