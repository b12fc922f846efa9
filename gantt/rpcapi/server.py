"""SchedulerEndpoint: unpacks RPC calls and hands them to the services.

No scheduling logic lives here: each method checks that its arguments are
the objects the wire contract promises and calls exactly one method of one
service of the worker's :class:`~gantt.scheduler.Scheduler`. Every error a
caller can act on is listed in ``expected_exceptions`` so that it reaches
the caller as its own type and is not logged as a server fault.
"""

import logging

import oslo_messaging as messaging

from gantt import exception
from gantt import notifier as gantt_notifier
from gantt import rpc
from gantt import rpcapi
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node as compute_node_obj
from gantt.objects import group as group_obj
from gantt.objects import provider as provider_obj
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


def _expect_flag(value, name):
    if not isinstance(value, bool):
        raise exception.InvalidRequest(
            reason="%s must be true or false, got %s" % (
                name, type(value).__name__))
    return value


class SchedulerEndpoint:
    # 1.3: provider trees, standalone providers, allocation candidates and
    # moves (see the history in client.py); the client still sends older
    # calls at their own version, so older servers keep serving them
    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, scheduler, ready_timeout=120, notifier=None,
                 tell_peers=None):
        """:param tell_peers: ``tell_peers()`` tells every worker that the
            standalone providers changed (``providers_changed``, fanout);
            called after this worker stored, deleted or retired one, so
            that the change reaches them whether or not the caller casts
            it. None: nobody to tell (one worker, or a test)."""
        self.scheduler = scheduler
        self.ready_timeout = ready_timeout
        self.notifier = notifier or gantt_notifier.SchedulingNotifier()
        self.tell_peers = tell_peers or (lambda: None)

    def _wait_ready(self):
        # a worker serves calls only once its cache is loaded
        self.scheduler.ready.wait(self.ready_timeout)

    @rpc.expected_exceptions(exception.InvalidRequest)
    def update_resource_stats(self, ctxt, compute_node):
        self.scheduler.stats.update_resource_stats(
            _expect(compute_node, compute_node_obj.ComputeNode,
                    "compute_node"))

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True, replace=False):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        uuids = _expect_uuids(instance_uuids, "instance_uuids")
        self._wait_ready()
        self.notifier.start(ctxt, spec, uuids)
        try:
            lists = self.scheduler.placer.select_destinations(
                spec, uuids, return_alternates=bool(return_alternates),
                replace=_expect_flag(replace, "replace"))
        except _CALL_ERRORS as exc:
            self.notifier.error(ctxt, spec, uuids, exc)
            raise
        self.notifier.end(ctxt, spec, uuids, lists)
        return lists

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def reclaim(self, ctxt, instance_uuid, failed_selection, alternates):
        if failed_selection is not None:
            _expect(failed_selection, selection_obj.Selection,
                    "failed_selection")
        alts = _expect_list(alternates, selection_obj.Selection, "alternates")
        if not isinstance(instance_uuid, str):
            raise exception.InvalidRequest(reason="instance_uuid must be a "
                                                  "string")
        self._wait_ready()
        return self.scheduler.claims.reclaim(instance_uuid, failed_selection,
                                             alts)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def release(self, ctxt, consumer_uuid):
        if not isinstance(consumer_uuid, str):
            raise exception.InvalidRequest(reason="consumer_uuid must be a "
                                                  "string")
        return self.scheduler.claims.release(consumer_uuid)

    @rpc.expected_exceptions(exception.InvalidRequest)
    def get_host_states(self, ctxt, hosts=None):
        if hosts is not None:
            hosts = _expect_uuids(hosts, "hosts")
        self._wait_ready()
        return self.scheduler.operator.get_host_states(hosts)

    @rpc.expected_exceptions(exception.InvalidRequest)
    def get_statistics(self, ctxt):
        return self.scheduler.operator.get_statistics()

    @rpc.expected_exceptions(exception.InvalidRequest)
    def provider_usage_changed(self, ctxt, usages):
        self.scheduler.stats.apply_peer_usage(
            _expect_list(usages, usage_obj.ProviderUsage, "usages"))

    # -- 1.2 --------------------------------------------------------------

    @rpc.expected_exceptions(exception.InvalidRequest)
    def explain(self, ctxt, request_spec, limit=10):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        if not isinstance(limit, int) or isinstance(limit, bool) or (
                limit < 0):
            raise exception.InvalidRequest(
                reason="limit must be a non-negative integer")
        self._wait_ready()
        return self.scheduler.operator.explain(spec, limit=limit)

    @rpc.expected_exceptions(exception.InvalidRequest)
    def set_aggregate(self, ctxt, aggregate):
        return self.scheduler.operator.set_aggregate(
            _expect(aggregate, aggregate_obj.Aggregate, "aggregate"))

    @rpc.expected_exceptions(exception.InvalidRequest)
    def delete_aggregate(self, ctxt, aggregate_uuid):
        if not isinstance(aggregate_uuid, str):
            raise exception.InvalidRequest(
                reason="aggregate_uuid must be a string")
        return self.scheduler.operator.delete_aggregate(aggregate_uuid)

    @rpc.expected_exceptions(exception.InvalidRequest)
    def get_aggregates(self, ctxt):
        return self.scheduler.operator.get_aggregates()

    def aggregates_changed(self, ctxt):
        # a cast: nobody to answer; a worker that cannot read the database
        # now keeps its aggregates until the next change or restart
        try:
            self.scheduler.operator.reload_aggregates()
        except Exception as exc:
            LOG.warning("Could not reload the aggregates: %s", exc)

    # -- 1.3 --------------------------------------------------------------

    @rpc.expected_exceptions(exception.InvalidRequest,
                                   exception.ServiceUnavailable)
    def report_resource_stats(self, ctxt, compute_node, force=False):
        node = _expect(compute_node, compute_node_obj.ComputeNode,
                       "compute_node")
        return self.scheduler.stats.report_resource_stats(
            node, force=bool(force))

    @rpc.expected_exceptions(exception.InvalidRequest)
    def update_provider(self, ctxt, report):
        result = self.scheduler.stats.update_provider(
            _expect(report, provider_obj.ProviderReport, "report"))
        if result.applied:
            self.tell_peers()
        return result

    @rpc.expected_exceptions(exception.InvalidRequest,
                                   exception.ProviderInUse)
    def delete_provider(self, ctxt, provider_uuid):
        if not isinstance(provider_uuid, str):
            raise exception.InvalidRequest(
                reason="provider_uuid must be a string")
        deleted = self.scheduler.stats.delete_provider(provider_uuid)
        if deleted:
            self.tell_peers()
        return deleted

    @rpc.expected_exceptions(exception.InvalidRequest,
                             exception.ProviderInUse,
                             exception.ProviderConflict,
                             exception.ProviderNotFound)
    def retire_provider(self, ctxt, provider_uuid, generation):
        # (arguments checked on the wire: a uuid, a generation >= 0)
        retired = self.scheduler.stats.retire_provider(provider_uuid,
                                                       generation)
        self.tell_peers()
        return retired

    def providers_changed(self, ctxt):
        # a cast from the worker that stored a standalone provider
        try:
            self.scheduler.stats.reload_providers()
        except Exception as exc:
            LOG.warning("Could not reload the standalone providers: %s", exc)

    def trees_changed(self, ctxt, root_uuids):
        # a cast from gantt-api after a write to these trees (1.13)
        try:
            self.scheduler.stats.reload_trees(root_uuids)
        except Exception as exc:
            LOG.warning("Could not reload %d provider tree(s): %s",
                        len(root_uuids), exc)

    # -- 1.6 --------------------------------------------------------------

    @rpc.expected_exceptions(exception.InvalidRequest,
                             exception.HostNotFound)
    def reset_report_sequence(self, ctxt, host):
        if not isinstance(host, str):
            raise exception.InvalidRequest(reason="host must be a string")
        return self.scheduler.stats.reset_report_sequence(host)

    def report_sequence_reset(self, ctxt, provider_uuid):
        # a cast from the worker that reset a host's stored sequence
        if isinstance(provider_uuid, str):
            self.scheduler.stats.forget_report_sequence(provider_uuid)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def get_allocation_candidates(self, ctxt, request_spec, limit=1000):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        if not isinstance(limit, int) or isinstance(limit, bool) or (
                limit < 1):
            raise exception.InvalidRequest(
                reason="limit must be a positive integer")
        self._wait_ready()
        return self.scheduler.placer.get_allocation_candidates(
            spec, limit=limit)

    @rpc.expected_exceptions(*_CALL_ERRORS,
                                   exception.CapacityExceeded)
    def claim_allocations(self, ctxt, consumer_uuid, allocation_request,
                          project_id=None, user_id=None):
        _expect_uuids([consumer_uuid], "consumer_uuid")
        request = _expect(allocation_request,
                          selection_obj.AllocationRequest,
                          "allocation_request")
        return self.scheduler.claims.claim_allocations(
            consumer_uuid, request, project_id=project_id, user_id=user_id)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def move_claim(self, ctxt, request_spec, instance_uuid, migration_uuid,
                   return_alternates=True):
        spec = _expect(request_spec, request_spec_obj.RequestSpec,
                       "request_spec")
        _expect_uuids([instance_uuid, migration_uuid],
                      "instance_uuid/migration_uuid")
        self._wait_ready()
        return self.scheduler.placer.move_claim(
            spec, instance_uuid, migration_uuid,
            return_alternates=bool(return_alternates))

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def confirm_move(self, ctxt, migration_uuid):
        _expect_uuids([migration_uuid], "migration_uuid")
        return self.scheduler.claims.confirm_move(migration_uuid)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def revert_move(self, ctxt, instance_uuid, migration_uuid):
        _expect_uuids([instance_uuid, migration_uuid],
                      "instance_uuid/migration_uuid")
        return self.scheduler.claims.revert_move(instance_uuid,
                                                 migration_uuid)


    # -- 1.12 -------------------------------------------------------------

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def plan_group(self, ctxt, group_request):
        request = _expect(group_request, group_obj.GroupRequest,
                          "group_request")
        self._wait_ready()
        return self.scheduler.groups.plan(request)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def reserve_group(self, ctxt, group_request):
        request = _expect(group_request, group_obj.GroupRequest,
                          "group_request")
        self._wait_ready()
        return self.scheduler.groups.reserve(request)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def extend_group(self, ctxt, group_request):
        request = _expect(group_request, group_obj.GroupRequest,
                          "group_request")
        self._wait_ready()
        return self.scheduler.groups.extend(request)

    @rpc.expected_exceptions(*_CALL_ERRORS)
    def release_group(self, ctxt, group_uuid):
        _expect_uuids([group_uuid], "group_uuid")
        return self.scheduler.groups.release(group_uuid)


class StatsEndpoint:
    """The stats topic: ``update_resource_stats`` and nothing else.

    Casts in the usual form never reach it: the worker's stats server takes
    them on its listener thread (``batching.StatsIntake``). This
    endpoint serves what is left: the same method sent as a call or at
    another minor version; any other method is refused like an unknown
    one.
    """

    target = messaging.Target(version=SchedulerEndpoint.target.version)

    def __init__(self, scheduler):
        self.scheduler = scheduler

    @rpc.expected_exceptions(exception.InvalidRequest)
    def update_resource_stats(self, ctxt, compute_node):
        self.scheduler.stats.update_resource_stats(
            _expect(compute_node, compute_node_obj.ComputeNode,
                    "compute_node"))
