"""SchedulerClient: what agents, conductors and operators call.

RPC API version history:

* 1.0 - Initial version: update_resource_stats (fanout cast),
  select_destinations, reclaim, release, get_host_states, get_statistics
  (calls), provider_usage_changed (fanout cast between workers)
* 1.2 - Added explain, set_aggregate, delete_aggregate, get_aggregates
  (calls) and aggregates_changed (fanout cast)
"""

import oslo_messaging as messaging

from gantt import context as gantt_context
from gantt import rpc
from gantt import rpcapi


class SchedulerClient:
    def __init__(self, transport, topic="gantt-scheduler", timeout=None):
        target = messaging.Target(exchange=rpcapi.EXCHANGE, topic=topic,
                                  version=rpcapi.RPC_API_VERSION)
        self._client = rpc.get_client(transport, target, timeout=timeout)

    @classmethod
    def from_conf(cls, conf, transport=None, timeout=None):
        transport = transport or rpc.get_transport(conf)
        return cls(transport, conf.scheduler.topic, timeout=timeout)

    @staticmethod
    def _ctxt(ctxt):
        return ctxt if ctxt is not None else gantt_context.get_admin_context()

    def update_resource_stats(self, ctxt, compute_node):
        """Report a host's full state to every worker (fanout cast)."""
        self._client.prepare(fanout=True).cast(
            self._ctxt(ctxt), "update_resource_stats",
            compute_node=compute_node)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        """``[[claimed, alternate, …], …]``, one list per instance.

        :raises: NoValidHost, InvalidRequest
        """
        return self._client.call(
            self._ctxt(ctxt), "select_destinations",
            request_spec=request_spec, instance_uuids=list(instance_uuids),
            return_alternates=return_alternates)

    def reclaim(self, ctxt, instance_uuid, failed_selection, alternates):
        """Claim the first alternate that still fits after a failed build.

        :raises: MaxRetriesExceeded (nothing is left allocated)
        """
        return self._client.call(
            self._ctxt(ctxt), "reclaim", instance_uuid=instance_uuid,
            failed_selection=failed_selection, alternates=list(alternates))

    def release(self, ctxt, consumer_uuid):
        """Free a consumer's allocations; True if it held any."""
        return self._client.call(self._ctxt(ctxt), "release",
                                 consumer_uuid=consumer_uuid)

    def get_host_states(self, ctxt, hosts=None):
        return self._client.call(self._ctxt(ctxt), "get_host_states",
                                 hosts=hosts)

    def get_statistics(self, ctxt):
        return self._client.call(self._ctxt(ctxt), "get_statistics")

    def provider_usage_changed(self, ctxt, usages):
        """Tell every worker the usage a claim or release left behind."""
        self._client.prepare(fanout=True).cast(
            self._ctxt(ctxt), "provider_usage_changed", usages=usages)

    # -- 1.2: explain and aggregates ---------------------------------------

    def explain(self, ctxt, request_spec, limit=10):
        """What each filter removed and how the best hosts weighed, for
        ``request_spec``, without claiming anything (an Explanation).

        :raises: InvalidRequest
        """
        return self._client.prepare(version="1.2").call(
            self._ctxt(ctxt), "explain", request_spec=request_spec,
            limit=limit)

    def set_aggregate(self, ctxt, aggregate):
        """Create or replace an aggregate (its hosts and metadata).

        One worker stores it; every worker then re-reads the aggregates
        (fanout ``aggregates_changed``).

        :raises: InvalidRequest
        """
        stored = self._client.prepare(version="1.2").call(
            self._ctxt(ctxt), "set_aggregate", aggregate=aggregate)
        self.aggregates_changed(ctxt)
        return stored

    def delete_aggregate(self, ctxt, aggregate_uuid):
        """Delete an aggregate; False when there was none."""
        deleted = self._client.prepare(version="1.2").call(
            self._ctxt(ctxt), "delete_aggregate",
            aggregate_uuid=aggregate_uuid)
        self.aggregates_changed(ctxt)
        return deleted

    def get_aggregates(self, ctxt):
        return self._client.prepare(version="1.2").call(
            self._ctxt(ctxt), "get_aggregates")

    def aggregates_changed(self, ctxt):
        """Tell every worker to re-read the aggregates from the database."""
        self._client.prepare(version="1.2", fanout=True).cast(
            self._ctxt(ctxt), "aggregates_changed")
