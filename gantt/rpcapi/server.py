"""SchedulerEndpoint: unpacks RPC calls and hands them to the manager.

No scheduling logic lives here: each method checks that its arguments are
the objects the wire contract promises and calls the manager. Every error a
caller can act on is listed in ``expected_exceptions`` so that it reaches
the caller as its own type and is not logged as a server fault.
"""

import logging

import oslo_messaging as messaging

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node as compute_node_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.objects import selection as selection_obj
from gantt.objects import usage as usage_obj

LOG = logging.getLogger(__name__)

_CALL_ERRORS = (exception.NoValidHost, exception.InvalidRequest,
                exception.MaxRetriesExceeded, exception.ClaimConflict,
                exception.ProviderNotFound, exception.ServiceUnavailable)


def _expect(value, cls, name):
    if not isinstance(value, cls):
        raise exception.InvalidRequest(
            reason="%s must be a %s object, got %s" % (
                name, cls.__name__, type(value).__name__))
    return value


def _expect_list(values, cls, name):
    if not isinstance(values, (list, tuple)):
        raise exception.InvalidRequest(
            reason="%s must be a list, got %s" % (name, type(values).__name__))
    return [_expect(v, cls, name + "[]") for v in values]


def _expect_uuids(values, name):
    if not isinstance(values, (list, tuple)) or not all(
            isinstance(v, str) for v in values):
        raise exception.InvalidRequest(
            reason="%s must be a list of uuid strings" % name)
    return list(values)


class SchedulerEndpoint:
    # 1.2: explain and aggregates (see the history in client.py); the
    # client still sends 1.0 calls at 1.0, so older servers keep serving
    target = messaging.Target(version="1.2")

    def __init__(self, manager, ready_timeout=120):
        self.manager = manager
        self.ready_timeout = ready_timeout

    def _wait_ready(self):
        # a worker serves calls only once its cache is loaded
        self.manager.ready.wait(self.ready_timeout)

    @messaging.expected_exceptions(exception.InvalidRequest)
    def update_resource_stats(self, ctxt, compute_node):
        self.manager.update_resource_stats(
            _expect(compute_node, compute_node_obj.ComputeNode,
                    "compute_node"))

    @messaging.expected_exceptions(*_CALL_ERRORS)
    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        uuids = _expect_uuids(instance_uuids, "instance_uuids")
        self._wait_ready()
        return self.manager.select_destinations(
            spec, uuids, return_alternates=bool(return_alternates))

    @messaging.expected_exceptions(*_CALL_ERRORS)
    def reclaim(self, ctxt, instance_uuid, failed_selection, alternates):
        if failed_selection is not None:
            _expect(failed_selection, selection_obj.Selection,
                    "failed_selection")
        alts = _expect_list(alternates, selection_obj.Selection, "alternates")
        if not isinstance(instance_uuid, str):
            raise exception.InvalidRequest(reason="instance_uuid must be a "
                                                  "string")
        self._wait_ready()
        return self.manager.reclaim(instance_uuid, failed_selection, alts)

    @messaging.expected_exceptions(*_CALL_ERRORS)
    def release(self, ctxt, consumer_uuid):
        if not isinstance(consumer_uuid, str):
            raise exception.InvalidRequest(reason="consumer_uuid must be a "
                                                  "string")
        return self.manager.release(consumer_uuid)

    @messaging.expected_exceptions(exception.InvalidRequest)
    def get_host_states(self, ctxt, hosts=None):
        if hosts is not None:
            hosts = _expect_uuids(hosts, "hosts")
        self._wait_ready()
        return self.manager.get_host_states(hosts)

    @messaging.expected_exceptions(exception.InvalidRequest)
    def get_statistics(self, ctxt):
        return self.manager.get_statistics()

    @messaging.expected_exceptions(exception.InvalidRequest)
    def provider_usage_changed(self, ctxt, usages):
        self.manager.apply_peer_usage(
            _expect_list(usages, usage_obj.ProviderUsage, "usages"))

    # -- 1.2 --------------------------------------------------------------

    @messaging.expected_exceptions(exception.InvalidRequest)
    def explain(self, ctxt, request_spec, limit=10):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        if not isinstance(limit, int) or isinstance(limit, bool) or (
                limit < 0):
            raise exception.InvalidRequest(
                reason="limit must be a non-negative integer")
        self._wait_ready()
        return self.manager.explain(spec, limit=limit)

    @messaging.expected_exceptions(exception.InvalidRequest)
    def set_aggregate(self, ctxt, aggregate):
        return self.manager.set_aggregate(
            _expect(aggregate, aggregate_obj.Aggregate, "aggregate"))

    @messaging.expected_exceptions(exception.InvalidRequest)
    def delete_aggregate(self, ctxt, aggregate_uuid):
        if not isinstance(aggregate_uuid, str):
            raise exception.InvalidRequest(
                reason="aggregate_uuid must be a string")
        return self.manager.delete_aggregate(aggregate_uuid)

    @messaging.expected_exceptions(exception.InvalidRequest)
    def get_aggregates(self, ctxt):
        return self.manager.get_aggregates()

    def aggregates_changed(self, ctxt):
        # a cast: nobody to answer; a worker that cannot read the database
        # now keeps its aggregates until the next change or restart
        try:
            self.manager.reload_aggregates()
        except Exception as exc:
            LOG.warning("Could not reload the aggregates: %s", exc)
