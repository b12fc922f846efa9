"""SchedulerClient: what agents, conductors and operators call.

RPC API version history:

* 1.0 - Initial version: update_resource_stats (fanout cast),
  select_destinations, reclaim, release, get_host_states, get_statistics
  (calls), provider_usage_changed (fanout cast between workers)
* 1.2 - Added explain, set_aggregate, delete_aggregate, get_aggregates
  (calls) and aggregates_changed (fanout cast)
* 1.3 - Added report_resource_stats, update_provider, delete_provider,
  get_allocation_candidates, claim_allocations, move_claim, confirm_move,
  revert_move (calls) and providers_changed (fanout cast); ComputeNode 1.3
  carries child providers, RequestSpec 1.1 same_subtree and root traits
* 1.4 - No method changed: ComputeNode 1.4 (NUMACell 1.1, with SMT
  siblings) may be sent. Which object versions each RPC version carries
  is in gantt.rpcapi.versions; ``[upgrade_levels] scheduler`` caps both.
  Workers reply at the object versions of the version a call was sent
  at, so a method whose reply objects changed is sent at the version of
  that change when the cap allows (get_statistics at 1.2).
* 1.5 - No method changed: get_statistics sent at 1.5 returns
  SchedulerStatistics 1.2, which names the RPC API version the answering
  worker serves.
* 1.6 - Added reset_report_sequence (call) and report_sequence_reset
  (fanout cast); ComputeNode 1.5 carries the agent's boot_id.
* 1.7 - select_destinations takes ``replace`` (default False): without
  it, instances that hold claims get them back unchanged when they
  satisfy the request, and ConsumerConflict otherwise; with it, their
  claims are moved. release answers True to exactly one of several
  concurrent releases of one consumer (the one that freed it).
* 1.8 - No method changed: ProviderReport 1.1 carries the reporting
  service's boot_id (update_provider).
* 1.9 - Added retire_provider (call); ProviderReport 1.2 carries the
  provider's kind, owning service, zone, typed capabilities and instance
  link (update_provider is sent at 1.9 when it says any of them);
  get_host_states sent at 1.9 returns HostState 1.1 with them.
* 1.10 - Scheduling profiles (no method added): RequestSpec 1.2 names
  its ``profile`` and ``packing`` policy, carries ``capabilities`` and
  may have no flavor (its request groups then say what it needs); a
  worker refuses an unknown profile or a packing policy its profile
  does not allow (UnknownProfile, PackingRefused: InvalidRequest). A
  caller capped below 1.10 refuses (VersionCapped) to send a request
  that names a profile, a packing policy or capabilities, or has no
  flavor, rather than let an older worker place it by Nova's profile.
  explain sent at 1.10 returns Explanation 1.1, which names the profile
  and packing policy that ranked the request.
* 1.11 - Failure domains (no method added): ComputeNode 1.6 and
  ProviderReport 1.3 carry the provider's ``location``
  (``room=r1/rack=b07``); InstanceGroup 1.1 carries policies per level
  (GroupLevelPolicy 1.0: anti-affinity at rack, spread at row…), which a
  caller capped below 1.11 refuses (VersionCapped) to send;
  get_host_states sent at 1.11 returns HostState 1.2 with the location.
* 1.12 - Holistic groups: added plan_group, reserve_group, extend_group
  (GroupRequest 1.0 in, GroupPlan 1.0 out) and release_group (calls);
  RequestSpec 1.3 names the reserved ``group_slot`` a member is built
  into (select_destinations then takes the slot's claim over). A caller
  capped below 1.12 refuses (VersionCapped) to send a request naming a
  group slot.
* 1.13 - Added trees_changed (fanout cast): every worker re-reads the
  provider trees of the roots it names from the database (a compute node
  the Placement REST API made or changed, its inventories, traits,
  aggregates and children; gantt-api casts it after every provider
  write). A caller capped below 1.13 casts providers_changed instead
  (workers then re-read the standalone providers only).

Topics (not versions: the messages are unchanged): since 1.3,
update_resource_stats goes to the stats topic (``[scheduler] stats_topic``,
by default ``<topic>-stats``), which workers serve on a connection of their
own; workers still take it on the scheduler topic, where older agents and
external callers send it.

Casts (update_resource_stats, provider_usage_changed, aggregates_changed,
providers_changed, trees_changed: all fanout) are delivered **at most
once** to each worker that is running when the cast reaches the broker; a
worker that is not running never sees it. Nothing tells the caster whether
any worker got it, and no cast raises because no worker is up, be it before
the first worker ever started or while every worker is stopped (the client
re-sends once when RabbitMQ deleted the fanout exchange with the last
worker: see :meth:`SchedulerClient._cast_to_all`). A report lost that way
is not buffered: agents report periodically, and the next report supersedes
it (a starting worker also loads the reports stored in the database). While
the broker is unreachable a cast blocks until oslo.messaging reconnects
(forever by default); it raises ``MessageDeliveryFailure`` only when the
broker refuses the message twice (for example, the user may not write to
the ``gantt`` exchange), and ``VersionCapped`` for a method newer than the
cap, before anything is sent.

Over 400 lines: one thin method per RPC method (each says which version
it needs and what it raises), and the version history above, which the
wire and upgrade docs point to; split, a caller would look for the
methods in two places.
"""

import logging

import oslo_messaging as messaging

from gantt import context as gantt_context
from gantt import exception
from gantt import rpc
from gantt import rpcapi
from gantt.rpcapi import sending
from gantt.rpcapi import versions

LOG = logging.getLogger(__name__)

#: the RPC versions at which get_statistics' reply changed, newest first
_STATISTICS_VERSIONS = ("1.5", "1.2", "1.0")

class SchedulerClient:
    """:param stats_topic: where reports are cast; by default the stats
        topic of ``topic`` (``<topic>-stats``), see ``[scheduler]
        stats_topic``
    :param version_cap: the newest RPC API version to send, objects
        included (``[upgrade_levels] scheduler``); None for no cap
    :param timeout: seconds a call waits for its reply (None: the
        transport's ``rpc_response_timeout``)
    :param call_monitor_timeout: seconds a call waits without hearing from
        the worker serving it: workers send a heartbeat every half of it
        while they work on a call, so a long call lives up to ``timeout``
        but a worker killed or frozen mid-call fails the call
        (``MessagingTimeout``) after this long. None turns monitoring off
        (a dead worker then costs the whole ``timeout``).
    :raises: ConfigurationError for a cap this code cannot honour, or a
        call monitor timeout that is not a whole number of seconds >= 2
    """

    def __init__(self, transport, topic="gantt-scheduler", timeout=None,
                 stats_topic=None, version_cap=None,
                 call_monitor_timeout=sending.DEFAULT_CALL_MONITOR_TIMEOUT):
        monitor = sending.checked_monitor_timeout(call_monitor_timeout)
        manifest = None
        if version_cap is not None:
            manifest = versions.manifest_for(version_cap)
        self.version_cap = version_cap
        target = messaging.Target(exchange=rpcapi.EXCHANGE, topic=topic,
                                  version=rpcapi.CLIENT_BASE_VERSION)
        self._client = rpc.get_client(transport, target, timeout=timeout,
                                      version_cap=version_cap,
                                      version_manifest=manifest,
                                      call_monitor_timeout=monitor)
        #: how each call spends its timeout (see sending.SendPlan)
        self.send_plan = sending.SendPlan.for_timeout(transport.conf,
                                                      timeout)
        self._client = sending.Sender(
            self._client.prepare(timeout=self.send_plan.wait_s,
                                 retry=self.send_plan.retry),
            self.send_plan, sending.ReplyQueue(transport))
        self.stats_topic = rpcapi.stats_topic(topic, stats_topic)
        self._stats = rpc.get_client(
            transport, target(topic=self.stats_topic), timeout=timeout,
            version_cap=version_cap,
            version_manifest=manifest).prepare(fanout=True)

    @classmethod
    def from_conf(cls, conf, transport=None, timeout=None,
                  call_monitor_timeout=sending.DEFAULT_CALL_MONITOR_TIMEOUT):
        transport = transport or rpc.get_transport(conf)
        return cls(transport, conf.scheduler.topic, timeout=timeout,
                   stats_topic=conf.scheduler.stats_topic,
                   version_cap=versions.configured_cap(conf),
                   call_monitor_timeout=call_monitor_timeout)

    def can_send_version(self, version):
        """Whether the cap lets this client send ``version``."""
        return self._client.can_send_version(version)

    def _prepare(self, method, version, **kwargs):
        """The client context for a method added in ``version``.

        :raises: VersionCapped (nothing is sent)
        """
        if not self.can_send_version(version):
            raise exception.VersionCapped(method=method, version=version,
                                          cap=self.version_cap)
        return self._client.prepare(version=version, **kwargs)

    @staticmethod
    def _ctxt(ctxt):
        return ctxt if ctxt is not None else gantt_context.get_admin_context()

    @staticmethod
    def _cast_to_all(prepared, ctxt, method, **kwargs):
        """A fanout cast that no stopped scheduler makes fail.

        Workers declare ``<topic>_fanout`` as auto-delete: RabbitMQ deletes
        it when the last worker stops. oslo.messaging's rabbit driver
        declares the exchange once per connection and remembers it, so the
        next cast on that connection is published to an exchange that is
        gone and fails (404 NOT_FOUND, raised as MessageDeliveryFailure,
        which also makes the driver forget what it declared). Sending
        again declares the exchange anew: the message then reaches the
        workers that are up, or none (at most once, as any cast).
        """
        try:
            prepared.cast(ctxt, method, **kwargs)
        except messaging.MessageDeliveryFailure as exc:
            LOG.warning("Fanout cast %s failed (%s); sending it again "
                        "(RabbitMQ deletes the fanout exchange when every "
                        "scheduler stops)", method, exc)
            prepared.cast(ctxt, method, **kwargs)

    def update_resource_stats(self, ctxt, compute_node):
        """Report a host's full state to every worker (fanout cast on the
        stats topic); see the module's docstring for what a cast
        promises."""
        self._cast_to_all(self._stats, self._ctxt(ctxt),
                          "update_resource_stats", compute_node=compute_node)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True, replace=False):
        """``[[claimed, alternate, …], …]``, one list per instance.

        Asking again for instances that hold claims (a lost reply, a
        duplicate) answers with those claims, unchanged, if they satisfy
        the request; ``replace=True`` (RPC API 1.7) moves them instead.

        :raises: NoValidHost, InvalidRequest, ConsumerConflict (they hold
            claims this request does not match, or another call changed
            them meanwhile; nothing changed), VersionCapped (``replace``
            under a cap below 1.7)
        """
        kwargs = {}
        client = self._client
        if replace:
            client = self._prepare("select_destinations", "1.7")
            kwargs["replace"] = True
        return client.call(
            self._ctxt(ctxt), "select_destinations",
            request_spec=request_spec, instance_uuids=list(instance_uuids),
            return_alternates=return_alternates, **kwargs)

    def reclaim(self, ctxt, instance_uuid, failed_selection, alternates):
        """Claim the first alternate that still fits after a failed build.

        :raises: MaxRetriesExceeded (nothing is left allocated)
        """
        return self._client.call(
            self._ctxt(ctxt), "reclaim", instance_uuid=instance_uuid,
            failed_selection=failed_selection, alternates=list(alternates))

    def release(self, ctxt, consumer_uuid):
        """Free a consumer's allocations; True if this call freed them
        (of concurrent releases of one consumer, exactly one gets True)."""
        return self._client.call(self._ctxt(ctxt), "release",
                                 consumer_uuid=consumer_uuid)

    def get_host_states(self, ctxt, hosts=None):
        """Every provider a worker holds (or those ``hosts`` names), as
        HostState objects: 1.1, with each provider's kind, service,
        capabilities, instance link and vacancy, when the cap allows 1.9
        (1.2, with the location, at 1.11; a worker replies at the object
        versions of the RPC version a call is sent at); else 1.0."""
        version = next((v for v in ("1.11", "1.9")
                        if self.can_send_version(v)), None)
        client = (self._client.prepare(version=version)
                  if version else self._client)
        return client.call(self._ctxt(ctxt), "get_host_states", hosts=hosts)

    def get_statistics(self, ctxt):
        """A worker's SchedulerStatistics, at the newest version the cap
        allows (a worker replies at the object versions of the RPC
        version a call is sent at): 1.2, with the RPC API version the
        worker serves, at 1.5; 1.1, with the peer lag, at 1.2; else 1.0."""
        version = next(v for v in _STATISTICS_VERSIONS
                       if self.can_send_version(v))
        return self._client.prepare(version=version).call(
            self._ctxt(ctxt), "get_statistics")

    def provider_usage_changed(self, ctxt, usages, sender=None):
        """Tell every worker the usage a claim or release left behind.

        ``sender``, the casting worker's name, goes in the context so that
        this worker can drop the copy it receives itself before reading it
        (older workers ignore the key and apply their copy as no news).
        """
        ctxt = self._ctxt(ctxt)
        if sender is not None:
            ctxt = dict(ctxt if isinstance(ctxt, dict) else ctxt.to_dict())
            ctxt[rpcapi.SENDER_CONTEXT_KEY] = sender
        self._cast_to_all(self._client.prepare(fanout=True), ctxt,
                          "provider_usage_changed", usages=usages)

    # -- 1.2: explain and aggregates ---------------------------------------

    def explain(self, ctxt, request_spec, limit=10):
        """What each filter removed and how the best hosts weighed, for
        ``request_spec``, without claiming anything (an Explanation).

        :raises: InvalidRequest
        """
        # a worker replies at the objects of the version a call was sent
        # at: Explanation 1.1 (the profile that ranked) from 1.10
        version = "1.10" if self.can_send_version("1.10") else "1.2"
        return self._prepare("explain", version).call(
            self._ctxt(ctxt), "explain", request_spec=request_spec,
            limit=limit)

    def set_aggregate(self, ctxt, aggregate):
        """Create or replace an aggregate (its hosts and metadata).

        One worker stores it; every worker then re-reads the aggregates
        (fanout ``aggregates_changed``).

        :raises: InvalidRequest
        """
        stored = self._prepare("set_aggregate", "1.2").call(
            self._ctxt(ctxt), "set_aggregate", aggregate=aggregate)
        self.aggregates_changed(ctxt)
        return stored

    def delete_aggregate(self, ctxt, aggregate_uuid):
        """Delete an aggregate; False when there was none."""
        deleted = self._prepare("delete_aggregate", "1.2").call(
            self._ctxt(ctxt), "delete_aggregate",
            aggregate_uuid=aggregate_uuid)
        self.aggregates_changed(ctxt)
        return deleted

    def get_aggregates(self, ctxt):
        return self._prepare("get_aggregates", "1.2").call(
            self._ctxt(ctxt), "get_aggregates")

    def aggregates_changed(self, ctxt):
        """Tell every worker to re-read the aggregates from the database."""
        self._cast_to_all(
            self._prepare("aggregates_changed", "1.2", fanout=True),
            self._ctxt(ctxt), "aggregates_changed")

    # -- 1.3: provider trees, standalone providers, candidates, moves -----

    def report_resource_stats(self, ctxt, compute_node, force=False):
        """Report a host and hear what became of it (a ReportResult).

        The worker that answers stores the report; every worker then gets
        it by the usual fanout cast (on the stats topic). ``refused`` in
        the answer names each inventory change refused because more is
        allocated than it would leave (``force=True`` takes it anyway).

        :raises: InvalidRequest, ServiceUnavailable
        """
        result = self._prepare("report_resource_stats", "1.3").call(
            self._ctxt(ctxt), "report_resource_stats",
            compute_node=compute_node, force=force)
        self.update_resource_stats(ctxt, compute_node)
        return result

    def update_provider(self, ctxt, report):
        """Create or update a standalone provider from a ProviderReport
        (for example a storage pool shared with an aggregate's hosts).

        :returns: a ReportResult
        :raises: InvalidRequest
        """
        # a report saying its kind, service, zone, capabilities or
        # instance needs a 1.9 worker: a 1.8 one would store a plain pool
        version = "1.9" if report.says_more_than_1_1() else "1.3"
        if report.obj_attr_is_set("location") and report.location:
            version = "1.11"
        result = self._prepare("update_provider", version).call(
            self._ctxt(ctxt), "update_provider", report=report)
        self.providers_changed(ctxt)
        return result

    def delete_provider(self, ctxt, provider_uuid):
        """Delete a standalone provider; False when there was none.

        :raises: ProviderInUse while it holds allocations
        """
        deleted = self._prepare("delete_provider", "1.3").call(
            self._ctxt(ctxt), "delete_provider", provider_uuid=provider_uuid)
        self.providers_changed(ctxt)
        return deleted

    def retire_provider(self, ctxt, provider_uuid, generation):
        """Delete a vacant standalone provider if its generation is still
        ``generation`` (the one ``provider.vacant`` carried, or
        ``gantt host-show`` shows) and nothing is allocated on it: a
        compare-and-swap, so a placement racing the retirement either
        lands first (the retirement is refused) or finds the provider gone
        (it goes elsewhere), never both.

        :returns: True (retired)
        :raises: ProviderConflict (the generation moved: look again),
            ProviderInUse (something is allocated), ProviderNotFound,
            InvalidRequest (a compute node or a child provider),
            VersionCapped (a cap below 1.9)
        """
        retired = self._prepare("retire_provider", "1.9").call(
            self._ctxt(ctxt), "retire_provider",
            provider_uuid=provider_uuid, generation=generation)
        self.providers_changed(ctxt)
        return retired

    def providers_changed(self, ctxt):
        """Tell every worker to re-read the standalone providers."""
        self._cast_to_all(
            self._prepare("providers_changed", "1.3", fanout=True),
            self._ctxt(ctxt), "providers_changed")

    def trees_changed(self, ctxt, root_uuids):
        """Tell every worker to re-read the provider trees of
        ``root_uuids`` (hosts made, changed or deleted through the REST
        API); below 1.13 (a cap), :meth:`providers_changed`."""
        if not self.can_send_version("1.13"):
            self.providers_changed(ctxt)
            return
        self._cast_to_all(
            self._prepare("trees_changed", "1.13", fanout=True),
            self._ctxt(ctxt), "trees_changed", root_uuids=list(root_uuids))

    # -- 1.6: the operator's reset of a host's report sequence -----------

    def reset_report_sequence(self, ctxt, host):
        """Let the next report of ``host`` in whatever its sequence and
        boot id: stored by one worker, then every worker's cache (fanout
        ``report_sequence_reset``). For an agent locked out by a report of
        a sequence it will not reach (a forged one, or a clock set far
        ahead) that sends no boot id, or sends the same one.

        :returns: the uuid of the host's compute node
        :raises: HostNotFound, InvalidRequest
        """
        uuid = self._prepare("reset_report_sequence", "1.6").call(
            self._ctxt(ctxt), "reset_report_sequence", host=host)
        self._prepare("report_sequence_reset", "1.6", fanout=True).cast(
            self._ctxt(ctxt), "report_sequence_reset", provider_uuid=uuid)
        return uuid

    def get_allocation_candidates(self, ctxt, request_spec, limit=1000):
        """Placement's question: every way to allocate ``request_spec`` now
        (a list of AllocationCandidate), without claiming.

        :raises: InvalidRequest
        """
        return self._prepare("get_allocation_candidates", "1.3").call(
            self._ctxt(ctxt), "get_allocation_candidates",
            request_spec=request_spec, limit=limit)

    def claim_allocations(self, ctxt, consumer_uuid, allocation_request,
                          project_id=None, user_id=None):
        """Claim exactly ``allocation_request`` (an AllocationRequest) for
        a consumer, replacing what it held.

        :raises: CapacityExceeded, ProviderNotFound, ClaimConflict,
            InvalidRequest
        """
        return self._prepare("claim_allocations", "1.3").call(
            self._ctxt(ctxt), "claim_allocations",
            consumer_uuid=consumer_uuid,
            allocation_request=allocation_request, project_id=project_id,
            user_id=user_id)

    def move_claim(self, ctxt, request_spec, instance_uuid, migration_uuid,
                   return_alternates=True):
        """Claim a destination for a moving instance; the migration
        consumer keeps the source until confirm_move or revert_move.

        :returns: ``[claimed, alternates…]``
        :raises: NoValidHost (nothing changed), InvalidRequest
        """
        return self._prepare("move_claim", "1.3").call(
            self._ctxt(ctxt), "move_claim", request_spec=request_spec,
            instance_uuid=instance_uuid, migration_uuid=migration_uuid,
            return_alternates=return_alternates)

    def confirm_move(self, ctxt, migration_uuid):
        """Free the source of a move; False when nothing was held."""
        return self._prepare("confirm_move", "1.3").call(
            self._ctxt(ctxt), "confirm_move", migration_uuid=migration_uuid)

    def revert_move(self, ctxt, instance_uuid, migration_uuid):
        """Give the instance its source back; False when nothing was
        held (already reverted or confirmed)."""
        return self._prepare("revert_move", "1.3").call(
            self._ctxt(ctxt), "revert_move", instance_uuid=instance_uuid,
            migration_uuid=migration_uuid)

    def plan_group(self, ctxt, group_request):
        """The plan of a group (a GroupPlan), claiming nothing.

        :raises: NoValidHost, InvalidRequest, VersionCapped (below 1.12)
        """
        return self._prepare("plan_group", "1.12").call(
            self._ctxt(ctxt), "plan_group", group_request=group_request)

    def reserve_group(self, ctxt, group_request):
        """Decide a group whole and claim every member slot, or none.

        :returns: the GroupPlan, reserved
        :raises: NoValidHost, InvalidRequest (a known group: extend it),
            ConsumerConflict (a concurrent reserve of the group)
        """
        return self._prepare("reserve_group", "1.12").call(
            self._ctxt(ctxt), "reserve_group", group_request=group_request)

    def extend_group(self, ctxt, group_request):
        """More members of a reserved group, its members held fixed.

        :returns: the GroupPlan of the new slots, reserved
        :raises: NoValidHost, InvalidRequest (an unknown group)
        """
        return self._prepare("extend_group", "1.12").call(
            self._ctxt(ctxt), "extend_group", group_request=group_request)

    def release_group(self, ctxt, group_uuid):
        """Free the group's slots no member took over; how many."""
        return self._prepare("release_group", "1.12").call(
            self._ctxt(ctxt), "release_group", group_uuid=group_uuid)
