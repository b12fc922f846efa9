"""SchedulerClient: what agents, conductors and operators call.

RPC API version history:

* 1.0 - Initial version: update_resource_stats (fanout cast),
  select_destinations, reclaim, release, get_host_states, get_statistics
  (calls), provider_usage_changed (fanout cast between workers)
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
