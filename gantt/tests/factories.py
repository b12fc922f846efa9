"""Builders for the objects tests need: hosts, flavors, request specs."""

import itertools
import time
import uuid

from gantt.objects import compute_node
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
