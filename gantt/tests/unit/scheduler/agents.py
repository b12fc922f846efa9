"""Builders of the network and container tests (not a test module):
agents and container hosts as providers, router, DHCP and container
requests as RequestSpecs."""

from gantt.objects import compute_node
from gantt.objects import request_spec
from gantt.scheduler.pipeline.weighers import hosted
from gantt.tests import factories

ROUTER = hosted.ROUTER_CLASS
DHCP = hosted.DHCP_CLASS
#: what the network tests enable (a network profile's lists)
NETWORK_FILTERS = ["ComputeFilter", "ResourceFilter",
                   "AvailabilityZoneFilter", "ServerGroupAntiAffinityFilter"]
NETWORK_WEIGHERS = ["LeastRoutersWeigher", "LeastNetworksWeigher"]


def only(node, inventories):
    """``node`` (a ComputeNode report) offering only ``inventories``."""
    node.inventories = list(inventories)
    return node


def agent(name, *, resource_class=ROUTER, total=100000, zone=None):
    """An L3 (or DHCP) agent: a provider of ``resource_class`` only."""
    return only(factories.compute_node_obj(name, zone=zone), [
        compute_node.Inventory(resource_class=resource_class, total=total)])


def container_host(name, instance_uuid, *, vcpus=8, memory_mb=16384,
                   zone=None):
    """A Nova instance reporting itself as a container host (VCPU and
    MEMORY_MB), linked to ``instance_uuid`` by its stats."""
    return only(factories.compute_node_obj(
        name, zone=zone, stats={"instance_uuid": instance_uuid}), [
        compute_node.Inventory(resource_class="VCPU", total=vcpus),
        compute_node.Inventory(resource_class="MEMORY_MB",
                               total=memory_mb)])


def unit_spec(resource_class, *, zone=None, group=None, hints=None,
              **fields):
    """A request for one unit of ``resource_class`` and nothing else (a
    flavor of zeros: no VCPU, RAM or disk)."""
    flavor = factories.flavor(
        name=resource_class.lower(), vcpus=0, memory_mb=0, root_gb=0,
        extra_specs={"resources:%s" % resource_class: "1"})
    if group is not None:
        fields["instance_group"] = request_spec.InstanceGroup(
            uuid=group, policy="anti-affinity", rules={})
    return factories.request(flavor, availability_zone=zone,
                             scheduler_hints=dict(hints or {}), **fields)


def container_spec(vcpus=1, memory_mb=1024, *, hints=None, **fields):
    flavor = factories.flavor(name="container", vcpus=vcpus,
                              memory_mb=memory_mb, root_gb=0)
    return factories.request(flavor, scheduler_hints=dict(hints or {}),
                             **fields)
