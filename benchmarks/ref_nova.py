"""Nova's FilterScheduler pass over the shared cloud (reference venv only).

Runs what nova-scheduler runs for every instance of a boot request once
Placement has answered: ``SchedulerManager._get_sorted_hosts(spec,
host_states, 0)``, i.e. ``HostManager.get_filtered_hosts`` (the default
``[filter_scheduler] enabled_filters``), ``get_weighed_hosts`` (all 13
weighers of ``all_weighers``) and the random pick in ``host_subset_size``.

HostStates come from Nova's own ``HostManager._get_host_states()`` over
in-memory ComputeNode, service, aggregate and instance records built from
:mod:`fleet` (what Nova re-does on every request after its cell-DB read,
which is not timed). ``HostManager()`` and ``SchedulerManager()`` read the
database in their constructors: exactly those three init methods are
patched out and the maps they fill are filled here.

Instance records: Nova's filters and default weighers read only the keys
of ``HostState.instances`` (the instance uuids; the image-properties weigher,
which reads the values, is off by default), so every host maps its real
uuids to one shared ``Instance`` object instead of millions of them.
"""

import datetime
import json
import logging
from unittest import mock
import uuid as uuidlib

import nova.conf

CONF = nova.conf.CONF
CONF([], project="nova", default_config_files=[])

from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402

objects.register_all()

import fleet  # noqa: E402
from nova.scheduler import host_manager  # noqa: E402
from nova.scheduler import manager as sched_manager  # noqa: E402

# production runs with debug off: LOG.debug is a cheap no-op
logging.basicConfig(level=logging.WARNING)

CELL_UUID = str(uuidlib.UUID(int=1))
CPU_INFO = json.dumps({
    "arch": "x86_64", "model": "EPYC-Rome", "vendor": "AMD",
    "topology": {"cells": 2, "sockets": 1, "cores": 32, "threads": 2},
    "features": list(fleet.CPU_FEATURES)})


def _compute_node(host, now, hv_specs):
    used = host["used"]
    vms = len(host["instances"]) + len(host["members"])
    stats = {"num_instances": str(vms), "io_workload": str(host["io_ops"]),
             "failed_builds": str(host["failed_builds"])}
    ram_used = used["MEMORY_MB"] + fleet.RESERVED_MB
    i = host["index"]
    return objects.ComputeNode(
        id=i + 1, uuid=host["uuid"], host=host["name"],
        hypervisor_hostname=host["name"], hypervisor_type="QEMU",
        hypervisor_version=host["hypervisor_version"],
        host_ip="10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255),
        vcpus=host["vcpus"], vcpus_used=used["VCPU"],
        memory_mb=host["memory_mb"], memory_mb_used=ram_used,
        free_ram_mb=host["memory_mb"] - ram_used,
        local_gb=host["disk_gb"], local_gb_used=used["DISK_GB"],
        free_disk_gb=host["disk_gb"] - used["DISK_GB"],
        disk_available_least=host["disk_gb"] - used["DISK_GB"],
        running_vms=vms, current_workload=host["io_ops"],
        cpu_info=CPU_INFO, numa_topology=None,
        pci_device_pools=objects.PciDevicePoolList(objects=[]),
        supported_hv_specs=hv_specs, stats=stats, metrics="[]",
        cpu_allocation_ratio=fleet.CPU_RATIO,
        ram_allocation_ratio=fleet.RAM_RATIO,
        disk_allocation_ratio=fleet.DISK_RATIO,
        updated_at=now, created_at=now)


def _service(host, now):
    i = host["index"]
    return {"id": i + 1, "uuid": fleet.make_uuid(i + 1, 5),
            "host": host["name"], "binary": "nova-compute",
            "topic": "compute", "report_count": 1,
            "disabled": host["disabled"], "disabled_reason": None,
            "forced_down": False, "version": 66, "created_at": now,
            "updated_at": now, "last_seen_up": now}


class NovaCloud:
    """The shared cloud as Nova's scheduler reads it."""

    def __init__(self, cloud):
        now = datetime.datetime.now(datetime.timezone.utc)
        hv_specs = [objects.HVSpec(arch="x86_64", hv_type="qemu",
                                   vm_mode="hvm")]
        shared = objects.Instance(uuid=str(uuidlib.UUID(int=0)))
        self.computes, self.services, self.instance_info = [], {}, {}
        for host in cloud.hosts:
            self.computes.append(_compute_node(host, now, hv_specs))
            self.services[host["name"]] = _service(host, now)
            self.instance_info[host["name"]] = {
                "instances": {u: shared for u, _size in
                              cloud.instances_of(host)},
                "updated": True}
        self.aggs_by_id, self.host_aggs = {}, {}
        ids = {}
        for k, name in enumerate(sorted(cloud.aggregates)):
            ids[name] = k + 1
        members = {}
        for host in cloud.hosts:
            for name in host["aggregates"]:
                members.setdefault(name, []).append(host["name"])
                self.host_aggs.setdefault(host["name"], set()).add(ids[name])
        for name, agg in cloud.aggregates.items():
            self.aggs_by_id[ids[name]] = objects.Aggregate(
                id=ids[name], uuid=agg["uuid"], name=name,
                hosts=members.get(name, []), metadata=agg["metadata"])
        self.spec = _request_spec(cloud.request())

    def refresh_services(self):
        """Heartbeats stay fresh (ComputeFilter's service_down_time)."""
        now = datetime.datetime.now(datetime.timezone.utc)
        for service in self.services.values():
            service["last_seen_up"] = now


def _request_spec(req):
    f = req["flavor"]
    flavor = objects.Flavor(
        id=42, flavorid=f["name"], name=f["name"], is_public=True,
        rxtx_factor=1.0, vcpu_weight=0, disabled=False,
        extra_specs=dict(f["extra_specs"]), vcpus=f["vcpus"],
        memory_mb=f["memory_mb"], root_gb=f["root_gb"],
        ephemeral_gb=f["ephemeral_gb"], swap=f["swap"])
    image = objects.ImageMeta.from_dict({
        "id": fleet.make_uuid(7, 4), "name": "ubuntu-24.04",
        "disk_format": "qcow2", "container_format": "bare", "min_ram": 0,
        "min_disk": 0, "size": 1, "properties": req["image_properties"]})
    g = req["group"]
    group = objects.InstanceGroup(
        id=1, uuid=g["uuid"], name=g["name"], policy=g["policy"],
        policies=[g["policy"]],  # as InstanceGroup._from_db_object sets it
        rules={}, project_id=req["project_id"], user_id=req["user_id"],
        members=list(g["members"]), hosts=list(g["hosts"]))
    return objects.RequestSpec(
        instance_uuid=req["instance_uuid"], project_id=req["project_id"],
        user_id=req["user_id"], flavor=flavor, image=image,
        instance_group=group, num_instances=1, availability_zone=None,
        ignore_hosts=None, force_hosts=None, force_nodes=None,
        requested_destination=None, retry=None, scheduler_hints={},
        numa_topology=None,
        pci_requests=objects.InstancePCIRequests(requests=[]),
        security_groups=objects.SecurityGroupList(objects=[]),
        limits=objects.SchedulerLimits(), is_bfv=False,
        request_level_params=objects.RequestLevelParams())


class NovaScheduler:
    """A real HostManager + SchedulerManager, minus their DB/RPC set-up."""

    def __init__(self, nova_cloud):
        self.cloud = nova_cloud
        with mock.patch.object(host_manager.HostManager,
                               "refresh_cells_caches"), \
                mock.patch.object(host_manager.HostManager,
                                  "_init_aggregates"), \
                mock.patch.object(host_manager.HostManager,
                                  "_init_instance_info"):
            hm = host_manager.HostManager()
        hm.aggs_by_id = nova_cloud.aggs_by_id
        hm.host_aggregates_map.update(nova_cloud.host_aggs)
        hm._instance_info = nova_cloud.instance_info
        sm = object.__new__(sched_manager.SchedulerManager)
        sm.host_manager = hm
        self.hm, self.sm = hm, sm
        self.ctxt = nova_context.get_admin_context()

    @property
    def filters(self):
        return [f.__class__.__name__ for f in self.hm.enabled_filters]

    @property
    def weighers(self):
        return [w.__class__.__name__ for w in self.hm.weighers]

    def host_states(self):
        """HostManager._get_host_states over every node (no DB)."""
        self.cloud.refresh_services()
        return list(self.hm._get_host_states(
            self.ctxt, {CELL_UUID: self.cloud.computes},
            self.cloud.services))

    def sorted_hosts(self, states):
        return self.sm._get_sorted_hosts(self.cloud.spec, states, 0)

    def timed_phases(self):
        """Wrap filter and weigh so that each call's time is recorded."""
        phases = {"filter": [], "weigh": []}
        import time

        def timed(name, fn):
            def wrapper(*a, **kw):
                started = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    phases[name].append(time.perf_counter() - started)
            return wrapper
        self.hm.get_filtered_hosts = timed("filter",
                                           self.hm.get_filtered_hosts)
        self.hm.get_weighed_hosts = timed("weigh", self.hm.get_weighed_hosts)
        return phases


def version():
    import nova.version
    return nova.version.version_string()
