"""NovaSchedulerEndpoint: Nova's scheduler RPC API 4.x, served by Gantt.

Nova 34's conductor, API and computes call ``select_destinations`` (4.5)
and cast ``update_aggregates``, ``delete_aggregate`` (4.1, fanout) and
``update_instance_info``, ``delete_instance_info``,
``sync_instance_info`` (4.2, fanout) on the topic ``scheduler`` of the
exchange ``nova``. Each method translates (:mod:`gantt.nova.translate`)
and calls the worker's engine, as Gantt's own endpoint does; no decision
is taken here.

Refusals are the ones nova-scheduler makes: a message of another major
version is refused with oslo.messaging's ``UnsupportedVersion``, an
unknown method with ``NoSuchMethod`` (both reach Nova's client as
``RemoteError``, as from nova-scheduler), no host with
``nova.exception.NoValidHost`` whose reason is nova-scheduler's ("There
are not enough hosts available."): Nova shows it to the server's owner as
the fault, so which hosts failed which filter stays in Gantt's log (and
``gantt explain``), as it stays in nova-scheduler's. A request Gantt
cannot read is refused as ``NoValidHost`` naming why (the instance then
goes to ERROR with that reason, as for Nova's own request-filter
failures); a cast that cannot be applied is logged as one WARNING line.
Nova's evacuation (an instance holding its claim on the host the request
ignores) has its destination added to that claim, as nova-scheduler does
(:mod:`gantt.scheduler.move_claims`).
"""

import logging
import threading

import oslo_messaging as messaging
from oslo_versionedobjects import exception as ovo_exc

from gantt import exception
from gantt.nova import exception as nova_exception
from gantt.nova import objects as nova_objects
from gantt.nova import translate
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec as gantt_spec
from gantt.objects import selection as selection_obj
from gantt.rpc import _private
from gantt.scheduler.pipeline.filters import availability_zone

LOG = logging.getLogger(__name__)

#: Nova's scheduler RPC API version this endpoint serves (Nova 34's)
NOVA_RPC_API_VERSION = "4.5"
_SENTINEL = object()
#: nova-scheduler's reason for a NoValidHost (Nova's fault message)
NOT_ENOUGH_HOSTS = "There are not enough hosts available."


def _refused(error):
    """``error`` as an expected exception (no traceback in the log)."""
    return _private.expected(error)


class InstanceInfo:
    """Which instances each compute host says it runs (the instance-info
    casts), as nova-scheduler's HostManager keeps them. Gantt decides from
    its claims; this is what ``sync_instance_info`` compares them with."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_host = {}

    def update(self, host, uuids):
        with self._lock:
            self.by_host.setdefault(host, set()).update(uuids)

    def delete(self, host, uuid):
        with self._lock:
            self.by_host.get(host, set()).discard(uuid)

    def hosts_of(self, uuid):
        """The hosts whose lists name instance ``uuid``."""
        with self._lock:
            return {h for h, uuids in self.by_host.items() if uuid in uuids}

    def sync(self, host, uuids):
        """Replace ``host``'s set; True when it differed."""
        with self._lock:
            old = self.by_host.get(host)
            self.by_host[host] = set(uuids)
            return old is not None and old != set(uuids)


class NovaSchedulerEndpoint:
    target = messaging.Target(version=NOVA_RPC_API_VERSION)

    def __init__(self, scheduler, conf, ready_timeout=120):
        self.scheduler = scheduler
        self.conf = conf
        self.ready_timeout = ready_timeout
        self.instances = InstanceInfo()

    # -- select_destinations (4.0 … 4.5) ----------------------------------

    def select_destinations(self, ctxt, request_spec=None,
                            filter_properties=None, spec_obj=_SENTINEL,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        """``[[Selection, alternates…], …]`` (``return_objects``), else a
        list of ``{host, nodename, limits}`` dicts, one per instance.

        :raises: nova.exception.NoValidHost; UnsupportedVersion for the
            legacy dict request of 4.0-4.2 and the claim-less 4.3
        """
        if spec_obj is _SENTINEL or spec_obj is None:
            raise _refused(messaging.UnsupportedVersion(
                "4.2", method="select_destinations (a legacy request_spec "
                "dict; Gantt reads RequestSpec objects, RPC 4.3 and newer)"))
        if instance_uuids is None:
            raise _refused(messaging.UnsupportedVersion(
                "4.3", method="select_destinations (no instance_uuids: "
                "Gantt claims for instances, RPC 4.4 and newer)"))
        if not isinstance(spec_obj, nova_objects.RequestSpec):
            raise _refused(nova_exception.NoValidHost(
                reason="spec_obj is not a RequestSpec"))
        lists = self._select(spec_obj, list(instance_uuids),
                             bool(return_alternates and return_objects))
        if not return_objects:
            return [translate.legacy_dict(sels[0]) for sels in lists]
        return [self._nova_selections(sels) for sels in lists]

    def _select(self, spec_obj, instance_uuids, return_alternates):
        spec = self._own_host_passes(
            self._zone_as_aggregates(self._translated(spec_obj)))
        self.scheduler.ready.wait(self.ready_timeout)
        try:
            if translate.is_rebuild(spec_obj):
                return self._rebuild_check(spec, instance_uuids)
            return self._place(spec, instance_uuids, return_alternates)
        except exception.NoValidHost:
            # the placer logged why; the owner sees what Nova's says
            raise _refused(nova_exception.NoValidHost(
                reason=NOT_ENOUGH_HOSTS)) from None
        except (exception.ClaimConflict, exception.InvalidRequest) as exc:
            # e.g. an instance holding a claim on a host the request
            # allows, with other resources: Gantt does not move it
            # unasked; nothing changed
            raise _refused(nova_exception.NoValidHost(
                reason=str(exc))) from None

    def _place(self, spec, instance_uuids, return_alternates):
        """Gantt's placement; an instance that holds its claim on the host
        the request ignores is Nova's evacuation, whose destination is
        claimed in addition, as nova-scheduler does (see
        :mod:`gantt.scheduler.move_claims`)."""
        placer = self.scheduler.placer
        try:
            return placer.select_destinations(
                spec, instance_uuids, return_alternates=return_alternates)
        except exception.ConsumerConflict:
            if len(instance_uuids) != 1 or not spec.ignore_hosts:
                raise
        return [placer.evacuation_claim(spec, instance_uuids[0],
                                        return_alternates)]

    def _zone_as_aggregates(self, spec):
        """Nova 34's ``map_az_to_placement_aggregate``, which Nova runs on
        every request whatever its filters: the requested zone becomes
        "in any of the aggregates whose ``availability_zone`` is it"; a
        zone no aggregate names restricts nothing."""
        zone = spec.availability_zone
        uuids = sorted(
            a.uuid for a in self.scheduler.operator.get_aggregates()
            if zone and a.metadata.get(availability_zone.KEY) == zone)
        if uuids:
            if spec.requested_destination is None:
                spec.requested_destination = gantt_spec.Destination()
            spec.requested_destination.aggregates = list(
                spec.requested_destination.aggregates) + [",".join(uuids)]
        return spec

    def _own_host_passes(self, spec):
        """Nova's anti-affinity filter lets a member that moves keep its
        own host (a resize to the same host): Nova lists that host among
        the group's, so it is left out of them when the instance-info
        casts put the instance there. (Its own claim, which a resize has
        Nova move to the migration, does not count against it either.)"""
        group = spec.instance_group
        if group is None or group.policy != "anti-affinity":
            return spec
        own = self.instances.hosts_of(spec.instance_uuid)
        if own & set(group.hosts):
            group.hosts = [h for h in group.hosts if h not in own]
        return spec

    @staticmethod
    def _translated(spec_obj):
        """Gantt's request, or NoValidHost saying what Gantt cannot read
        (ovo raises ObjectActionError for an unset field that has no
        default, NotImplementedError for one its class cannot load)."""
        try:
            return translate.request_spec(spec_obj)
        except (exception.GanttException, ovo_exc.VersionedObjectsException,
                ValueError, TypeError, NotImplementedError) as exc:
            LOG.warning("Refused a Nova request: %s", exc)
            raise _refused(nova_exception.NoValidHost(
                reason="Gantt cannot read this request: %s" % exc)) from None

    def _rebuild_check(self, spec, instance_uuids):
        """A rebuild asks whether the instance's own host (the requested
        destination) still passes the filters; nothing is claimed."""
        explanation = self.scheduler.operator.explain(spec, limit=1)
        if not explanation.weighed:
            LOG.info("Rebuild of %s refused: its host does not pass: %s",
                     ", ".join(instance_uuids), explanation.summary)
            raise exception.NoValidHost(reason=explanation.summary)
        host = explanation.weighed[0]
        return [[selection_obj.Selection(
            service_host=host.host, nodename=host.nodename,
            compute_node_uuid=host.uuid, consumer_uuid=uuid,
            allocation_request=selection_obj.AllocationRequest(
                allocations=[]))] for uuid in instance_uuids]

    def _nova_selections(self, selections):
        zones = self._zones([s.compute_node_uuid for s in selections])
        cell = self.conf.nova.default_cell_uuid
        return [translate.selection(
            s, zones.get(s.compute_node_uuid)
            or self.conf.nova.default_availability_zone, cell)
            for s in selections]

    def _zones(self, uuids):
        """Each host's zone as Nova names it: its aggregates'
        ``availability_zone`` (one of them), else the zone its agent
        reported (see AvailabilityZoneFilter)."""
        operator = self.scheduler.operator
        aggregates = operator.get_aggregates()
        zones = {}
        for state in operator.get_host_states(uuids):
            by_aggregate = sorted(
                a.metadata[availability_zone.KEY] for a in aggregates
                if availability_zone.KEY in a.metadata and (
                    state.host in a.hosts or a.uuid in state.aggregates))
            zones[state.uuid] = next(iter(by_aggregate),
                                     state.availability_zone)
        return zones

    # -- casts --------------------------------------------------------------

    def update_aggregates(self, ctxt, aggregates):
        """Nova's host aggregates (hosts and metadata) become Gantt's."""
        if isinstance(aggregates, nova_objects.AggregateList):
            aggregates = aggregates.objects
        if isinstance(aggregates, nova_objects.Aggregate):
            aggregates = [aggregates]
        known = {s.host for s in self.scheduler.operator.get_host_states()}
        for agg in aggregates or ():
            self._cast("update_aggregates", self._set_aggregate, agg, known)

    def _set_aggregate(self, agg, known):
        hosts = list(agg.get("hosts") or ())
        unknown = sorted(set(hosts) - known)
        if unknown:
            LOG.info("Aggregate %s names host(s) no agent reported yet "
                     "(left out until it is updated again): %s", agg.uuid,
                     ", ".join(unknown))
        self.scheduler.operator.set_aggregate(aggregate_obj.Aggregate(
            uuid=agg.uuid, name=agg.get("name") or agg.uuid,
            hosts=[h for h in hosts if h in known],
            metadata=dict(agg.get("metadata") or {})))

    def delete_aggregate(self, ctxt, aggregate):
        self._cast("delete_aggregate",
                   self.scheduler.operator.delete_aggregate, aggregate.uuid)

    def update_instance_info(self, ctxt, host_name, instance_info):
        if isinstance(instance_info, nova_objects.InstanceList):
            uuids = [i.uuid for i in instance_info.objects]
        else:
            uuids = [instance_info.uuid]
        self.instances.update(host_name, uuids)
        self._seen(host_name)

    def delete_instance_info(self, ctxt, host_name, instance_uuid):
        self.instances.delete(host_name, instance_uuid)
        self._seen(host_name)

    def sync_instance_info(self, ctxt, host_name, instance_uuids):
        if self.instances.sync(host_name, instance_uuids):
            LOG.info("The instance sync for host %s did not match; its "
                     "list is replaced", host_name)
        self._seen(host_name)

    def _seen(self, host_name):
        """The compute service ``host_name`` is alive: its node stays up
        if the Placement API made it a host (``[api]
        compute_node_down_time``)."""
        if isinstance(host_name, str):
            self._cast("instance info", self.scheduler.stats.host_seen,
                       host_name)

    @staticmethod
    def _cast(method, fn, *args):
        """A cast has no caller to tell: a failure is one WARNING line."""
        try:
            fn(*args)
        except (exception.GanttException, ValueError, AttributeError,
                NotImplementedError) as exc:
            LOG.warning("Nova's %s cast not applied: %s", method, exc)
