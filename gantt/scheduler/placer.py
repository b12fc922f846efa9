"""Placer: choose hosts and claim them (``select_destinations``; the
moves' claims are in :mod:`.move_claims`).

For each instance the placer ranks the hosts through the
:class:`~.pipeline.pipeline.Pipeline`, picks one among the best
(:mod:`.pipeline.picking`), finds its layout (:mod:`.pipeline.layouts`)
and claims it through the :class:`~.claims.ClaimService`; a failed claim
excludes the host and ranks again. A request is placed all or nothing.
Instances that hold claims already (a retried call whose reply was lost)
get those back (:mod:`.held`).
"""

import contextlib
import functools
import logging
import time

import numpy as np
from oslo_utils import uuidutils

from gantt import exception
from gantt.db import allocations as db_allocations
from gantt.scheduler import candidates_api
from gantt.scheduler import claims as claims_mod
from gantt.scheduler import held as held_mod
from gantt.scheduler import move_claims
from gantt.scheduler import selections
from gantt.scheduler.pipeline import containers
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import translate
from gantt.scheduler.pipeline import weighers as weighers_base
from gantt.scheduler.state import topology as topology_mod

LOG = logging.getLogger(__name__)

_retryable = claims_mod.database_outage_is_retryable


class Placer(move_claims.MoveClaims):
    """Decides and claims; the claim service writes."""

    def __init__(self, conf, cache, routes, layouts, claims, lookup,
                 counters, members=None):
        self.conf = conf
        self.members = members      # groups.members.MemberPlacer
        self.cache = cache
        #: each profile's pipelines and picker (:mod:`.pipeline.profiles`)
        self.routes = routes
        self.layouts = layouts
        self.claims = claims
        self.lookup = lookup
        self.counters = counters
        self.topology = topology_mod.Topology(conf.topology.levels)

    @functools.cached_property
    def _scheduler(self):
        """``[scheduler]``, looked up once (it reads each value live)."""
        return self.conf.scheduler

    @property
    def pipeline(self):
        """The default profile's pipeline (benchmarks, nova-diff)."""
        return self.routes.default.pipeline

    @property
    def picker(self):
        """The default profile's picker (benchmarks)."""
        return self.routes.default.picker

    def cycle(self, spec, instance_uuids):
        """A new cycle for ``spec``: its request on a fresh view.

        :raises: InvalidRequest (UnknownProfile, PackingRefused)
        """
        request = translate.from_spec(spec, instance_uuids, self.lookup,
                                      self.routes.profiles, self.topology)
        return cycle_mod.CycleState(request, self.view(),
                                    owner=claims_mod.owner_of(request))

    def route(self, cycle):
        """The pipelines and picker of ``cycle``'s profile and packing."""
        return self.routes.for_request(cycle.request)

    def view(self):
        """A fresh window on the cache's table."""
        return self.cache.view(self._scheduler.service_down_time)

    @_retryable
    def select_destinations(self, spec, instance_uuids,
                            return_alternates=True, replace=False):
        """Place every instance, or none of them.

        Instances that hold claims already (a retried call whose reply was
        lost, or a duplicate running at the same time) get those claims
        back unchanged when they satisfy the request; see
        :mod:`gantt.scheduler.held`.

        :param replace: move the instances' claims if they hold any (their
            room counts as free); by default an existing claim is never
            moved
        :returns: one list per instance: ``[claimed, alternates...]``
        :raises: InvalidRequest, NoValidHost, ConsumerConflict (a claim
            held that does not satisfy the request, or changed meanwhile)
        """
        started = time.monotonic()
        self.counters.add("requests")
        if spec.group_slot is not None and self.members is not None:
            return self.members.place(spec, instance_uuids, return_alternates)
        cycle = self.cycle(spec, instance_uuids)
        try:
            # with replace, their claims (if any) are replaced: their room
            # is free; most calls are new: their instances are claimed as
            # new consumers, without first asking whether they hold any
            claimed = self._claim_request(cycle, instance_uuids,
                                          retried=replace)
        except (exception.NoValidHost, db_allocations.ConsumerExists) as exc:
            held = (self.lookup.allocations_of(instance_uuids)
                    if not replace else None)
            if not held:
                if isinstance(exc, exception.NoValidHost):
                    self.counters.add("no_valid_host")
                    raise
                raise exception.ConsumerConflict(
                    consumer=",".join(instance_uuids),
                    reason="another call claimed these instances and gave "
                           "them up meanwhile; retry") from None
            # the reply to an earlier call was lost, or a duplicate of
            # this call won the race: the claims held are the answer
            return self._held_answer(spec, instance_uuids, held,
                                     return_alternates)
        placed = self._answer(cycle, claimed, return_alternates)
        self.counters.add("placements", len(placed))
        if LOG.isEnabledFor(logging.INFO):
            # the list is not built for a log that drops it (the simulator)
            LOG.info("Placed %d instance(s) in %.1f ms: %s", len(placed),
                     (time.monotonic() - started) * 1000, ", ".join(
                         "%s on %s" % (s[0].consumer_uuid, s[0].service_host)
                         for s in placed))
        return placed

    def _answer(self, cycle, claimed, return_alternates):
        """``[claimed, alternates…]`` per decision.

        Alternates are chosen once every instance is claimed, so that they
        respect the whole request (siblings' usage, the group's new hosts).
        """
        weighed = None
        reweigh = (len(claimed) > 1
                   or cycle.request.instance_group is not None)
        if reweigh and return_alternates:
            # siblings' claims and the group's new hosts change what may be
            # an alternate: filter and weigh again, once for all of them
            # (each instance's own host is left out of its alternates)
            weighed = self._weigh_again(cycle)
        return [self._selections(cycle, d, return_alternates, weighed)
                for d in claimed]

    def _selections(self, cycle, decision, return_alternates,
                    weighed=None):
        count = (self._scheduler.max_attempts - 1
                 if return_alternates else 0)
        return selections.for_decision(cycle, decision, self.layouts,
                                       count, weighed)

    def _claim_request(self, cycle, instance_uuids, retried):
        """Claim every instance of a request, or none of them.

        :param retried: the instances may hold claims (of an earlier call)
            that these replace; otherwise they are claimed as new, and
            ConsumerExists is raised if one was stored (the claims this
            call made so far are undone first: the held ones are another
            call's, and the answer is theirs)
        :returns: the Decisions claimed
        """
        if retried:
            cycle.count_out_held(self.lookup.allocations_of(instance_uuids))
        previous = set(cycle.held)
        self.route(cycle).pipeline.candidates(cycle)
        claimed = []
        claim = functools.partial(self.claims.claim, new=not retried)
        try:
            if not retried and self._can_claim_together(cycle,
                                                        instance_uuids):
                claimed = self._claim_together(cycle, instance_uuids) or []
            for uuid in instance_uuids[len(claimed):]:
                claimed.append(self._claim_one(cycle, uuid, claim))
        except db_allocations.ConsumerExists:
            self.claims.roll_back(sorted(d.consumer_uuid for d in claimed))
            raise
        except exception.NoValidHost:
            # a failed answer leaves none of these instances allocated, even
            # those a lost earlier call had claimed: the caller was told no
            self.claims.roll_back(sorted(
                {d.consumer_uuid for d in claimed} | previous))
            raise
        except Exception:
            # all or nothing holds for unexpected failures too (a database
            # outage half-way): undo what was claimed, if the DB lets us
            self.claims.roll_back(sorted(
                {d.consumer_uuid for d in claimed} | previous),
                best_effort=True)
            raise
        return claimed

    def _held_answer(self, spec, instance_uuids, held, return_alternates):
        """``[claimed, alternates…]`` per instance from the claims they
        hold, unchanged (alternates as for a new call).

        :raises: ConsumerConflict unless each holds a claim satisfying the
            request (see :mod:`gantt.scheduler.held`)
        """
        cycle = self.cycle(spec, instance_uuids)
        found = held_mod.held_claims(cycle.view, cycle.request, held,
                                     instance_uuids)
        weighed = self._weigh_again(cycle)
        weights = dict(zip(weighed.rows.tolist(), weighed.totals.tolist(),
                           strict=True))
        LOG.info("Instances %s hold claims satisfying this request already "
                 "(a retried or duplicate call): answering with them",
                 ", ".join(instance_uuids))
        return [self._selections(cycle, cycle_mod.Decision(
            c.consumer_uuid, c.row, weights.get(c.row, 0.0), weighed,
            c.allocations), return_alternates, weighed) for c in found]

    def _claim_one(self, cycle, consumer_uuid, claim):
        """Rank, pick and claim for one instance.

        Each failed claim excludes its host and ranks again from the
        filters, which is cheap on columns and keeps every decision on the
        freshest data (the failed host was re-read from the database).

        :param claim: ``claim(consumer, allocations, owner=…)`` of the
            claim service (a move claims differently)
        :returns: the claimed Decision
        """
        cycle.next_instance()
        retries = self._scheduler.claim_retry_count
        attempts = 0
        route = self.route(cycle)
        while attempts < retries:
            ranking = route.pipeline.rank(cycle)
            if ranking.weighing is None:
                self._no_valid_host(cycle, ranking.outcome)
            row, weight = route.picker.pick(ranking.weighing, cycle)
            decision = self.layouts.first_fitting(
                cycle, consumer_uuid, row, weight, ranking.weighing)
            if decision is None:
                continue   # no tree fits: rank again, to say why
            attempts += 1
            states = self._claim_reserved(cycle, decision, claim)
            if states is not None:
                cycle.place(decision, {s.uuid: s.generation for s in states})
                return decision
        raise exception.NoValidHost(
            reason="claims failed on %d hosts in a row (lost races or "
                   "stale cache); try again" % retries)

    def _claim_reserved(self, cycle, decision, claim):
        """Claim ``decision`` with its room marked in the cache meanwhile.

        :returns: the committed (and published) states, or None when the
            claim failed on that host (it is then excluded, and what the
            failure found changed is re-read)
        """
        view, request = cycle.view, cycle.request
        # concurrent requests of this worker now see the room taken
        with self.cache.reserved(view.uuids[decision.row], request.resources):
            try:
                # the committed usage is published first, then the mark
                # dropped: never a moment in which neither counts
                return claim(decision.consumer_uuid, decision.allocations,
                             owner=cycle.owner)
            except claims_mod.NEXT_CANDIDATE as exc:
                failure = exc
        LOG.info("Claim for %s on %s failed (%s); trying the next host",
                 decision.consumer_uuid, view.hosts[decision.row], failure)
        cycle.exclude_failed(decision.row)
        self.claims.refresh(decision.allocations, failure,
                            request.instance_group)
        return None

    @staticmethod
    def _can_claim_together(cycle, instance_uuids):
        """Whether the instances can be decided first and claimed in one
        transaction: several of them, and no provider tree or sharing
        pool among the candidates (the solver reads committed usage per
        provider, which a batch not yet claimed is not in)."""
        return (len(instance_uuids) > 1
                and not cycle.view.tree_rows()[cycle.candidates.mask].any())

    def _claim_together(self, cycle, instance_uuids):
        """Decide every instance, then claim them all at once.

        Each decision marks its host in the cache (as a claim in flight
        does), so the next instance, and concurrent requests, see the room
        taken. One transaction then claims them all.

        :returns: the claimed Decisions, or None if the transaction failed
            (a lost race, a stale cache): the caller then claims them one
            by one, which moves each instance to its next host on failure
        :raises: NoValidHost (nothing claimed)
        """
        with contextlib.ExitStack() as marks:
            decided = [self._decide_marked(cycle, uuid, marks)
                       for uuid in instance_uuids]
            try:
                self.claims.claim_new(
                    [db_allocations.NewClaim(d.consumer_uuid, d.allocations)
                     for d in decided], owner=cycle.owner)
            except claims_mod.NEXT_CANDIDATE as exc:
                LOG.info("Claiming %d instances in one transaction failed "
                         "(%s); claiming them one by one", len(decided), exc)
                cycle.unplace(decided)
                self.claims.refresh(
                    {p: None for d in decided for p in d.allocations}, exc,
                    cycle.request.instance_group)
                return None
        return decided

    def _decide_marked(self, cycle, consumer_uuid, marks):
        """Decide one instance of a batch and mark its room in the cache
        (the mark entered into the ExitStack ``marks``)."""
        view, request = cycle.view, cycle.request
        cycle.next_instance()
        route = self.route(cycle)
        ranking = route.pipeline.rank(cycle)
        if ranking.weighing is None:
            self._no_valid_host(cycle, ranking.outcome)
        row, weight = route.picker.pick(ranking.weighing, cycle)
        provider = view.uuids[row]
        table = marks.enter_context(
            self.cache.reserved(provider, request.resources))
        if table is not view.table:
            # the cache swapped in a grown table since the view was
            # taken: the mark is not in the table the view reads
            view.consume(row, request.resources)
        decision = cycle_mod.Decision(consumer_uuid, row, weight,
                                      ranking.weighing,
                                      {provider: request.resources})
        cycle.place(decision)
        return decision

    def _weigh_again(self, cycle):
        """Every host that passes the filters now, weighed."""
        ranking = self.route(cycle).pipeline.rank(cycle.afresh())
        if ranking.weighing is None:
            return weighers_base.Weighing(ranking.outcome.mask,
                                          rows=np.zeros(0, dtype=np.int64),
                                          totals=np.zeros(0))
        return ranking.weighing

    def _no_valid_host(self, cycle, outcome):
        """:raises: NoValidHost, or ProvidersFull for a container request
            that only room kept out (see :mod:`.pipeline.containers`)"""
        request = cycle.request
        self.counters.eliminated(outcome.removed)
        summary = outcome.summary()
        flavor = request.spec.flavor
        LOG.info("No valid host for %d instance(s) of flavor %s (profile "
                 "%s): %s", request.spec.num_instances,
                 flavor.name if flavor else "none", request.profile, summary)
        raise containers.no_room(self.route(cycle).pipeline.filters,
                                 cycle.view, request, cycle.candidates.mask,
                                 summary)

    @_retryable
    def get_allocation_candidates(self, spec, limit=1000):
        """Every way ``spec`` could be allocated now, best hosts first
        (see :mod:`.candidates_api`).

        :returns: list of AllocationCandidate objects, at most ``limit``
        :raises: InvalidRequest
        """
        cycle = self.cycle(spec, [spec.instance_uuid
                                  or uuidutils.generate_uuid()])
        return candidates_api.listing(self.route(cycle).fit_pipeline, cycle,
                                      limit)
