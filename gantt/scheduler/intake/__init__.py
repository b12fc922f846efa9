"""StatsService: agents' reports and providers, into the database and
the worker's cache.

    report -> validate -> database (when due; sequence-guarded) -> cache

Reports come from the stats intake's threads (casts, in batches) and from
calls (``report_resource_stats``, which always stores and answers what was
refused). Standalone providers (sharing pools, address pools) are stored,
then re-read. Peers' committed usage comes in by cast, and a periodic sync
re-reads every provider's usage from the database, which wins. The
package's other modules parse, judge and batch what this service takes.

Just over 400 lines: the REST-made trees' reload and the topology levels'
start-up check joined the service's one method per RPC entry; each stays
a few lines calling out to ``rest_trees`` and ``gantt.db.levels``; and
the lock that makes the providers' re-reads take turns, which must sit
beside both the re-read and the retirement it orders.
"""

import dataclasses
import datetime
import logging
import threading
import time

from oslo_db import exception as db_exc
from oslo_utils import timeutils

from gantt import exception
from gantt.db import host_load
from gantt.db import hosts as db_hosts
from gantt.db import levels as db_levels
from gantt.db import reports as db_reports
from gantt.db import retire as db_retire
from gantt.objects import provider as provider_obj
from gantt.scheduler.intake import host_identity
from gantt.scheduler.intake import report_rules
from gantt.scheduler.intake import rest_trees
from gantt.scheduler.state import load as load_mod
from gantt.scheduler.state import topology as topology_mod
from gantt.scheduler.state import update as update_mod

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ReportOutcome:
    """What became of one report."""

    applied: bool             # taken into the cache (newer than its copy)
    saved: object             # the database's SaveResult; None: not stored
                              # (not due, or the database is unreachable)


class StatsService:
    """Reports, standalone providers and peers' usage, into the cache."""

    def __init__(self, conf, db, cache, counters, ready, *,
                 load_aggregates):
        self.conf = conf
        self.db = db
        self.cache = cache
        self.counters = counters
        self.ready = ready
        self.refusals = host_identity.RefusalLog(counters)
        self._load_aggregates = load_aggregates
        self.topology = topology_mod.Topology(conf.topology.levels)
        self.trees = rest_trees.Trees(conf, db, cache)
        # one re-read of the standalone providers at a time, a retirement
        # between two (see reload_providers)
        self._providers_lock = threading.Lock()

    def check_location(self, text):
        """A reported location's levels against ``[topology] levels``.

        :raises: InvalidLocation
        """
        if text is not None:
            self.topology.parse(text)

    def load_cache(self):
        """Fill the cache from the database; the worker is then ready.

        Reports cast while this runs are applied as they come; the cache
        keeps whichever of a stored and a cast report is newer.
        """
        started = time.monotonic()
        self.trees.start()
        # aggregates first: hosts they name join them as they are loaded
        self._load_aggregates()
        stored = host_load.load_host_columns(self.db)
        # in bulk: as apply_report (persisted) and apply_usage of each
        self.cache.load(stored, self.conf.api.compute_node_down_time)
        self.cache.load_boot_ids(db_hosts.boot_ids(self.db))
        self.reload_providers()
        self.ready.set()
        LOG.info("Host cache loaded: %d hosts from the database in %.2fs",
                 len(stored), time.monotonic() - started)
        self._log_topology()

    def _log_topology(self):
        """The levels in force (recorded in the database: a change since
        the last worker started is logged as one, old -> new), and the
        hosts whose location names a level they do not have."""
        levels = self.topology.levels[:-1]
        strays = self.cache.hosts_outside(self.topology)
        before = db_levels.record(self.db, levels)
        if before is not None and before != levels:
            LOG.warning("Topology levels changed: %s -> %s; %d host(s) "
                        "have a location naming a level no longer listed",
                        ",".join(before) or "(none)",
                        ",".join(levels) or "(none)", len(strays))
        LOG.info("Topology levels: %s", ",".join(self.topology.levels))
        for host, location in strays[:20]:
            LOG.warning("Host %s is at %s: level(s) %s are not in "
                        "[topology] levels; policies there ignore it",
                        host, location, ",".join(
                            self.topology.unknown_levels(location)))
        if len(strays) > 20:
            LOG.warning("... and %d more hosts outside the levels",
                        len(strays) - 20)

    def resync(self):
        """The periodic repair: usage from the database, then aggregates,
        providers and the trees whose change casts may have been lost."""
        _contradicted, gone = self._sync_usage()
        self._load_aggregates()
        self.reload_providers()
        self.trees.resync(gone, self.reload_providers)

    # -- reports ----------------------------------------------------------

    def update_resource_stats(self, node):
        """Store an agent's report; False if it was not newer than ours.

        :raises: InvalidRequest (nothing is stored)
        """
        return self.take(node).applied

    def report_resource_stats(self, node, force=False):
        """Store an agent's report and say what became of it.

        Unlike the fanout cast, the report is always written to the
        database, so that the answer tells the agent which inventory
        changes were refused (Placement's 409 "inventory in use").

        :param force: take inventories even below what is allocated
        :returns: a ReportResult
        :raises: InvalidRequest (nothing is stored)
        """
        outcome = self.take(node, force=force, persist=True)
        saved = outcome.saved
        if saved is None:
            raise exception.ServiceUnavailable(
                reason="the database is unreachable; the report was "
                       "cached but not stored")
        return _report_result(node.uuid, outcome.applied or saved.applied,
                              saved)

    def take(self, node, *, force=False, persist=False):
        """Validate, persist when due (always with ``persist``), and cache
        a ComputeNode report.

        :returns: a :class:`ReportOutcome`
        :raises: InvalidRequest (nothing is stored)
        """
        report_rules.validate_node(node)
        self.check_location(node.location)
        report = update_mod.HostUpdate.from_compute_node(
            node, received_at=self.cache.now())
        saved = None
        if persist or self.cache.needs_persisting(
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
        return ReportOutcome(applied, saved)

    def _save_report(self, node, force=False):
        """Store a report; None if the database is unreachable.

        Without the database the worker still takes the report into its
        cache (hosts stay up, filters stay right); it is stored again from
        the agent's next report, which carries the full state anyway.
        """
        try:
            saved = db_reports.save_report(self.db, node,
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

    def forget_report_sequence(self, provider_uuid):
        """Another worker reset a host's stored sequence: this cache takes
        the host's next report whatever its sequence too."""
        self.cache.reset_sequence(provider_uuid)

    # -- standalone providers ---------------------------------------------

    def update_provider(self, report):
        """Store a standalone provider (a sharing storage pool, a network
        segment's address pool…) and take it into the cache.

        :returns: a ReportResult
        :raises: InvalidRequest
        """
        provider = report.provider
        report_rules.validate_provider(provider)
        report_rules.validate_standalone(
            report, self.conf.wire.max_report_capabilities)
        self.check_location(report.location)
        saved = db_reports.save_provider(self.db, report,
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
        deleted = db_reports.delete_provider(self.db, provider_uuid)
        self.reload_providers()
        if deleted:
            LOG.info("Deleted provider %s", provider_uuid)
        return bool(deleted)

    def reload_providers(self):
        """Re-read the standalone providers (and their usage).

        One at a time (the start-up load, the sync, each report's and each
        ``providers_changed`` re-read): the providers missing from a read
        are forgotten, and a read older than another's must not forget
        what that one added meanwhile (a provider reported between the
        two; it would come back at the next re-read, on a row of its own,
        the forgotten one left as a row of no kind).
        """
        with self._providers_lock:
            return self._reload_providers()

    def _reload_providers(self):
        stored = host_load.load_standalone_providers(self.db)
        known = {p.uuid for p in stored}
        for gone in {p.uuid for p in self.cache.standalone_providers()} - (
                known):
            self.cache.remove_provider(gone)
        for p in stored:
            self.cache.apply_provider(
                load_mod.stored_provider(p, p.uuid), p.report_sequence,
                p.boot_id, details=update_mod.Standalone(
                    kind=p.kind, service=p.service,
                    availability_zone=p.availability_zone,
                    capabilities=p.capabilities,
                    instance_uuid=p.instance_uuid, location=p.location),
                received_at=_epoch(p.received_at))
            self.cache.apply_usage(p.uuid, p.generation, p.usage)
        return stored

    # -- trees written through the REST API (see rest_trees) ------------

    def reload_trees(self, uuids):
        """Re-read the trees holding the providers ``uuids`` (the
        ``trees_changed`` cast); see :meth:`.rest_trees.Trees.reload`."""
        return self.trees.reload(uuids, self.reload_providers)

    def host_seen(self, host):
        """A sign of life of ``host`` that is not a report (Nova's
        instance-info casts); see :meth:`.rest_trees.Trees.seen`."""
        self.trees.seen(host)

    def retire_provider(self, provider_uuid, generation):
        """Delete a vacant standalone provider at ``generation`` (see
        :mod:`gantt.db.retire`) and forget it here; the caller tells the
        other workers (``providers_changed``).

        :returns: True
        :raises: ProviderConflict, ProviderInUse, ProviderNotFound,
            InvalidRequest (nothing changed)
        """
        kind = db_retire.retire(self.db, provider_uuid, generation)
        with self._providers_lock:
            # not between a re-read before the retirement and its apply
            self.cache.remove_provider(provider_uuid)
        LOG.info("Retired %s provider %s at generation %d", kind,
                 provider_uuid, generation)
        return True

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
        return self._sync_usage()[0]

    def _sync_usage(self):
        """:meth:`sync_usage`; ``(contradicted, gone)``: how many
        providers contradicted the database, and the compute nodes held
        that it no longer has (``HostStateCache.gone_hosts``)."""
        self.cache.begin_usage_sync()
        stored = host_load.usages_by_uuid(self.db)
        gone = self.cache.gone_hosts(stored)
        contradicted = self.cache.finish_usage_sync(stored)
        if contradicted:
            LOG.warning("Usage sync: %d provider(s) held a usage the "
                        "database does not (a forged or corrupt "
                        "provider_usage_changed cast?), now the database's: "
                        "%s", len(contradicted),
                        ", ".join(sorted(contradicted)[:10]))
        return len(contradicted), gone


def _epoch(stored_at):
    """Epoch seconds of a naive UTC datetime read from the database."""
    if stored_at is None:
        return None
    return stored_at.replace(tzinfo=datetime.UTC).timestamp()


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
