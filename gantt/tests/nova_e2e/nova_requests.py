"""Nova's own objects for the requests the tests send (built with the
real nova package, as Nova's conductor builds them)."""

import uuid

from nova import context as nova_context
from nova import objects

objects.register_all()

PROJECT = "6f70656e-7374-6163-6b20-70726f6a6563"
USER = "fake-user"


def ctxt():
    return nova_context.RequestContext(user_id=USER, project_id=PROJECT,
                                       is_admin=True)


def flavor(vcpus=1, memory_mb=512, root_gb=1, extra_specs=None):
    return objects.Flavor(
        id=1, name="m1.nova-e2e", vcpus=vcpus, memory_mb=memory_mb,
        root_gb=root_gb, ephemeral_gb=0, swap=0, flavorid="e2e",
        rxtx_factor=1.0, vcpu_weight=None, disabled=False, is_public=True,
        extra_specs=extra_specs or {}, projects=[], description=None)


def image(**properties):
    return objects.ImageMeta.from_dict({
        "id": str(uuid.uuid4()), "name": "cirros", "disk_format": "qcow2",
        "container_format": "bare", "properties": properties})


def spec(num_instances=1, **fields):
    """A RequestSpec as the conductor sends it (``fields`` override)."""
    values = dict(
        flavor=flavor(), image=image(), num_instances=num_instances,
        project_id=PROJECT, user_id=USER,
        instance_uuid=str(uuid.uuid4()), ignore_hosts=None,
        force_hosts=None, force_nodes=None, scheduler_hints={},
        instance_group=None, availability_zone=None, is_bfv=False,
        requested_destination=None, retry=None, limits=None,
        request_level_params=objects.RequestLevelParams(),
        requested_resources=[], security_groups=objects.SecurityGroupList(),
        network_metadata=objects.NetworkMetadata(physnets=set(),
                                                 tunneled=False),
        pci_requests=None, numa_topology=None)
    values.update(fields)
    return objects.RequestSpec(**values)


def server_group(policy, members=(), hosts=(), rules=None):
    group = objects.InstanceGroup(
        uuid=str(uuid.uuid4()), name="g-" + policy, policy=policy,
        members=list(members), hosts=list(hosts), user_id=USER,
        project_id=PROJECT, _rules=dict(rules or {}))
    return group
