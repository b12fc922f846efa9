"""Nova's side: the real nova 34 HostManager, filters and weighers.

A world becomes what Nova's scheduler reads after its cell-database query:
``ComputeNode`` objects, service records, ``Aggregate`` objects and the
instances of each host, turned into ``HostState`` objects by Nova's own
``HostManager._get_host_states``. ``HostManager()`` reads the database in
its constructor; exactly the three init methods that do are patched out and
the maps they fill are filled here (the approach of
``benchmarks/ref_nova.py``). Nova's configuration is process-wide
(``nova.conf.CONF``): each world sets its options as overrides and a new
``HostManager`` is made, since some weighers read options when they are
made.

Answers are plain data, keyed by host name: which hosts each filter passes
alone, which pass a chain, and each weigher's part (multiplier x
normalised value) per host.

Over 400 lines: every Nova object a world needs (services, aggregates,
images, flavors, NUMA, PCI, server groups) is built here, in the one
module that imports Nova, so that nothing else in the test does.
"""

import contextlib
import datetime
import json
import logging
from unittest import mock
import uuid as uuidlib

from nova import context as nova_context
from nova import exception as nova_exception
from nova import objects
from nova import weights as base_weights
import nova.conf
from nova.objects import monitor_metric
from nova.pci import request as pci_request
from nova.scheduler import filters as nova_filters
from nova.scheduler import host_manager
from nova.scheduler import request_filter
from nova.scheduler import utils as scheduler_utils
from nova.scheduler import weights as nova_weights
from nova.virt import hardware

from gantt.tests.nova_diff import requests
from gantt.tests.nova_diff import worlds

CONF = nova.conf.CONF
#: what Nova raises for a request its API would refuse
REFUSED = nova_exception.NovaException
#: the names of every host filter Nova has
FILTERS = frozenset(cls.__name__ for cls in nova_filters.all_filters())
_configured = []


def configure():
    """Parse Nova's (empty) configuration and register its objects, once."""
    if not _configured:
        CONF([], project="nova", default_config_files=[])
        objects.register_all()
        logging.getLogger("nova").setLevel(logging.ERROR)
        _configured.append(True)


def _compute_node(index, h, now):
    stats = dict(h.stats, num_instances=str(h.num_instances),
                 io_workload=str(h.io_ops),
                 failed_builds=str(h.failed_builds))
    ram_used = h.ram_used + h.ram_reserved
    # what a compute writes: *.percent metrics as fractions (from_json
    # scales them back by 100)
    metrics = [{"name": name, "source": "diff",
                "value": (value / 100 if name in
                          monitor_metric.FIELDS_REQUIRING_CONVERSION
                          else value),
                "timestamp": now.isoformat()}
               for name, value in sorted(h.metrics.items())]
    return objects.ComputeNode(
        id=index + 1, uuid=h.uuid, host=h.name, hypervisor_hostname=h.name,
        hypervisor_type=h.hv_type, hypervisor_version=h.hv_version,
        host_ip=worlds.host_ip(h), vcpus=h.vcpus,
        vcpus_used=h.vcpus_used, memory_mb=h.memory_mb,
        memory_mb_used=ram_used, free_ram_mb=h.memory_mb - ram_used,
        local_gb=h.disk_gb, local_gb_used=h.disk_used,
        free_disk_gb=h.disk_gb - h.disk_used,
        disk_available_least=h.disk_gb - h.disk_used,
        running_vms=h.num_instances, current_workload=h.io_ops,
        cpu_info=h.cpu_info, numa_topology=_numa_topology(h),
        pci_device_pools=objects.PciDevicePoolList(objects=[
            objects.PciDevicePool(
                vendor_id=p.vendor_id, product_id=p.product_id,
                numa_node=p.numa_node, tags={"dev_type": p.dev_type},
                count=p.count) for p in h.pci]),
        supported_hv_specs=[objects.HVSpec(arch=a, hv_type=t, vm_mode=m)
                            for a, t, m in h.supported],
        stats=stats, metrics=json.dumps(metrics),
        cpu_allocation_ratio=h.cpu_ratio, ram_allocation_ratio=h.ram_ratio,
        disk_allocation_ratio=h.disk_ratio, updated_at=now, created_at=now)


def _numa_topology(h):
    """The host's cells as the JSON a compute stores, or None."""
    if not h.numa:
        return None
    return objects.NUMATopology(cells=[objects.NUMACell(
        id=c.id, cpuset=set(c.cpuset), pcpuset=set(c.pcpuset),
        memory=c.memory_mb, cpu_usage=c.cpu_usage,
        memory_usage=c.memory_usage, pinned_cpus=set(c.pinned),
        siblings=[set(x) for x in c.siblings],
        mempages=[objects.NUMAPagesTopology(size_kb=size, total=total,
                                            used=used, reserved=0)
                  for size, total, used in c.pages],
        network_metadata=objects.NetworkMetadata(physnets=set(),
                                                 tunneled=False))
        for c in h.numa])._to_json()


def _service(index, h, now):
    seen = now if h.state != "down" else now - datetime.timedelta(hours=1)
    return {"id": index + 1, "uuid": str(uuidlib.UUID(int=index + 100)),
            "host": h.name, "binary": "nova-compute", "topic": "compute",
            "report_count": 1, "disabled": h.state == "disabled",
            "disabled_reason": None, "forced_down": False, "version": 66,
            "created_at": now, "updated_at": now, "last_seen_up": seen}


class NovaWorld:
    """One world loaded into a real HostManager."""

    def __init__(self, world, filter_names):
        configure()
        self._overrides = []
        for key, value in _nova_config(world, filter_names).items():
            group, name = key.split(".", 1)
            CONF.set_override(name, value, group)
            self._overrides.append((name, group))
        with mock.patch.object(host_manager.HostManager,
                               "refresh_cells_caches"), \
                mock.patch.object(host_manager.HostManager,
                                  "_init_aggregates"), \
                mock.patch.object(host_manager.HostManager,
                                  "_init_instance_info"):
            self.hm = host_manager.HostManager()
        self.world = world
        self._load(world)
        self.ctxt = nova_context.get_admin_context()
        self.filters = {f.__class__.__name__: f
                        for f in self.hm.enabled_filters}
        self.weighers = {w.__class__.__name__: w for w in self.hm.weighers}

    def close(self):
        """Nova's options back to their defaults for the next world."""
        for name, group in self._overrides:
            CONF.clear_override(name, group)

    def _load(self, world):
        now = datetime.datetime.now(datetime.timezone.utc)
        self.computes = [_compute_node(i, h, now)
                         for i, h in enumerate(world.hosts)]
        self.services = {h.name: _service(i, h, now)
                         for i, h in enumerate(world.hosts)}
        ids = {agg.name: k + 1 for k, agg in enumerate(world.aggregates)}
        self.hm.aggs_by_id = {
            ids[agg.name]: objects.Aggregate(
                id=ids[agg.name], uuid=agg.uuid, name=agg.name,
                hosts=[h.name for h in world.hosts
                       if agg.name in h.aggregates],
                metadata=dict(agg.metadata))
            for agg in world.aggregates}
        self.hm.host_aggregates_map.clear()
        for h in world.hosts:
            self.hm.host_aggregates_map[h.name] = {ids[a]
                                                  for a in h.aggregates}
        self.hm._instance_info = {
            h.name: {"instances": {
                u: objects.Instance(uuid=u, host=h.name, image_ref=None,
                                    system_metadata={
                    "image_" + key: value for key, value in props})
                for u, props in zip(h.instances, h.instance_images,
                                    strict=True)},
                "updated": True}
            for h in world.hosts}

    def host_states(self):
        """Fresh HostStates of every host, in the world's order."""
        by_cell = {}
        for h, compute in zip(self.world.hosts, self.computes, strict=True):
            by_cell.setdefault(worlds.CELLS[h.cell], []).append(compute)
        states = {s.host: s for s in self.hm._get_host_states(
            self.ctxt, by_cell, self.services)}
        return [states[h.name] for h in self.world.hosts]

    @staticmethod
    def _placement_answered(states):
        """One allocation candidate per host, without mappings, as the
        scheduler sets from Placement's answer (candidate filters such as
        NUMATopologyFilter narrow it: reset before each run)."""
        for s in states:
            s.allocation_candidates = [{"mappings": {}}]
            s.limits = {}
        return states

    def spec(self, req):
        return request_spec(self.world, req)

    # -- what the test compares -------------------------------------------

    def passes(self, name, states, spec):
        """The hosts filter ``name`` alone passes, among ``states``."""
        flt = self.filters[name]
        return {s.host for s in flt.filter_all(
            self._placement_answered(states), spec)}

    def zone(self, states, spec):
        """The hosts Nova's availability-zone handling keeps: nova 34 has
        no AvailabilityZoneFilter; its request filter
        ``map_az_to_placement_aggregate`` (always on) asks Placement for
        members of the aggregates whose ``availability_zone`` is the
        requested zone, and for nothing when no aggregate has it. The real
        request filter runs, with its aggregate query answered from the
        world; Placement's ``member_of`` is applied here."""
        spec = spec.obj_clone()
        spec.requested_destination = None      # the zone's part only
        zone = spec.availability_zone
        found = objects.AggregateList(objects=[
            self.hm.aggs_by_id[i] for i in sorted(self.hm.aggs_by_id)
            if self.hm.aggs_by_id[i].metadata.get(
                "availability_zone") == zone])
        with mock.patch.object(objects.AggregateList, "get_by_metadata",
                               return_value=found):
            request_filter.map_az_to_placement_aggregate(self.ctxt, spec)
        return self.members(states, spec.requested_destination)

    def members(self, states, dest):
        """The hosts Placement's ``member_of`` of ``dest.aggregates``
        keeps (all without a destination or aggregates)."""
        if dest is None or not dest.aggregates:
            return {s.host for s in states}
        wanted = [set(any_of.split(",")) for any_of in dest.aggregates]
        by_uuid = {a.uuid: a for a in self.hm.aggs_by_id.values()}
        return {s.host for s in states
                if all(any(s.host in by_uuid[u].hosts for u in any_of)
                       for any_of in wanted)}

    def chain(self, names, states, spec):
        """The hosts that pass the filters ``names`` in that order, as
        ``HostManager.get_filtered_hosts`` runs them (ignored and forced
        hosts and nodes first; forced ones skip the filters)."""
        enabled = self.hm.enabled_filters
        self.hm.enabled_filters = [self.filters[n] for n in names]
        try:
            return {s.host for s in self.hm.get_filtered_hosts(
                self._placement_answered(states), spec, 0) or []}
        finally:
            self.hm.enabled_filters = enabled

    def parts(self, states, spec):
        """``{weigher: {host: multiplier x normalised value}}`` over
        ``states`` (Nova's ``get_weighed_objects``, one weigher at a
        time), and ``{host: total}`` as Nova sums it."""
        with _instances_in_memory():
            return self._parts(states, spec)

    def _parts(self, states, spec):
        weighed = [nova_weights.WeighedHost(s, 0.0) for s in states]
        parts = {}
        for name, weigher in self.weighers.items():
            raw = weigher.weigh_objects(weighed, spec)
            normal = list(base_weights.normalize(
                raw, minval=weigher.minval, maxval=weigher.maxval))
            parts[name] = {s.host: weigher.weight_multiplier(s) * v
                           for s, v in zip(states, normal, strict=True)}
        totals = {w.obj.host: w.weight
                  for w in self.hm.get_weighed_hosts(states, spec)}
        return parts, totals


def placement_query(spec):
    """``(resources, required traits, forbidden traits)`` Nova asks
    Placement for: its own translation of the request (PCPU for pinned
    CPUs, HW_CPU_HYPERTHREADING for a thread policy, ``trait:`` extra
    specs...)."""
    rr = scheduler_utils.ResourceRequest.from_request_spec(spec)
    forbidden = set()
    # NOTE: ResourceRequest has no public accessor for its groups'
    # forbidden traits; nova is pinned (constraints.txt)
    for group in rr._rg_by_id.values():
        forbidden |= group.forbidden_traits
    return dict(rr.merged_resources()), rr.all_required_traits, forbidden


def placement_fits(h, resources):
    """Whether Placement would offer host ``h`` for ``resources`` (what
    Nova's scheduler receives instead of filtering on capacity): each
    class within ``max_unit`` (the total) and ``(total - reserved) *
    ratio``."""
    offered = {
        "VCPU": (h.vcpus, 0, h.cpu_ratio, h.vcpus_used),
        "PCPU": (h.pcpus, 0, 1.0, h.pcpus_used),
        "MEMORY_MB": (h.memory_mb, h.ram_reserved, h.ram_ratio, h.ram_used),
        "DISK_GB": (h.disk_gb, 0, h.disk_ratio, h.disk_used)}
    for rc, amount in resources.items():
        total, reserved, ratio, used = offered.get(rc, (0, 0, 1.0, 0))
        if amount > total or used + amount > (total - reserved) * ratio:
            return False
    return True


def placement_traits(h, required, forbidden):
    """Whether host ``h`` has the traits Placement is asked for, and not
    COMPUTE_STATUS_DISABLED (Nova's ``compute_status_filter`` request
    filter forbids it)."""
    have = worlds.traits(h)
    return (required <= have and not forbidden & have
            and "COMPUTE_STATUS_DISABLED" not in have)


@contextlib.contextmanager
def _instances_in_memory():
    """ImagePropertiesWeigher reads the instances' image metadata from the
    cell database (CellMapping, target_cell, fill_metadata): the
    instances here carry it already, so those three reads are patched
    out."""
    def cell(ctxt, uuid):
        return objects.CellMapping(uuid=uuid, name=uuid,
                                   database_connection="sqlite://",
                                   transport_url="none:///")
    with mock.patch.object(objects.CellMapping, "get_by_uuid", cell), \
            mock.patch.object(nova_context, "target_cell",
                              lambda ctxt, mapping: contextlib.nullcontext(
                                  ctxt)), \
            mock.patch.object(objects.InstanceList, "fill_metadata"):
        yield


def _nova_config(world, filter_names):
    config = dict(world.config)
    config["filter_scheduler.enabled_filters"] = list(filter_names)
    return config


def _image(req):
    meta = {"id": req.image_id, "name": "image", "disk_format": "qcow2",
            "container_format": "bare", "min_ram": 0, "min_disk": 0,
            "size": 1, "properties": dict(req.image_properties)}
    return objects.ImageMeta.from_dict(meta)


def _group(world, req):
    if req.group_policy is None:
        return None
    where = {u: h.name for h in world.hosts for u in h.instances}
    rules = {k: str(v) for k, v in req.group_rules.items()}
    return objects.InstanceGroup(
        id=1, uuid=str(uuidlib.UUID(int=9)), name="group",
        policy=req.group_policy, policies=[req.group_policy], rules=rules,
        project_id=req.project_id, user_id="user",
        members=list(req.group_members),
        hosts=sorted({where[u] for u in req.group_members}))


def _destination(req):
    if not (req.dest_host or req.dest_aggregates
            or req.dest_cell is not None):
        return None
    dest = (objects.Destination(host=req.dest_host, node=req.dest_node)
            if req.dest_host else objects.Destination())
    if req.dest_cell is not None:
        dest.cell = objects.CellMapping(uuid=worlds.CELLS[req.dest_cell],
                                        name="cell%d" % req.dest_cell)
        dest.allow_cross_cell_move = req.cross_cell
    for any_of in req.dest_aggregates:
        dest.require_aggregates(any_of.split(","))
    return dest


def request_spec(world, req):
    """The request as Nova's RequestSpec, with the NUMA topology Nova's
    API derives from the flavor and image.

    :raises: what ``numa_get_constraints`` raises for a request Nova's API
        refuses
    """
    flavor = objects.Flavor(
        id=42, flavorid=req.flavor, name=req.flavor, is_public=True,
        rxtx_factor=1.0, vcpu_weight=0, disabled=False,
        extra_specs=dict(req.extra_specs), vcpus=req.vcpus,
        memory_mb=req.memory_mb, root_gb=req.root_gb,
        ephemeral_gb=req.ephemeral_gb, swap=req.swap)
    image = _image(req)
    return objects.RequestSpec(
        instance_uuid=str(uuidlib.UUID(int=7)), project_id=req.project_id,
        user_id="user", flavor=flavor, image=image,
        instance_group=_group(world, req), num_instances=1,
        availability_zone=req.availability_zone,
        ignore_hosts=list(req.ignore_hosts) or None,
        force_hosts=list(req.force_hosts) or None,
        force_nodes=list(req.force_nodes) or None,
        requested_destination=_destination(req),
        retry=None, scheduler_hints=requests.hints(req),
        numa_topology=hardware.numa_get_constraints(flavor, image),
        pci_requests=pci_request.get_pci_requests_from_flavor(flavor),
        security_groups=objects.SecurityGroupList(objects=[]),
        limits=objects.SchedulerLimits(), is_bfv=False,
        request_level_params=objects.RequestLevelParams())


def version():
    import nova.version
    return nova.version.version_string()
