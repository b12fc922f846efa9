"""GroupService: plan_group, reserve_group, extend_group, release_group
and the sweeper of expired reservations.

reserve and extend decide the whole group on one view (:mod:`.fleet`,
:mod:`.solve`), then claim every slot in one transaction under its
reservation consumer (:func:`gantt.db.reservations.reserve`); a claim
that loses a race (another worker took the room meanwhile) re-reads the
providers it found changed and decides again, up to ``[scheduler]
claim_retry_count`` times. Members built later take their slot over
through :class:`~.members.MemberPlacer`.
"""

import datetime
import functools
import logging

from oslo_utils import timeutils

from gantt import exception
from gantt.db import allocations
from gantt.db import reservations
from gantt.scheduler import claims as claims_mod
from gantt.scheduler.groups import fleet as fleet_mod
from gantt.scheduler.groups import plan as plan_mod
from gantt.scheduler.groups import problem as problem_mod
from gantt.scheduler.groups import solve

LOG = logging.getLogger(__name__)

#: the claim rule of a group without a host-level limit: the claim still
#: counts its members and serialises their claims on the group's row
UNLIMITED = 2 ** 31 - 1


def policies_of(request):
    return [problem_mod.Policy(p.level, p.rule, p.limit, p.weight)
            for p in request.policies]


def claim_rule(group_uuid, policies):
    """The GroupClaim the database checks for a group's every member.

    At the host: affinity, or the smallest hard limit at any level (a
    host is in every domain that holds it). At the topology levels:
    affinity, anti-affinity and max-per, which failure domains check in
    the claim. Spread is the plan's to keep: a plan claimed whole is
    checked member by member, and a spread half-way through may be
    skewed although the whole plan is not. At ``zone`` (the availability
    zone, for the claim as for server groups) the same."""
    levels = tuple(p for p in policies
                   if p.rule in ("affinity", "anti-affinity", "max-per")
                   and p.level != problem_mod.HOST)
    if any(p.rule == "affinity" and p.level == problem_mod.HOST
           for p in policies):
        return allocations.GroupClaim(group_uuid, "affinity", 1, levels)
    limits = [problem_mod.level_limit(p) for p in policies
              if p.rule in problem_mod.HARD_RULES]
    return allocations.GroupClaim(group_uuid, "anti-affinity", min(
        [limit for limit in limits if limit is not None],
        default=UNLIMITED), levels)


class GroupService:
    """Decides, reserves and releases holistic groups."""

    def __init__(self, conf, db, cache, routes, claims, lookup,
                 clock=timeutils.utcnow):
        self.conf = conf
        self.db = db
        self.cache = cache
        self.routes = routes
        self.claims = claims
        self.lookup = lookup
        self.clock = clock

    def decide(self, request, held=None, view=None):
        """(Fleet, Answer) for ``request`` on a fresh view (or ``view``).

        :raises: InvalidRequest
        """
        self._check(request)
        view = view or self.cache.view(self.conf.scheduler.service_down_time)
        fleet = fleet_mod.read(
            view, self.routes, self.lookup,
            [(m.name, m.count, m.request_spec) for m in request.members],
            policies_of(request), objective=request.objective, held=held)
        budget = min(request.time_budget,
                     self.conf.group_scheduling.max_time_budget)
        return fleet, solve.decide(fleet.problem, budget,
                                   self.alternates_count())

    def plan(self, request):
        """The plan of a new group, claiming nothing (a dry run)."""
        fleet, answer = self.decide(request, self._held(request))
        if not answer.placed:
            raise exception.NoValidHost(reason=answer.reason)
        return plan_mod.build(request.group_uuid, fleet, answer,
                              plan_mod.slots(fleet, answer),
                              reserved=False,
                              alternates=self.alternates_count())

    def reserve(self, request):
        """Decide a new group and claim all of it, or nothing.

        :raises: InvalidRequest (a group known already: extend it),
            NoValidHost, SlotTaken (a concurrent reserve of the group)
        """
        if self._held(request) or self._stored(request.group_uuid):
            raise exception.InvalidRequest(
                reason="group %s is reserved already; extend_group adds "
                       "members to it" % request.group_uuid)
        return self._reserve(request, {}, 0)

    def extend(self, request):
        """Decide more members of a reserved group, its members (built
        or reserved) held where they are, and claim them all or none."""
        if self._stored(request.group_uuid) is None:
            raise exception.InvalidRequest(
                reason="group %s is not reserved here; reserve_group "
                       "first" % request.group_uuid)
        with self.db.begin() as conn:
            first = reservations.next_slot(conn, request.group_uuid)
        return self._reserve(request, self._held(request), first)

    def _reserve(self, request, held, first_slot):
        rule = claim_rule(request.group_uuid, policies_of(request))
        allocations.ensure_group(self.db, rule)
        for _ in range(self.conf.scheduler.claim_retry_count):
            fleet, answer = self.decide(request, held)
            if not answer.placed:
                raise exception.NoValidHost(reason=answer.reason)
            planned = plan_mod.slots(fleet, answer, first_slot)
            expires_at = self._expiry(request)
            try:
                states = self.claims.claimer.transaction(
                    request.group_uuid, functools.partial(
                        self._write, request=request, fleet=fleet,
                        planned=planned, expires_at=expires_at, rule=rule))
            except claims_mod.NEXT_CANDIDATE as exc:
                LOG.info("Reserving group %s lost a race (%s); deciding "
                         "again", request.group_uuid, exc)
                self.claims.refresh({p: None for s in planned for p in
                                     plan_mod.allocation(fleet, s)}, exc)
                continue
            self.claims.publish(states)
            LOG.info("Group %s: %d member slot(s) reserved (%s, %.1f ms)",
                     request.group_uuid, len(planned), answer.method,
                     answer.seconds * 1000)
            return plan_mod.build(request.group_uuid, fleet, answer, planned,
                                  reserved=True, expires_at=expires_at,
                                  alternates=self.alternates_count())
        raise exception.NoValidHost(
            reason="reserving the group lost %d races in a row; try again"
            % self.conf.scheduler.claim_retry_count)

    def _write(self, conn, request, fleet, planned, expires_at, rule):
        now = self.clock()
        reservations.save_plan(
            conn, request.group_uuid,
            [{"level": p.level, "rule": p.rule, "limit": p.limit,
              "weight": p.weight} for p in request.policies],
            request.objective, request.project_id, request.user_id, now)
        return reservations.reserve(
            conn, request.group_uuid,
            [reservations.SlotClaim(
                s.slot, s.member, s.consumer_uuid,
                plan_mod.allocation(fleet, s),
                plan_mod.alternate_uuids(fleet, s, self.alternates_count()))
             for s in planned],
            expires_at, project_id=request.project_id,
            user_id=request.user_id, group=rule, now=now)

    @claims_mod.database_outage_is_retryable
    def release(self, group_uuid):
        """Free every slot of the group no member took over.

        :returns: how many slots this call freed
        """
        with self.db.begin() as conn:
            consumers = reservations.reserved_of(conn, group_uuid)
        return self._drop(consumers, reservations.drop)

    def release_slot(self, consumer_uuid):
        """Free one reserved slot (its host is gone); False if another
        call freed or took it first."""
        return bool(self._drop([consumer_uuid], reservations.drop))

    def sweep(self):
        """Free the slots whose reservation expired; safe on every worker
        at once (each slot is freed by one of them).

        :returns: how many slots this call freed
        """
        now = self.clock()
        with self.db.begin() as conn:
            consumers = reservations.expired(conn, now)
        freed = self._drop(consumers, lambda conn, consumer: (
            reservations.expire(conn, consumer, now)))
        if freed:
            LOG.info("Released %d expired group reservation(s)", freed)
        return freed

    def _drop(self, consumers, how):
        freed = 0
        for consumer in consumers:
            states = self.claims.claimer.transaction(
                consumer, lambda conn, c=consumer: how(conn, c))
            if states is not None:
                freed += 1
                self.claims.publish(states)
        return freed

    def _check(self, request):
        limits = self.conf.group_scheduling
        total = sum(m.count for m in request.members)
        if not 1 <= total <= limits.max_members or any(
                m.count < 1 for m in request.members):
            raise exception.InvalidRequest(
                reason="group: 1 to %d members ([group_scheduling] "
                       "max_members), at least 1 per shape; got %d" % (
                           limits.max_members, total))
        names = [m.name for m in request.members]
        if len(set(names)) != len(names):
            raise exception.InvalidRequest(
                reason="group: member names must be distinct")

    def held(self, group_uuid):
        """``{provider uuid: members}`` the group holds, built or
        reserved."""
        with self.db.begin() as conn:
            return reservations.members_by_provider(conn, group_uuid)

    def _held(self, request):
        return self.held(request.group_uuid)

    def _stored(self, group_uuid):
        with self.db.begin() as conn:
            return reservations.load_plan(conn, group_uuid)

    def _expiry(self, request):
        ttl = min(request.reservation_ttl,
                  self.conf.group_scheduling.max_reservation_ttl)
        return self.clock() + datetime.timedelta(seconds=max(ttl, 1))

    def alternates_count(self):
        return max(self.conf.scheduler.max_attempts - 1, 0)
