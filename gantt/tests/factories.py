"""Builders for the objects tests need: hosts, flavors, request specs,
and the reports that bring a host to a scheduler (in-process or cast).

Cache- and view-level builders for the scheduler's unit tests are in
``gantt/tests/unit/scheduler/helpers.py``.
"""

import datetime
import itertools
import time
import uuid

from gantt.objects import base as objects_base
from gantt.objects import compute_node
from gantt.objects import numa
from gantt.objects import pci
from gantt.objects import provider
from gantt.objects import request_spec

_SEQUENCE = itertools.count(time.time_ns())


def host_uuid(name):
    """A stable uuid per host name, so tests can refer to hosts by name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "gantt-test-host/" + name))


def compute_node_obj(name, *, vcpus=16, memory_mb=65536, disk_gb=1000,
                     cpu_ratio=1.0, ram_ratio=1.0, disk_ratio=1.0,
                     reserved_memory_mb=0, zone=None, cell_uuid=None,
                     traits=(), aggregates=(), disabled=False,
                     capabilities=None, extra_inventories=(),
                     num_instances=0, num_io_ops=0, sequence=None, **fields):
    """A ComputeNode report with VCPU, MEMORY_MB and DISK_GB inventory."""
    inventories = [
        compute_node.Inventory(resource_class="VCPU", total=vcpus,
                               allocation_ratio=cpu_ratio),
        compute_node.Inventory(resource_class="MEMORY_MB", total=memory_mb,
                               reserved=reserved_memory_mb,
                               allocation_ratio=ram_ratio),
        compute_node.Inventory(resource_class="DISK_GB", total=disk_gb,
                               allocation_ratio=disk_ratio),
    ] + list(extra_inventories)
    return compute_node.ComputeNode(
        uuid=host_uuid(name), host=name, nodename=name,
        cell_uuid=cell_uuid, availability_zone=zone, disabled=disabled,
        inventories=inventories, traits=list(traits),
        aggregates=list(aggregates), capabilities=dict(capabilities or {}),
        num_instances=num_instances, num_io_ops=num_io_ops,
        report_sequence=(sequence if sequence is not None
                         else next(_SEQUENCE)), **fields)


def report(scheduler, name, **fields):
    """``name`` reports in-process: ``scheduler.stats.update_resource_stats``
    of its :func:`compute_node_obj` (``fields`` as there); returns what
    that returns (whether the report was applied)."""
    return scheduler.stats.update_resource_stats(
        compute_node_obj(name, **fields))


def cast_report(client, name, **fields):
    """``name`` reports through a ``SchedulerClient``, as an agent does (a
    cast: not waited for); returns the node sent."""
    node = compute_node_obj(name, **fields)
    client.update_resource_stats(None, node)
    return node


def flavor(name="m1.small", vcpus=1, memory_mb=2048, root_gb=20,
           ephemeral_gb=0, swap=0, extra_specs=None):
    return request_spec.Flavor(
        name=name, vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
        ephemeral_gb=ephemeral_gb, swap=swap,
        extra_specs=dict(extra_specs or {}))


def request(flavor_obj=None, **fields):
    return request_spec.RequestSpec(flavor=flavor_obj or flavor(), **fields)


def uuids(count):
    return [str(uuid.uuid4()) for _ in range(count)]


def primitive(obj):
    """``obj`` as it travels on the wire (Gantt's serializer)."""
    return objects_base.GanttObjectSerializer().serialize_entity(None, obj)


def full_compute_node_obj(name, **fields):
    """A report with every optional part set: NUMA, PCI, a child provider,
    instances, metrics and a time."""
    child = provider.ResourceProvider(
        uuid=host_uuid(name + "/pf0"), name=name + "_pf0",
        parent_provider_uuid=host_uuid(name), traits=["CUSTOM_PHYSNET_A"],
        inventories=[compute_node.Inventory(resource_class="SRIOV_NET_VF",
                                            total=8)])
    cell = numa.NUMACell(id=0, cpuset=[0, 1], pcpuset=[2, 3],
                         memory_mb=4096, siblings=[[0, 2], [1, 3]],
                         mempages=[numa.NUMAPagePool(size_kb=4, total=1024)])
    pool = pci.PciDevicePool(vendor_id="8086", product_id="154d",
                             numa_node=0, count=2,
                             tags={"dev_type": "type-PF"})
    values = dict(child_providers=[child], numa_cells=[cell],
                  pci_pools=[pool], instance_uuids=[str(uuid.uuid4())],
                  metrics={"cpu.percent": 12.5}, stats={"failed_builds": "0"},
                  updated_at=datetime.datetime(2026, 1, 2, 3, 4, 5,
                                               tzinfo=datetime.timezone.utc))
    values.update(fields)
    return compute_node_obj(name, **values)


def full_request(**fields):
    """A RequestSpec with every part set."""
    values = dict(
        instance_uuid=str(uuid.uuid4()), project_id="p", user_id="u",
        image=request_spec.ImageMeta(id="img", properties={"os": "linux"}),
        request_groups=[request_spec.RequestGroup(
            suffix="1", resources={"VCPU": 1},
            required_traits=["HW_CPU_X86_AVX"],
            any_traits=[["CUSTOM_A", "CUSTOM_B"]])],
        group_policy="isolate", availability_zone="az1",
        instance_group=request_spec.InstanceGroup(
            uuid=str(uuid.uuid4()), policy="anti-affinity",
            members=[str(uuid.uuid4())], rules={"max_server_per_host": "2"}),
        scheduler_hints={"different_host": [str(uuid.uuid4())]},
        requested_destination=request_spec.Destination(cell_uuid=str(
            uuid.uuid4())),
        same_subtree=[["1"]], root_required=["COMPUTE_STATUS_ENABLED"])
    values.update(fields)
    return request(**values)
