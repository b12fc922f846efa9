"""Gantt's side: the same world in Gantt's host cache and scheduler.

Each host becomes the report a Gantt agent next to a Nova compute would
cast: VCPU / MEMORY_MB / DISK_GB inventories with Nova's ratios and
reserved memory (``max_unit`` = total, as Nova's resource tracker sets
it) and the usage of its instances; the hypervisor attributes Nova keeps
on ``HostState`` as capabilities (``hypervisor_type``,
``hypervisor_version``, ``hypervisor_hostname``, ``cpu_info``,
``supported_instances``); Nova's ``stats`` verbatim; the metrics; the
counts of instances and I/O operations. A host without a zone aggregate
reports Nova's default zone (an aggregate's ``availability_zone``
overrides it). A down host's last
report is an hour old; a disabled one reports ``disabled`` and the trait
``COMPUTE_STATUS_DISABLED`` (which ``nova-compute`` sets too).

The answers have the shapes of ``nova_side``'s, so ``compare`` can hold
them side by side.
"""

import collections
import importlib.metadata
import json
import random
import types

import numpy as np
from oslo_config import cfg

from gantt import conf as gantt_conf
from gantt import objects
from gantt import scheduler as scheduler_mod
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec as rs_obj
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import translate
from gantt.scheduler.state import aggregates as aggregates_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import numa
from gantt.scheduler.state import pci
from gantt.scheduler.state import update as update_mod
from gantt.tests.nova_diff import requests
from gantt.tests.nova_diff import worlds as worlds_mod

objects.register_all()

#: the names of every filter plugin Gantt has
FILTERS = frozenset(ep.name for ep in importlib.metadata.entry_points(
    group=plugins.FILTERS))
NOW = 1_800_000_000.0
GROUP_UUID = "00000000-0000-0000-0000-000000000009"
INSTANCE_UUID = "00000000-0000-0000-0000-000000000007"


def _capabilities(h):
    return {"hypervisor_type": h.hv_type,
            "hypervisor_version": str(h.hv_version),
            "hypervisor_hostname": h.name, "cpu_info": h.cpu_info,
            "host_ip": worlds_mod.host_ip(h),
            "supported_instances": json.dumps([list(t)
                                               for t in h.supported])}


def _stats(h):
    """Nova's stats, and the instance counts per image property that
    Gantt's ImagePropertiesWeigher reads (``image_props:<key>=<value>``)."""
    counts = collections.Counter("image_props:%s=%s" % pair
                                 for props in h.instance_images
                                 for pair in props)
    return dict(h.stats, num_instances=str(h.num_instances),
                io_workload=str(h.io_ops),
                failed_builds=str(h.failed_builds),
                **{key: str(n) for key, n in counts.items()})


def _report(h):
    return update_mod.HostUpdate(
        uuid=h.uuid, host=h.name, nodename=h.name,
        cell_uuid=worlds_mod.CELLS[h.cell],
        availability_zone=worlds_mod.DEFAULT_ZONE,
        disabled=h.state == "disabled", report_sequence=1,
        num_instances=h.num_instances, num_io_ops=h.io_ops,
        inventories={
            "VCPU": (h.vcpus, 0, 1, h.vcpus, 1, h.cpu_ratio),
            "MEMORY_MB": (h.memory_mb, h.ram_reserved, 1, h.memory_mb, 1,
                          h.ram_ratio),
            "DISK_GB": (h.disk_gb, 0, 1, h.disk_gb, 1, h.disk_ratio),
            **({"PCPU": (h.pcpus, 0, 1, h.pcpus, 1, 1.0)} if h.numa
               else {})},
        traits=worlds_mod.traits(h), aggregates=frozenset(),
        capabilities=_capabilities(h), stats=_stats(h),
        metrics=dict(h.metrics), updated_at=None,
        received_at=NOW - 3600 if h.state == "down" else NOW,
        instance_uuids=frozenset(h.instances),
        numa_cells=tuple(numa.HostCell.from_obj(_wire_cell(c))
                         for c in h.numa),
        pci_pools=tuple(pci.Pool.from_obj(types.SimpleNamespace(
            vendor_id=p.vendor_id, product_id=p.product_id,
            numa_node=p.numa_node, count=p.count,
            tags={"dev_type": p.dev_type})) for p in h.pci))


def _wire_cell(c):
    """A cell as the agent's NUMACell would carry it."""
    return types.SimpleNamespace(
        id=c.id, cpuset=list(c.cpuset), pcpuset=list(c.pcpuset),
        pinned_cpus=list(c.pinned), cpu_usage=c.cpu_usage,
        memory_mb=c.memory_mb, memory_usage_mb=c.memory_usage,
        siblings=[list(x) for x in c.siblings],
        mempages=[types.SimpleNamespace(size_kb=size, total=total,
                                        used=used, reserved=0)
                  for size, total, used in c.pages])


def make_conf(world, filter_names):
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    conf.set_override("enabled_filters", list(filter_names),
                      "filter_scheduler")
    # Nova's profile, whatever Gantt's default packing: the weighers
    # exactly as the world configures them
    conf.set_override("packing", "", "filter_scheduler")
    for key, value in world.config.items():
        group, name = key.split(".", 1)
        conf.set_override(name, value, group)
    return conf


class Lookup:
    """What Gantt's database would answer: where instances run."""

    def __init__(self, world, req):
        self.where = {u: h.name for h in world.hosts for u in h.instances}
        self.req = req

    def group_hosts(self, group_uuid):
        counts = {}
        for member in self.req.group_members:
            host = self.where[member]
            counts[host] = counts.get(host, 0) + 1
        return counts

    def consumer_hosts(self, uuids):
        return {self.where[u] for u in uuids if u in self.where}


class GanttWorld:
    """One world in the HostStateCache of a worker's Scheduler."""

    def __init__(self, world, filter_names):
        self.world = world
        self.conf = make_conf(world, filter_names)
        self.scheduler = scheduler_mod.build(
            self.conf, None, clock=lambda: NOW, rng=random.Random(0))
        self.pipeline = self.scheduler.placer.pipeline
        self.cache = cache = self.scheduler.stats.cache
        for h in world.hosts:
            cache.apply_report(_report(h))
            usage = {"VCPU": h.vcpus_used, "MEMORY_MB": h.ram_used,
                     "DISK_GB": h.disk_used}
            if h.numa:
                usage["PCPU"] = h.pcpus_used
            cache.apply_usage(h.uuid, 1, usage)
        cache.apply_aggregates(aggregates_mod.AggregateSet([
            aggregate_obj.Aggregate(
                uuid=a.uuid, name=a.name, metadata=dict(a.metadata),
                hosts=[h.name for h in world.hosts
                       if a.name in h.aggregates])
            for a in world.aggregates]))
        self.filters = {f.name: f for f in self.pipeline.filters.filters}

    def request(self, req):
        """The ResourceRequest and a fresh view (InvalidRequest raises)."""
        spec = request_spec(req)
        request = translate.from_spec(spec, [INSTANCE_UUID],
                                        Lookup(self.world, req))
        return request, host_view.HostView(
            self.cache.table, self.cache.now(),
            self.conf.scheduler.service_down_time)

    def _names(self, view, mask):
        return {str(h) for h in view.hosts[mask]}

    def passes(self, name, request, view):
        runner = filters_base.FilterRunner([self.filters[name]])
        outcome = runner.run(view, request, np.ones(view.n, dtype=bool))
        return self._names(view, outcome.mask)

    def chain(self, names, request, view):
        """Gantt's pipeline: candidates (pre-filters), then ``names``."""
        cands = candidates.for_request(view, request, self.conf)
        runner = filters_base.FilterRunner(
            plugins.load(plugins.FILTERS, names, self.conf))
        # forced hosts skip the filters but capacity (Pipeline.rank)
        return self._names(view, runner.run(
            view, request, cands.mask, skip_filters=request.forced).mask)

    def parts(self, request, view, hosts):
        """``{weigher: {host: part}}`` over ``hosts`` and the totals the
        scheduler picks from."""
        mask = view.rows_of_hosts(hosts)
        rows = np.flatnonzero(mask)
        _totals, parts = self.pipeline.weighers.run(view, request, rows,
                                                    mask=mask)
        names = [str(view.hosts[r]) for r in rows]
        out = {name: dict(zip(names, (float(v) for v in part), strict=True))
               for name, part in parts.items()}
        weighing = self.pipeline.weighers.weigh(view, request, mask)
        totals = dict(zip(names, (float(t) for t in weighing.totals),
                          strict=True))
        return out, totals


def _destination(req):
    if not (req.dest_host or req.dest_aggregates
            or req.dest_cell is not None):
        return None
    return rs_obj.Destination(
        host=req.dest_host, node=req.dest_node,
        aggregates=list(req.dest_aggregates),
        cell_uuid=(None if req.dest_cell is None
                   else worlds_mod.CELLS[req.dest_cell]))


def request_spec(req):
    """The request as Gantt's RequestSpec."""
    group = None
    if req.group_policy is not None:
        group = rs_obj.InstanceGroup(
            uuid=GROUP_UUID, name="group", policy=req.group_policy,
            rules={k: str(v) for k, v in req.group_rules.items()},
            members=list(req.group_members), hosts=[])
    return rs_obj.RequestSpec(
        instance_uuid=INSTANCE_UUID, project_id=req.project_id,
        user_id="user", num_instances=1,
        flavor=rs_obj.Flavor(
            name=req.flavor, vcpus=req.vcpus, memory_mb=req.memory_mb,
            root_gb=req.root_gb, ephemeral_gb=req.ephemeral_gb,
            swap=req.swap, extra_specs=dict(req.extra_specs)),
        image=rs_obj.ImageMeta(id=req.image_id, name="image",
                               properties=dict(req.image_properties)),
        availability_zone=req.availability_zone, instance_group=group,
        ignore_hosts=list(req.ignore_hosts),
        force_hosts=list(req.force_hosts),
        force_nodes=list(req.force_nodes),
        requested_destination=_destination(req),
        scheduler_hints=requests.gantt_hints(req))
