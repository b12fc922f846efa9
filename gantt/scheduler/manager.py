"""SchedulerManager: the pipeline, top to bottom.

    stats cast  -> validate -> database (sequence-guarded) -> host cache
    request     -> ResourceRequest -> candidates -> filters -> weighers
                -> claim (best first; lost race or stale cache -> next)
                -> selections [claimed, alternates...]
    build failed -> reclaim on the alternates, or MaxRetriesExceeded

This module knows objects, the database API and the plugins; it never
touches oslo.messaging (the RPC layer hands it a ``broadcast`` callable).
"""

import collections
import dataclasses
import functools
import logging
import random
import threading
import time

import numpy as np
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils

from gantt import exception
from gantt import rpcapi
from gantt.db import aggregates as db_aggregates
from gantt.db import allocations as db_allocations
from gantt.db import hosts as db_hosts
from gantt.db import providers as db_providers
from gantt.objects import provider as provider_obj
from gantt.objects import statistics as statistics_obj
from gantt.objects import usage as usage_obj
from gantt.scheduler import claims
from gantt.scheduler import explain as explain_mod
from gantt.scheduler import held as held_mod
from gantt.scheduler import selections
from gantt.scheduler.intake import host_identity
from gantt.scheduler.intake import report_rules
from gantt.scheduler.pipeline import allocation_candidates
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import misfits
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.pipeline import tree_source
from gantt.scheduler.pipeline import weighers as weighers_base
from gantt.scheduler.pipeline.filters import resources as resource_filter
from gantt.scheduler.state import aggregates
from gantt.scheduler.state import host_cache
from gantt.scheduler.state import host_view

LOG = logging.getLogger(__name__)

def _database_outage_is_retryable(method):
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


#: errors after which a claim moves on to the next candidate host
_NEXT_CANDIDATE = (exception.CapacityExceeded, exception.ClaimConflict,
                   exception.GroupPolicyViolation, exception.ProviderNotFound)

#: a race over the consumer itself (ClaimConflicts too, caught first):
#: another host would not help, and claiming again would replace what the
#: other call answered
_CONSUMER_RACE = (db_allocations.ConsumerExists, exception.ConsumerConflict)


class Counters:
    """Thread-safe counters behind ``get_statistics``."""

    NAMES = ("requests", "placements", "no_valid_host", "reports_applied",
             "reports_stale", "messages_rejected")

    def __init__(self):
        self._lock = threading.Lock()
        self.values = collections.Counter()
        self.eliminations = collections.Counter()
        self.lags = collections.deque(maxlen=10000)

    def add(self, name, amount=1):
        with self._lock:
            self.values[name] += amount

    def eliminated(self, removed):
        with self._lock:
            for label, count in removed:
                self.eliminations[label] += count

    def peer_lag(self, seconds):
        with self._lock:
            self.values["peer_updates"] += 1
            self.lags.append(seconds)

    def lag_percentiles(self):
        """(p50, p99) in ms of the recorded peer lags, or (None, None)."""
        with self._lock:
            lags = np.array(self.lags)
        if not len(lags):
            return None, None
        p50, p99 = np.percentile(lags, [50, 99]) * 1000.0
        return float(p50), float(p99)


class SchedulerManager:
    """One worker's scheduler: cache, plugins, claims."""

    def __init__(self, conf, db, *, broadcast=None, clock=time.time,
                 worker_name="gantt", rng=None):
        self.conf = conf
        self.db = db
        self.worker_name = worker_name
        self.cache = host_cache.HostStateCache(clock)
        self.filters = filters_base.FilterRunner(plugins.load(
            plugins.FILTERS, conf.filter_scheduler.enabled_filters, conf))
        self.weighers = weighers_base.WeigherRunner(plugins.load(
            plugins.WEIGHERS, conf.filter_scheduler.enabled_weighers, conf))
        self.claimer = claims.Claimer(db)
        self.misfits = misfits.MisfitMemo()
        self.lookup = claims.DatabaseLookup(db)
        self.counters = Counters()
        self.refusals = host_identity.RefusalLog(self.counters)
        self.ready = threading.Event()
        self._broadcast = broadcast or (lambda states: None)
        self._rng = rng or random.Random()

    # -- start-up ---------------------------------------------------------

    def load_cache(self):
        """Fill the cache from the database; the worker is then ready.

        Reports cast while this runs are applied as they come; the cache
        keeps whichever of a stored and a cast report is newer.
        """
        started = time.monotonic()
        # aggregates first: hosts they name join them as they are loaded
        self.reload_aggregates()
        stored = db_providers.load_host_columns(self.db)
        # in bulk: as apply_report (persisted) and apply_usage of each
        self.cache.load(stored)
        self.cache.load_boot_ids(db_hosts.boot_ids(self.db))
        self.reload_providers()
        self.ready.set()
        LOG.info("Host cache loaded: %d hosts from the database in %.2fs",
                 len(stored), time.monotonic() - started)

    # -- stats ------------------------------------------------------------

    def update_resource_stats(self, node):
        """Store an agent's report; False if it was not newer than ours.

        :raises: InvalidRequest (nothing is stored)
        """
        return self._take_report(node)[0]

    def report_resource_stats(self, node, force=False):
        """Store an agent's report and say what became of it.

        Unlike the fanout cast, the report is always written to the
        database, so that the answer tells the agent which inventory
        changes were refused (Placement's 409 "inventory in use").

        :param force: take inventories even below what is allocated
        :returns: a ReportResult
        :raises: InvalidRequest (nothing is stored)
        """
        applied, saved = self._take_report(node, force=force,
                                           always_persist=True)
        if saved is None:
            raise exception.ServiceUnavailable(
                reason="the database is unreachable; the report was "
                       "cached but not stored")
        return _report_result(node.uuid, applied or saved.applied, saved)

    def _take_report(self, node, force=False, always_persist=False):
        """Validate, persist when needed, and cache a ComputeNode report.

        :returns: (applied to the cache, SaveResult or None)
        """
        report_rules.validate_node(node)
        report = host_cache.HostReport.from_compute_node(
            node, received_at=self.cache.now())
        saved = None
        if always_persist or self.cache.needs_persisting(
                report, self.conf.scheduler.report_persist_interval):
            saved = self._save_report(node, force)
            stored = (saved.stored_inventories or {}) if saved else {}
            if stored:
                # claims are checked against the database's inventory, so
                # the cache must hold that one, not the agent's wish
                report = _with_stored_inventories(report, stored)
        if saved is None:
            # the database did not judge the host name: the cache does
            self._check_host_name(report)
        persisted = saved is not None and not saved.refused
        applied = self.cache.apply_report(report, persisted=persisted)
        if applied:
            self.cache.retire_host_rows(report.host, report.uuid)
        if persisted and saved.applied and saved.generation == 0:
            # a host new to the database holds nothing yet, at generation 0
            self.cache.apply_usage(node.uuid, 0, {})
        if saved is not None and saved.applied and report.children:
            for uuid, generation in saved.generations.items():
                if uuid != node.uuid and generation == 0:
                    self.cache.apply_usage(uuid, 0, {})
        self.counters.add("reports_applied" if applied else "reports_stale")
        if not applied:
            LOG.debug("Ignored report %d of %s: not newer than the cache's",
                      node.report_sequence, node.host)
        return applied, saved

    def _save_report(self, node, force=False):
        """Store a report; None if the database is unreachable.

        Without the database the worker still takes the report into its
        cache (hosts stay up, filters stay right); it is stored again from
        the agent's next report, which carries the full state anyway.
        """
        try:
            saved = db_providers.save_report(self.db, node,
                                             timeutils.utcnow(), force=force)
        except exception.HostNameTaken as exc:
            self.refusals.refuse(exc)
            raise
        except db_exc.DBConnectionError as exc:
            if self.db.answers():
                # the database is there: it dropped the connection over
                # this report, which must then not be cached either (the
                # cache never holds what the database refused)
                raise exception.InvalidRequest(
                    reason="the database refused the report of %s: %s"
                           % (node.host, str(exc)[:200])) from None
            LOG.warning("Report of %s not stored, the database is "
                        "unreachable (%s); cached only", node.host, exc)
            return None
        for uuid, refused in saved.refused.items():
            LOG.warning("Host %s, provider %s: inventory change refused "
                        "for %s", node.host, uuid, "; ".join(
                            "%s: %s" % kv for kv in sorted(refused.items())))
        return saved

    def _check_host_name(self, report):
        try:
            host_identity.check_cached(self.cache, report)
        except exception.HostNameTaken as exc:
            self.refusals.refuse(exc)
            raise

    def reset_report_sequence(self, host):
        """The operator's reset: the next report of ``host`` is taken
        whatever its sequence and boot id (the database, then this
        worker's cache; the client tells the other workers).

        :returns: the uuid of the host's compute node
        :raises: HostNotFound
        """
        uuid = db_hosts.reset_sequence(self.db, host)
        self.cache.reset_sequence(uuid)
        LOG.info("Report sequence of host %s (%s) reset: its next report "
                 "is taken whatever its sequence", host, uuid)
        return uuid

    # -- standalone providers ---------------------------------------------

    def update_provider(self, report):
        """Store a standalone provider (a sharing storage pool, a network
        segment's address pool…) and take it into the cache.

        :returns: a ReportResult
        :raises: InvalidRequest
        """
        provider = report.provider
        report_rules.validate_provider(provider)
        saved = db_providers.save_provider(self.db, report,
                                           timeutils.utcnow())
        for uuid, refused in saved.refused.items():
            LOG.warning("Provider %s: inventory change refused for %s",
                        uuid, "; ".join("%s: %s" % kv
                                        for kv in sorted(refused.items())))
        self.reload_providers()
        LOG.info("Provider %s (%s) reported: %s", provider.uuid,
                 provider.name, "stored" if saved.applied
                 else "not newer than the stored report")
        return _report_result(provider.uuid, saved.applied, saved)

    def delete_provider(self, provider_uuid):
        """Delete a standalone provider; False when there was none.

        :raises: ProviderInUse while it holds allocations
        """
        deleted = db_providers.delete_provider(self.db, provider_uuid)
        self.reload_providers()
        if deleted:
            LOG.info("Deleted provider %s", provider_uuid)
        return bool(deleted)

    def reload_providers(self):
        """Re-read the standalone providers (and their usage)."""
        stored = db_providers.load_standalone_providers(self.db)
        known = {p.uuid for p in stored}
        for gone in {p.uuid for p in self.cache.standalone_providers()} - (
                known):
            self.cache.remove_provider(gone)
        for p in stored:
            self.cache.apply_provider(host_cache.stored_provider(p, p.uuid),
                                      p.report_sequence, p.boot_id)
            self.cache.apply_usage(p.uuid, p.generation, p.usage)
        return stored

    def apply_peer_usage(self, usages):
        """Another worker committed claims: take the providers' new usage.

        For news (not this worker's own claims, which it applied already)
        the delay since the change committed is recorded: the staleness
        other workers' caches have under load.
        """
        now = time.time()
        for usage in usages:
            news = self.cache.apply_usage(usage.resource_provider_uuid,
                                          usage.generation,
                                          dict(usage.usages))
            changed_at = usage.changed_at if usage.obj_attr_is_set(
                "changed_at") else None
            if news and changed_at is not None:
                self.counters.peer_lag(now - changed_at)

    def sync_usage(self):
        """Re-read every provider's usage and generation from the database,
        which overrides whatever peers' casts said (see
        ``HostStateCache.finish_usage_sync``).

        :returns: how many providers' cached state contradicted the
            database
        """
        self.cache.begin_usage_sync()
        contradicted = self.cache.finish_usage_sync(
            db_providers.usages_by_uuid(self.db))
        if contradicted:
            LOG.warning("Usage sync: %d provider(s) held a usage the "
                        "database does not (a forged or corrupt "
                        "provider_usage_changed cast?), now the database's: "
                        "%s", len(contradicted),
                        ", ".join(sorted(contradicted)[:10]))
        return len(contradicted)

    # -- scheduling -------------------------------------------------------

    @_database_outage_is_retryable
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
        request = request_mod.from_spec(spec, instance_uuids, self.lookup)
        try:
            if replace:
                # their claims, if any, are replaced: their room is free
                view, cands, claimed = self._claim_request(
                    request, instance_uuids, retried=True)
            else:
                # most calls are new: their instances are claimed as new
                # consumers, without first asking whether they hold any
                view, cands, claimed = self._claim_request(
                    request, instance_uuids, retried=False)
        except (exception.NoValidHost, db_allocations.ConsumerExists) as exc:
            held = (self.claimer.allocations_of(instance_uuids)
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
        # alternates are chosen once every instance is claimed, so that they
        # respect the whole request (siblings' usage, the group's new hosts)
        reweigh = len(claimed) > 1 or request.instance_group is not None
        weighed = None
        if reweigh and return_alternates:
            # siblings' claims and the group's new hosts change what may be
            # an alternate: filter and weigh again, once for all of them
            # (each instance's own host is left out of its alternates)
            weighed = self._weigh_again(view, request, cands)
        placed = [self._selections(view, request, c, return_alternates,
                                   weighed) for c in claimed]
        self.counters.add("placements", len(placed))
        LOG.info("Placed %d instance(s) in %.1f ms: %s", len(placed),
                 (time.monotonic() - started) * 1000, ", ".join(
                     "%s on %s" % (s[0].consumer_uuid, s[0].service_host)
                     for s in placed))
        return placed

    def _claim_request(self, request, instance_uuids, retried):
        """Claim every instance of a request, or none of them.

        :param retried: the instances may hold claims (of an earlier call)
            that these replace; otherwise they are claimed as new, and
            ConsumerExists is raised if one was stored (the claims this
            call made so far are undone first: the held ones are another
            call's, and the answer is theirs)
        :returns: (the view, the candidates, the claimed instances)
        """
        view = self._view()
        held = {}
        if retried:
            held = self._count_out_previous_claims(view, request,
                                                   instance_uuids)
        previous = set(held)
        cands = candidates.for_request(view, request, self.conf)
        claimed = []
        claim = functools.partial(self.claimer.claim, new=not retried)
        try:
            if not retried and self._can_claim_together(view, cands,
                                                        instance_uuids):
                claimed = self._claim_together(view, request, cands,
                                               instance_uuids) or []
            for uuid in instance_uuids[len(claimed):]:
                claimed.append(self._claim_one(view, request, cands, uuid,
                                               held.get(uuid, ()),
                                               claim=claim))
        except db_allocations.ConsumerExists:
            self._roll_back(sorted(c[0] for c in claimed))
            raise
        except exception.NoValidHost:
            # a failed answer leaves none of these instances allocated, even
            # those a lost earlier call had claimed: the caller was told no
            self._roll_back(sorted({c[0] for c in claimed} | previous))
            raise
        except Exception:
            # all or nothing holds for unexpected failures too (a database
            # outage half-way): undo what was claimed, if the DB lets us
            self._roll_back(sorted({c[0] for c in claimed} | previous),
                            best_effort=True)
            raise
        return view, cands, claimed

    def _held_answer(self, spec, instance_uuids, held, return_alternates):
        """``[claimed, alternates…]`` per instance from the claims they
        hold, unchanged (alternates as for a new call).

        :raises: ConsumerConflict unless each holds a claim satisfying the
            request (see :mod:`gantt.scheduler.held`)
        """
        request = request_mod.from_spec(spec, instance_uuids, self.lookup)
        view = self._view()
        found = held_mod.held_claims(view, request, held, instance_uuids)
        cands = candidates.for_request(view, request, self.conf)
        weighed = self._weigh_again(view, request, cands)
        weights = dict(zip(weighed.rows.tolist(), weighed.totals.tolist(),
                           strict=True))
        LOG.info("Instances %s hold claims satisfying this request already "
                 "(a retried or duplicate call): answering with them",
                 ", ".join(instance_uuids))
        return [self._selections(
            view, request, (c.consumer_uuid, c.row, weights.get(c.row, 0.0),
                            weighed, c.allocations),
            return_alternates, weighed) for c in found]

    def _count_out_previous_claims(self, view, request, instance_uuids):
        """Give this request the room its instances already hold.

        A retried call (the reply to the first was lost) claims again for
        the same instances, and the claim replaces the old allocation: the
        filters must see that room as free, and a server group must not
        count the instance against itself.

        :returns: ``{instance uuid: [(row, resources held there)]}`` for
            the instances that held a claim
        """
        held = {}
        group = request.instance_group
        for consumer, allocations in self.claimer.allocations_of(
                instance_uuids).items():
            held[consumer] = []
            for provider, resources in allocations.items():
                row = view.row_of(provider)
                if row is None:
                    continue
                held[consumer].append((row, resources))
                view.consume(row, {rc: -amount
                                   for rc, amount in resources.items()})
                _uncount_member(group, view.hosts[row])
        return held

    def _count_out_moving_member(self, view, request, instance_uuid):
        """A first move: the source stays counted as usage (a resize on
        the same host needs room for both), but the instance does not
        count against its own host in its server group, as Nova's
        anti-affinity filter passes the host the instance is on."""
        group = request.instance_group
        if group is None:
            return
        held = self.claimer.allocations_of([instance_uuid])
        rows = {view.row_of(p) for p in held.get(instance_uuid, {})}
        for host in {view.hosts[row] for row in rows if row is not None}:
            _uncount_member(group, host)

    def _view(self):
        return host_view.HostView(
            self.cache.table, self.cache.now(),
            self.conf.scheduler.service_down_time)

    def _claim_one(self, view, request, cands, consumer_uuid, held=(),
                   claim=None):
        """Filter, weigh and claim for one instance.

        Each failed claim excludes its host and starts over from the
        filters, which is cheap on columns and keeps every decision on the
        freshest data (the failed host was re-read from the database).

        :param claim: ``claim(consumer, allocations, **owner)`` to use
            instead of a plain claim (a move claims differently)
        :returns: (consumer uuid, claimed row, its weight, the weighing,
            the allocations claimed)
        """
        claim = claim or self.claimer.claim
        failed = np.zeros(view.n, dtype=bool)
        unfit = np.zeros(view.n, dtype=bool)
        retries = self.conf.scheduler.claim_retry_count
        attempts = 0
        while attempts < retries:
            outcome = self._filter(view, request, cands, failed, unfit)
            if not outcome.mask.any():
                self._no_valid_host(request, outcome)
            weighing = self._weigh(view, request, outcome.mask)
            row, weight = self._pick(weighing)
            row, weight, allocation = self._allocation_for(
                view, request, row, weight, weighing, unfit)
            if allocation is None:
                continue   # no tree fits: filter again, to say why
            attempts += 1
            provider = view.uuids[row]
            # concurrent requests of this worker now see the room taken
            mark = self.cache.reserve(provider, request.resources)
            try:
                states = claim(
                    consumer_uuid, allocation,
                    project_id=request.spec.project_id,
                    user_id=request.spec.user_id,
                    group=_group_claim(request))
            except _CONSUMER_RACE:
                self.cache.unreserve(mark)
                raise
            except _NEXT_CANDIDATE as exc:
                self.cache.unreserve(mark)
                LOG.info("Claim for %s on %s failed (%s); trying the next "
                         "host", consumer_uuid, view.hosts[row], exc)
                failed[row] = True
                self._refresh_after_failure(request, allocation, exc)
                continue
            except BaseException:
                self.cache.unreserve(mark)
                raise
            # the committed usage first, then drop the mark: never a moment
            # in which neither counts
            self._claimed(states)
            self.cache.unreserve(mark)
            self._count_claim(view, request, row, states, held)
            # NUMA cells, pinned CPUs, pages and PCI devices it took
            request.record_placement(view, row)
            if request.instance_group is not None:
                request.instance_group.hosts[view.hosts[row]] += 1
            return consumer_uuid, row, weight, weighing, allocation
        raise exception.NoValidHost(
            reason="claims failed on %d hosts in a row (lost races or "
                   "stale cache); try again" % retries)

    @staticmethod
    def _can_claim_together(view, cands, instance_uuids):
        """Whether the instances can be decided first and claimed in one
        transaction: several of them, and no provider tree or sharing
        pool among the candidates (the solver reads committed usage per
        provider, which a batch not yet claimed is not in)."""
        return (len(instance_uuids) > 1
                and not view.tree_rows()[cands.mask].any())

    def _claim_together(self, view, request, cands, instance_uuids):
        """Decide every instance, then claim them all at once.

        Each decision marks its host in the cache (as a claim in flight
        does), so the next instance, and concurrent requests, see the room
        taken. One transaction then claims them all.

        :returns: the claimed instances as :meth:`_claim_one` gives them,
            or None if the transaction failed (a lost race, a stale cache):
            the caller then claims them one by one, which moves each
            instance to its next host on failure
        :raises: NoValidHost (nothing claimed)
        """
        group = request.instance_group
        decided, marks = [], []
        none_failed = np.zeros(view.n, dtype=bool)
        try:
            for uuid in instance_uuids:
                outcome = self._filter(view, request, cands, none_failed)
                if not outcome.mask.any():
                    self._no_valid_host(request, outcome)
                weighing = self._weigh(view, request, outcome.mask)
                row, weight = self._pick(weighing)
                provider = view.uuids[row]
                mark = self.cache.reserve(provider, request.resources)
                marks.append(mark)
                if mark[0] is not view.table:
                    # the cache swapped in a grown table since the view was
                    # taken: the mark is not in the table the view reads
                    view.consume(row, request.resources)
                if group is not None:
                    group.hosts[view.hosts[row]] += 1
                request.record_placement(view, row)
                decided.append((uuid, row, weight, weighing,
                                {provider: request.resources}))
            try:
                states = self.claimer.claim_new(
                    [db_allocations.NewClaim(d[0], d[4]) for d in decided],
                    project_id=request.spec.project_id,
                    user_id=request.spec.user_id,
                    group=_group_claim(request))
            except _CONSUMER_RACE:
                raise
            except _NEXT_CANDIDATE as exc:
                LOG.info("Claiming %d instances in one transaction failed "
                         "(%s); claiming them one by one", len(decided), exc)
                if group is not None:
                    group.hosts.subtract(view.hosts[d[1]] for d in decided)
                    for host in [h for h, n in group.hosts.items()
                                 if n <= 0]:
                        del group.hosts[host]
                self._refresh_after_failure(
                    request, {p: None for d in decided for p in d[4]}, exc)
                request.forget_placements()
                return None
            # the committed usage first, then drop the marks: never a
            # moment in which neither counts
            self._claimed(states)
        finally:
            for mark in marks:
                self.cache.unreserve(mark)
        return decided

    def _count_claim(self, view, request, row, states, held):
        """Make the view count a claim its table did not show yet."""
        # NOTE: _claimed wrote the claim's usage (with its generation)
        # into the cache's table, which the view reads live: counting it
        # again would halve the room later instances see. Only if the
        # view's table missed it (the cache swapped in a grown table
        # first) must the view count the claim itself.
        generations = {s.uuid: s.generation for s in states}
        seen = generations.get(view.uuids[row])
        if seen is not None and view.table.generation[row] < seen:
            view.consume(row, request.resources)
        # the old claim this one replaced: once the table shows it
        # released, the view's own allowance for it must go
        for old_row, resources in held:
            seen = generations.get(view.uuids[old_row])
            if seen is not None and view.table.generation[old_row] >= seen:
                view.consume(old_row, resources)

    def _allocation_for(self, view, request, row, weight, weighing, unfit):
        """The row to claim and ``{provider: {class: amount}}`` there.

        A host that is one provider gives everything itself. For a tree
        (or a host a sharing provider serves) the solver finds which
        providers give what. If the host picked has no fitting layout
        (its columns only hold the tree's sums), the weighed hosts are
        walked best first, solving trees on the way, up to the first that
        fits: the solver runs on as few trees as the weighing allows.
        Misfits are marked ``unfit``.

        :returns: (row, weight, allocations), or (None, None, None) when
            no tree left fits
        """
        trees = view.tree_rows()
        if not trees[row]:
            return row, weight, {view.uuids[row]: request.resources}
        solve = self._tree_solver(view, request)
        found = solve(row)
        if found is not None:
            return row, weight, found.allocations
        unfit[row] = True
        rows, totals = weighing.rows, weighing.totals
        for i in _best_first(totals):
            other = int(rows[i])
            if unfit[other]:
                continue
            if not trees[other]:
                return other, float(totals[i]), {
                    view.uuids[other]: request.resources}
            found = solve(other)
            if found is not None:
                return other, float(totals[i]), found.allocations
            unfit[other] = True
        return None, None, None

    def _tree_solver(self, view, request):
        """``solve(row)``: the first candidate on that row's tree, or None;
        trees that had none for this request shape and have not changed
        since are not solved again (see :mod:`misfits`)."""
        source = tree_source.HostProviders(view)
        query = _candidate_query(request)
        shape = misfits.shape_of(query)
        index, membership = view.table.providers, view.table.aggregates
        memo = self.misfits

        def solve(row):
            root = view.uuids[row]
            # a host that is one provider, served by a pool, is not in the
            # index: its room is its row's (claims in flight included),
            # which the memo cannot see change; it is cheap to solve
            remembered = root in index
            if remembered and memo.known_unfit(
                    shape, root, lambda seen: misfits.unchanged(
                        seen, index, membership, source, root)):
                return None
            now = (misfits.inputs(index, membership, source, root)
                   if remembered else None)
            found = allocation_candidates.first_candidate(
                source, query, root)
            if found is None and remembered:
                memo.remember(shape, root, now)
            return found
        return solve

    def _weigh_again(self, view, request, cands):
        """Every host that passes the filters now, weighed."""
        outcome = self._filter(view, request, cands,
                               np.zeros(view.n, dtype=bool))
        if not outcome.mask.any():
            return weighers_base.Weighing(outcome.mask,
                                          rows=np.zeros(0, dtype=np.int64),
                                          totals=np.zeros(0))
        return self._weigh(view, request, outcome.mask)

    def _selections(self, view, request, claimed, return_alternates,
                    weighed=None):
        """``[claimed, alternates…]`` for one claimed instance.

        :param weighed: the Weighing to take alternates from; by default
            the one the instance was claimed from
        """
        consumer_uuid, row, weight, own_weighing, allocation = claimed
        chosen = selections.build(view, row, consumer_uuid,
                                  request.resources, weight, claimed=True,
                                  allocations=allocation)
        count = self.conf.scheduler.max_attempts - 1
        if not return_alternates or count <= 0:
            return [chosen]
        weighing = weighed if weighed is not None else own_weighing
        rows, totals = weighing.rows, weighing.totals
        return [chosen] + self._alternates(view, request, rows, totals, row,
                                           consumer_uuid, count)

    def _alternates(self, view, request, rows, totals, row, consumer_uuid,
                    count):
        trees = view.tree_rows()
        # a tree alternate needs its own allocation and may not fit: look
        # a little further down the list for those
        wanted = count * 3 if trees[rows].any() else count
        result = []
        solve = None
        for alt, alt_weight in selections.alternates(view, rows, totals,
                                                     row, wanted):
            alt_allocation = None
            if trees[alt]:
                solve = solve or self._tree_solver(view, request)
                found = solve(alt)
                if found is None:
                    continue
                alt_allocation = found.allocations
            result.append(selections.build(
                view, alt, consumer_uuid, request.resources, alt_weight,
                claimed=False, allocations=alt_allocation))
            if len(result) >= count:
                break
        return result

    def _filter(self, view, request, cands, failed, unfit=None):
        mask = cands.mask & ~failed
        if unfit is not None:
            mask &= ~unfit
        outcome = self.filters.run(view, request, mask,
                                   skip_filters=request.forced)
        outcome.removed = list(cands.removed) + outcome.removed
        if unfit is not None and unfit.any():
            outcome.removed.append((
                "no allocation candidate in its provider tree",
                int(np.count_nonzero(cands.mask & unfit & ~failed))))
        if failed.any():
            outcome.removed.append(("failed to claim",
                                    int(np.count_nonzero(
                                        cands.mask & failed))))
        return outcome

    def _weigh(self, view, request, mask):
        """The :class:`~.pipeline.weighers.Weighing` of ``mask``."""
        return self.weighers.weigh(view, request, mask)

    def _pick(self, weighing):
        """The row to claim: random among the best ``host_subset_size``.

        Ties are broken at random, never by row order: identical hosts are
        common (a fresh rack, a cloud filled evenly), and if every worker
        broke ties the same way they would all race for the same host.
        Only the best few are looked at (one partition), whatever the size.
        """
        if weighing.full is not None:
            # every row weighed: positions are rows (-inf off the mask)
            totals = weighing.full
            count = int(np.count_nonzero(weighing.mask))
            i = self._best(totals, count, lambda: weighing.rows)
            return i, weighing.weight(i)
        rows, totals = weighing.rows, weighing.totals
        i = self._best(totals, len(rows), lambda: np.arange(len(rows)))
        return int(rows[i]), float(totals[i])

    def _best(self, totals, count, everyone):
        """The position in ``totals`` to claim, among ``count`` finite
        values (``everyone()``: their positions)."""
        fs = self.conf.filter_scheduler
        if fs.shuffle_best_same_weighed_hosts:
            best = np.flatnonzero(totals == totals.max())
            if len(best) >= fs.host_subset_size:
                return int(self._rng.choice(best))
        subset = min(fs.host_subset_size, count)
        if count > subset:
            # the subset-th best weight (for one host, a plain maximum)
            kth = totals.max() if subset == 1 else np.partition(
                totals, len(totals) - subset)[len(totals) - subset]
            better = np.flatnonzero(totals > kth)
            tied = np.flatnonzero(totals == kth)
            need = subset - len(better)
            if need < len(tied):
                # sampling a range costs O(need), not O(ties)
                tied = tied[self._rng.sample(range(len(tied)), need)]
            top = np.concatenate([better, tied])
        else:
            top = everyone()
        return int(top[self._rng.randrange(len(top))])

    def _no_valid_host(self, request, outcome):
        self.counters.eliminated(outcome.removed)
        summary = outcome.summary()
        LOG.info("No valid host for %d instance(s) of flavor %s: %s",
                 request.spec.num_instances, request.spec.flavor.name,
                 summary)
        raise exception.NoValidHost(reason=summary)

    def _refresh_after_failure(self, request, allocation, exc):
        """Re-read what the failed claim found changed."""
        for uuid, (generation, usage) in db_providers.usages_by_uuid(
                self.db, list(allocation)).items():
            self.cache.apply_usage(uuid, generation, usage)
        group = request.instance_group
        if group is not None and isinstance(
                exc, exception.GroupPolicyViolation):
            group.hosts.clear()
            group.hosts.update(self.lookup.group_hosts(group.uuid))

    def _claimed(self, states):
        for state in states:
            self.cache.apply_usage(state.uuid, state.generation, state.usages)
        if self.conf.scheduler.broadcast_claims and states:
            now = time.time()
            self._broadcast([usage_obj.ProviderUsage(
                resource_provider_uuid=s.uuid, generation=s.generation,
                usages=s.usages, changed_at=now) for s in states])

    def _roll_back(self, consumer_uuids, best_effort=False):
        for uuid in consumer_uuids:
            try:
                self._claimed(self.claimer.release(uuid))
            except Exception:
                if not best_effort:
                    raise
                LOG.error("Could not roll back the claim of %s; the caller "
                          "must release it (or retry with the same uuid, "
                          "which replaces it)", uuid)
        if consumer_uuids:
            LOG.info("Rolled back %d claim(s) of an all-or-nothing request",
                     len(consumer_uuids))

    # -- after a failed build ---------------------------------------------

    @_database_outage_is_retryable
    def reclaim(self, instance_uuid, failed_selection, alternates):
        """Move an instance whose build failed to its first fitting alternate.

        The failed host's allocation is released first; then each alternate
        is claimed in turn with its own allocation request and the
        instance's server-group rule. Returns the claimed Selection.

        :raises: MaxRetriesExceeded, with nothing left allocated
        """
        owner = self.claimer.consumer_info(instance_uuid)
        self._claimed(self.claimer.release(instance_uuid))
        LOG.info("Build of %s failed on %s; released, trying %d alternate(s)",
                 instance_uuid, failed_selection.service_host
                 if failed_selection else "?", len(alternates))
        reasons = []
        for alt in alternates:
            try:
                states = self.claimer.claim(
                    instance_uuid, alt.allocation_request.as_mapping(),
                    project_id=owner.project_id, user_id=owner.user_id,
                    group=owner.group)
            except _CONSUMER_RACE:
                raise
            except _NEXT_CANDIDATE as exc:
                reasons.append("%s: %s" % (alt.service_host, exc))
                continue
            self._claimed(states)
            LOG.info("Re-claimed %s on alternate %s", instance_uuid,
                     alt.service_host)
            alt = alt.obj_clone()
            alt.claimed = True
            alt.consumer_uuid = instance_uuid
            return alt
        raise exception.MaxRetriesExceeded(
            instance_uuid=instance_uuid,
            reason="; ".join(reasons) or "no alternates were given")

    @_database_outage_is_retryable
    def release(self, consumer_uuid):
        """Free everything the consumer holds; a no-op if it holds nothing."""
        states = self.claimer.release(consumer_uuid)
        self._claimed(states)
        if states:
            LOG.info("Released %s from %d provider(s)", consumer_uuid,
                     len(states))
        return bool(states)

    # -- Placement's questions ----------------------------------------------

    def get_allocation_candidates(self, spec, limit=1000):
        """Every way ``spec`` could be allocated now, best hosts first.

        Placement's ``GET /allocation_candidates`` on this worker's cache:
        the candidate steps and the resource rule apply (no Nova filters),
        trees and sharing providers are solved exactly, and providers that
        are no host (a sharing pool) can answer alone.

        :returns: list of AllocationCandidate objects, at most ``limit``
        :raises: InvalidRequest
        """
        request = request_mod.from_spec(
            spec, [spec.instance_uuid or uuidutils.generate_uuid()],
            self.lookup)
        view = self._view()
        cands = candidates.for_request(view, request, self.conf)
        fit = resource_filter.ResourceFilter(self.conf)
        mask = cands.mask & fit.passes_columns(view, request)
        weighing = self._weigh(view, request, mask)
        order = weighing.rows[np.argsort(-weighing.totals, kind="stable")]
        source = tree_source.HostProviders(view)
        query = _candidate_query(request)
        trees = view.tree_rows()
        found = []
        seen = set()

        def add(candidate):
            key = _allocation_key(candidate.allocations)
            if key not in seen:
                seen.add(key)
                found.append(candidate)
            return len(found) >= limit

        for row in order:
            if not trees[row]:
                if add(allocation_candidates.AllocationCandidate(
                        root_uuid=view.uuids[row],
                        allocations={view.uuids[row]: request.resources},
                        mappings={g.suffix: (view.uuids[row],)
                                  for g in request.groups})):
                    break
                continue
            if any(add(c) for c in allocation_candidates.iter_candidates(
                    source, query, view.uuids[row])):
                break
        else:
            for uuid in view.table.sharing_providers:
                if any(add(c) for c in allocation_candidates.iter_candidates(
                        source, query, uuid)):
                    break
        return [_candidate_obj(c) for c in found]

    @_database_outage_is_retryable
    def claim_allocations(self, consumer_uuid, allocation_request,
                          project_id=None, user_id=None):
        """Claim exactly ``allocation_request`` for a consumer, replacing
        what it held (Placement's ``PUT /allocations/{consumer}``).

        :raises: InvalidRequest, CapacityExceeded, ProviderNotFound,
            ClaimConflict
        """
        allocation = _allocation_map(allocation_request)
        states = self.claimer.claim(consumer_uuid, allocation,
                                    project_id=project_id, user_id=user_id)
        self._claimed(states)
        LOG.info("Claimed for %s on %s", consumer_uuid,
                 ", ".join(sorted(allocation)))
        return True

    # -- moves ----------------------------------------------------------------

    @_database_outage_is_retryable
    def move_claim(self, spec, instance_uuid, migration_uuid,
                   return_alternates=True):
        """Choose and claim a destination for a moving instance.

        The instance's current allocations (the source) pass to the
        migration consumer in the same transaction that claims the
        destination for the instance, so both stay counted until
        ``confirm_move`` or ``revert_move``. Resizing on the same host
        needs room for both, as with Placement. Calling it again (a lost
        reply) replaces the destination and leaves the source alone.

        :returns: ``[claimed, alternates…]`` for the instance
        :raises: InvalidRequest, NoValidHost (nothing changed)
        """
        if instance_uuid == migration_uuid:
            raise exception.InvalidRequest(
                reason="the migration uuid must differ from the instance's")
        # a duplicate delivered after the move ended (the claim
        # transaction checks again; this saves choosing for nothing)
        self.claimer.refuse_finished_move(migration_uuid)
        request = request_mod.from_spec(spec, [instance_uuid], self.lookup)
        view = self._view()
        held = {}
        if self.claimer.allocations_of([migration_uuid]):
            # a retried move: the destination claimed before is the
            # instance's to replace; the source stays with the migration
            held = self._count_out_previous_claims(view, request,
                                                   [instance_uuid])
        else:
            self._count_out_moving_member(view, request, instance_uuid)
        cands = candidates.for_request(view, request, self.conf)
        claim = functools.partial(self.claimer.move_claim,
                                  migration_uuid=migration_uuid)
        claimed = self._claim_one(view, request, cands, instance_uuid,
                                  held.get(instance_uuid, ()), claim=claim)
        placed = self._selections(view, request, claimed,
                                  return_alternates)
        LOG.info("Move of %s (migration %s): destination %s claimed",
                 instance_uuid, migration_uuid, placed[0].service_host)
        return placed

    @_database_outage_is_retryable
    def confirm_move(self, migration_uuid):
        """Free the source a move held; False if there was nothing."""
        states = self.claimer.confirm_move(migration_uuid)
        self._claimed(states)
        LOG.info("Move %s confirmed: %s", migration_uuid,
                 "source freed" if states else "nothing held")
        return bool(states)

    @_database_outage_is_retryable
    def revert_move(self, instance_uuid, migration_uuid):
        """Give the instance its source back and free the destination;
        False when the migration held nothing (already reverted or
        confirmed)."""
        states = self.claimer.revert_move(instance_uuid, migration_uuid)
        self._claimed(states)
        LOG.info("Move %s of %s reverted: %s", migration_uuid, instance_uuid,
                 "source restored" if states else "nothing held")
        return bool(states)

    # -- operators --------------------------------------------------------

    def explain(self, spec, limit=10):
        """Where ``spec`` would go and why, without claiming.

        :returns: an Explanation
        :raises: InvalidRequest
        """
        return explain_mod.explain(self, spec, limit=limit)

    # -- aggregates -------------------------------------------------------

    def reload_aggregates(self):
        """Re-read every aggregate from the database into the cache."""
        loaded = db_aggregates.load_all(self.db)
        self.cache.apply_aggregates(aggregates.AggregateSet(loaded))
        return loaded

    def set_aggregate(self, aggregate):
        """Create or replace an aggregate (hosts and metadata).

        :raises: InvalidRequest; HostNotFound (one) when it adds a host no
            agent ever reported (nothing is stored)
        """
        aggregates.validate(aggregate)
        created = db_aggregates.save(self.db, aggregate)
        self.reload_aggregates()
        LOG.info("%s aggregate %s (%s): %d host(s), metadata %s",
                 "Created" if created else "Replaced", aggregate.uuid,
                 aggregate.name, len(aggregate.hosts),
                 dict(aggregate.metadata))
        return aggregate

    def delete_aggregate(self, aggregate_uuid):
        """Delete an aggregate; False when there was none."""
        deleted = db_aggregates.delete(self.db, aggregate_uuid)
        self.reload_aggregates()
        if deleted:
            LOG.info("Deleted aggregate %s", aggregate_uuid)
        return deleted

    def get_aggregates(self):
        return db_aggregates.load_all(self.db)

    def get_host_states(self, hosts=None):
        return self.cache.host_states(self.conf.scheduler.service_down_time,
                                      hosts)

    def get_statistics(self):
        values = self.counters.values
        lag_p50, lag_p99 = self.counters.lag_percentiles()
        return statistics_obj.SchedulerStatistics(
            worker=self.worker_name, hosts=len(self.cache),
            requests=values["requests"], placements=values["placements"],
            no_valid_host=values["no_valid_host"],
            claim_conflicts=self.claimer.conflicts,
            reports_applied=values["reports_applied"],
            reports_stale=values["reports_stale"],
            messages_rejected=values["messages_rejected"],
            filter_eliminations=dict(self.counters.eliminations),
            peer_updates=values["peer_updates"],
            peer_lag_p50_ms=lag_p50, peer_lag_p99_ms=lag_p99,
            rpc_api_version=rpcapi.RPC_API_VERSION,
            **self.cache.report_ages())


def _candidate_query(request):
    """The request as the allocation-candidates solver takes it."""
    return request.memo("candidate query", lambda: (
        allocation_candidates.CandidateQuery(
            groups=request.groups, group_policy=request.group_policy,
            same_subtree=request.same_subtree,
            root_required=request.root_required,
            root_forbidden=request.root_forbidden)))


def _uncount_member(group, host):
    """One member fewer on ``host`` in a request's GroupState."""
    if group is not None and group.hosts.get(host):
        group.hosts[host] -= 1
        if not group.hosts[host]:
            del group.hosts[host]


def _group_claim(request):
    group = request.instance_group
    if group is None or not group.is_hard:
        return None
    return db_allocations.GroupClaim(group.uuid, group.policy,
                                     group.max_per_host)


def _report_result(uuid, applied, saved):
    """A ReportResult; refusals keyed by class for the reported provider,
    ``<child uuid>:<class>`` for a child (``<child uuid>`` alone when a
    removed child had to stay because it holds allocations)."""
    refused = {}
    for provider, reasons in saved.refused.items():
        for rc, reason in reasons.items():
            if provider == uuid:
                key = rc
            elif rc == "provider":
                key = provider
            else:
                key = "%s:%s" % (provider, rc)
            refused[key] = reason
    return provider_obj.ReportResult(
        provider_uuid=uuid, applied=bool(applied),
        generation=saved.generations.get(uuid), refused=refused)


def _with_stored_inventories(report, stored):
    """``report`` with the inventories the database holds."""
    changes = {}
    if report.uuid in stored and stored[report.uuid] != report.inventories:
        changes["inventories"] = stored[report.uuid]
    if any(c.uuid in stored for c in report.children):
        changes["children"] = tuple(
            dataclasses.replace(c, inventories=stored[c.uuid])
            if c.uuid in stored else c for c in report.children)
    return dataclasses.replace(report, **changes) if changes else report


def _allocation_key(allocations):
    return tuple(sorted((uuid, tuple(sorted(amounts.items())))
                        for uuid, amounts in allocations.items()))


def _candidate_obj(candidate):
    return provider_obj.AllocationCandidate(
        root_provider_uuid=candidate.root_uuid,
        allocation_request=selections.tree_allocation_request(
            candidate.allocations),
        mappings={suffix: list(uuids)
                  for suffix, uuids in candidate.mappings.items()})


def _allocation_map(allocation_request):
    """An AllocationRequest checked: ``{provider: {class: amount}}``."""
    result = {}
    for item in allocation_request.allocations:
        if item.resource_provider_uuid in result:
            raise exception.InvalidRequest(
                reason="provider %s appears twice in the allocation request"
                       % item.resource_provider_uuid)
        amounts = {}
        for rc, amount in item.resources.items():
            request_mod.validate_resource_class(rc)
            if amount <= 0:
                raise exception.InvalidRequest(
                    reason="%s: amounts must be positive, got %d"
                           % (rc, amount))
            amounts[rc] = amount
        if not amounts:
            raise exception.InvalidRequest(
                reason="provider %s is given no resources"
                       % item.resource_provider_uuid)
        result[item.resource_provider_uuid] = amounts
    if not result:
        raise exception.InvalidRequest(reason="the allocation request is "
                                              "empty")
    return result


def _best_first(totals, first=16):
    """Positions in ``totals``, best first (equal ones in position order),
    sorted a growing chunk at a time: a walk that usually stops within the
    first few hosts then never sorts them all."""
    seen = set()
    count = first
    while True:
        if count * 2 >= len(totals):
            chunk = np.argsort(-totals, kind="stable")
        else:
            chunk = np.argpartition(-totals, count)[:count]
            # best first; equal weights in position order
            chunk = chunk[np.lexsort((chunk, -totals[chunk]))]
        for i in chunk.tolist():
            # NOTE: equal weights across a chunk's edge may come in a
            # later chunk; none comes twice
            if i not in seen:
                seen.add(i)
                yield i
        if len(chunk) == len(totals):
            return
        count *= 4
