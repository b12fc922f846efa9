"""Builders of the network and container tests (not a test module):
agents as providers of kind ``network`` and container hosts, router, DHCP
and container requests as RequestSpecs."""

from gantt.conf import profiles as conf_profiles
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline.weighers import hosted
from gantt.tests import factories

ROUTER = hosted.ROUTER_CLASS
DHCP = hosted.DHCP_CLASS
NETWORK = "network"
#: the network profile of doc/examples/services.conf
NETWORK_FILTERS = ["ResourceFilter", "AvailabilityZoneFilter",
                   "ServerGroupAntiAffinityFilter"]
NETWORK_WEIGHERS = ["LeastRoutersWeigher", "LeastNetworksWeigher"]
NETWORK_PROFILE = {"provider_kinds": [NETWORK],
                   "enabled_filters": NETWORK_FILTERS,
                   "enabled_weighers": NETWORK_WEIGHERS}
CONTAINER = "container"
#: the container profile of doc/examples/services.conf
CONTAINER_PROFILE = {
    "provider_kinds": [CONTAINER],
    "enabled_filters": ["ResourceFilter", "AvailabilityZoneFilter",
                        "ServerGroupAffinityFilter",
                        "ServerGroupAntiAffinityFilter"],
    "enabled_weighers": ["RAMWeigher", "CPUWeigher",
                         "ServerGroupSoftAffinityWeigher",
                         "ServerGroupSoftAntiAffinityWeigher"]}
_SEQ = iter(range(1, 10 ** 9))


def only(node, inventories):
    """``node`` (a ComputeNode report) offering only ``inventories``."""
    node.inventories = list(inventories)
    return node


def agent(name, *, resource_class=ROUTER, total=100000, zone=None):
    """An L3 (or DHCP) agent: a provider of kind ``network`` offering
    ``total`` units of ``resource_class`` and nothing else, its uuid
    ``factories.host_uuid(name)``."""
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=factories.host_uuid(name), name=name, inventories=[
                compute_node.Inventory(resource_class=resource_class,
                                       total=total)]),
        report_sequence=next(_SEQ), kind=NETWORK, service="neutron-agent",
        availability_zone=zone)


def container_provider(name, instance_uuid, *, vcpus=8,
                       memory_mb=16384, zone=None):
    """A container host as a provider of kind ``container`` linked to
    ``instance_uuid`` by its report (ProviderReport 1.2), in ``zone``."""
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=factories.host_uuid(name), name=name, inventories=[
                compute_node.Inventory(resource_class="VCPU", total=vcpus),
                compute_node.Inventory(resource_class="MEMORY_MB",
                                       total=memory_mb)]),
        report_sequence=next(_SEQ), kind="container", service="zun",
        instance_uuid=instance_uuid, availability_zone=zone)


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
              profile=NETWORK, **fields):
    """A flavorless request of ``profile`` for one unit of
    ``resource_class`` and nothing else."""
    if group is not None:
        fields["instance_group"] = request_spec.InstanceGroup(
            uuid=group, policy="anti-affinity", rules={})
    return request_spec.RequestSpec(
        flavor=None, profile=profile, availability_zone=zone,
        scheduler_hints=dict(hints or {}), project_id="p", user_id="u",
        request_groups=[request_spec.RequestGroup(
            resources={resource_class: 1})], **fields)


def network_conf(conf):
    """``conf`` with the network profile beside the default one."""
    conf.set_override("profiles", [NETWORK], "scheduler")
    conf_profiles.register(conf)
    for option, value in NETWORK_PROFILE.items():
        conf.set_override(option, value, "profile:" + NETWORK)
    return conf


def container_spec(vcpus=1, memory_mb=1024, *, hints=None, **fields):
    """A flavorless request of the ``container`` profile for one
    container of ``vcpus`` VCPU and ``memory_mb`` MEMORY_MB."""
    return request_spec.RequestSpec(
        flavor=None, profile=CONTAINER, scheduler_hints=dict(hints or {}),
        project_id="p", user_id="u", request_groups=[
            request_spec.RequestGroup(resources={
                "VCPU": vcpus, "MEMORY_MB": memory_mb})], **fields)


def container_conf(conf):
    """``conf`` with the container profile of services.conf beside the
    default one."""
    conf.set_override("profiles", [CONTAINER], "scheduler")
    conf_profiles.register(conf)
    for option, value in CONTAINER_PROFILE.items():
        conf.set_override(option, value, "profile:" + CONTAINER)
    return conf
