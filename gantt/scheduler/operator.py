"""OperatorService: what operators ask a worker and tell it.

Aggregates (stored in the database, then taken into this worker's cache;
the client tells the other workers), the cached host states, the worker's
statistics, and ``explain`` (the pipeline run with every step recorded,
nothing claimed).
"""

import logging

from oslo_utils import uuidutils

from gantt import rpcapi
from gantt.db import aggregates as db_aggregates
from gantt.objects import statistics as statistics_obj
from gantt.scheduler import explain as explain_mod
from gantt.scheduler.state import aggregates

LOG = logging.getLogger(__name__)


class OperatorService:
    """Aggregates, host states, statistics and explain."""

    def __init__(self, conf, db, cache, counters, *, claims, placer,
                 worker_name="gantt"):
        self.conf = conf
        self.db = db
        self.cache = cache
        self.counters = counters
        self.claims = claims
        self.placer = placer
        self.worker_name = worker_name

    def explain(self, spec, limit=10):
        """Where ``spec`` would go and why, without claiming.

        :returns: an Explanation
        :raises: InvalidRequest
        """
        cycle = self.placer.cycle(spec, [uuidutils.generate_uuid()])
        return explain_mod.explain(self.placer.route(cycle).pipeline, cycle,
                                   limit=limit)

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

    # -- reads ------------------------------------------------------------

    def get_host_states(self, hosts=None):
        return self.cache.host_states(
            self.conf.scheduler.service_down_time, hosts,
            vacancy_kinds=frozenset(self.conf.scheduler.vacancy_kinds))

    def get_statistics(self):
        values = self.counters.values
        lag_p50, lag_p99 = self.counters.lag_percentiles()
        return statistics_obj.SchedulerStatistics(
            worker=self.worker_name, hosts=len(self.cache),
            requests=values["requests"], placements=values["placements"],
            no_valid_host=values["no_valid_host"],
            claim_conflicts=self.claims.conflicts,
            reports_applied=values["reports_applied"],
            reports_stale=values["reports_stale"],
            messages_rejected=values["messages_rejected"],
            filter_eliminations=dict(self.counters.eliminations),
            peer_updates=values["peer_updates"],
            peer_lag_p50_ms=lag_p50, peer_lag_p99_ms=lag_p99,
            rpc_api_version=rpcapi.RPC_API_VERSION,
            **self.cache.report_ages())
