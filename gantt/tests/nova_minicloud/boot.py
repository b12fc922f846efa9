"""A server create without nova-api: the records nova-api writes before
it hands a boot to the conductor, made with Nova's own object classes in
the test process, then the same RPC call to the real nova-conductor.

nova-api is not run because its create path needs Keystone (the request's
token), Glance (the image: ``nova.compute.api.API._get_image``) and
Neutron (the networks); the records are what
``nova.compute.api.API._provision_instances`` writes for an image-backed
server with ``networks=none``: the BuildRequest holding the Instance (and
its empty network info cache), the
RequestSpec, the InstanceMapping with no cell yet, and the root disk's
block device mapping.
"""


from nova import exception
from nova import objects
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova.conductor import api as conductor_api
from nova.network import model as network_model
from oslo_utils import uuidutils

from gantt.tests.functional import waiting

#: the image the servers boot from (nothing fetches it: the fake driver)
IMAGE = "155d900f-4e14-4e4c-a73d-069cbf4541e6"
IMAGE_META = {"id": IMAGE, "name": "cirros", "status": "active",
              "disk_format": "raw", "container_format": "bare",
              "min_ram": 0, "min_disk": 0, "size": 1, "properties": {}}


def make_flavor(ctx, name, vcpus, memory_mb, root_gb):
    """A flavor in Nova's API database, as ``openstack flavor create``."""
    flavor = objects.Flavor(
        context=ctx, name=name, flavorid=name, vcpus=vcpus,
        memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=0, swap=0,
        rxtx_factor=1.0, vcpu_weight=0, disabled=False, is_public=True,
        extra_specs={}, description=None)
    flavor.create()
    return flavor


def _instance(ctx, flavor, name, metadata):
    uuid = uuidutils.generate_uuid()
    return objects.Instance(
        context=ctx, uuid=uuid,
        project_id=ctx.project_id, user_id=ctx.user_id,
        display_name=name, hostname=name, image_ref=IMAGE,
        flavor=flavor, instance_type_id=flavor.id, vcpus=flavor.vcpus,
        memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb, old_flavor=None, new_flavor=None,
        vm_state=vm_states.BUILDING, task_state=task_states.SCHEDULING,
        power_state=power_state.NOSTATE, launch_index=0, metadata=metadata,
        system_metadata={}, availability_zone=None, numa_topology=None,
        pci_requests=objects.InstancePCIRequests(requests=[]),
        config_drive="", key_name=None, key_data=None, locked=False,
        security_groups=objects.SecurityGroupList(objects=[]),
        info_cache=objects.InstanceInfoCache(
            instance_uuid=uuid, network_info=network_model.NetworkInfo()))


def _root_disk(ctx, instance):
    return objects.BlockDeviceMappingList(objects=[objects.BlockDeviceMapping(
        context=ctx, instance_uuid=instance.uuid, source_type="image",
        destination_type="local", image_id=IMAGE, boot_index=0,
        delete_on_termination=True, device_type="disk", volume_size=None,
        guest_format=None, disk_bus=None, no_device=False, tag=None,
        volume_id=None, snapshot_id=None, attachment_id=None,
        device_name=None, volume_type=None, encrypted=False)])


def _spec(ctx, instance, flavor):
    spec = objects.RequestSpec.from_components(
        ctx, instance.uuid, IMAGE_META, flavor, None, instance.pci_requests,
        {}, None, None, security_groups=instance.security_groups,
        project_id=ctx.project_id, user_id=ctx.user_id,
        port_resource_requests=[])
    spec.is_bfv = False
    spec.create()
    return spec


def create_server(ctx, flavor, name, metadata=None):
    """What nova-api does for ``POST /servers`` (see the module's
    docstring), then ``schedule_and_build_instances`` to the conductor;
    returns the instance's uuid."""
    instance = _instance(ctx, flavor, name, metadata or {})
    bdms = _root_disk(ctx, instance)
    spec = _spec(ctx, instance, flavor)
    build = objects.BuildRequest(
        context=ctx, instance=instance, instance_uuid=instance.uuid,
        project_id=ctx.project_id, block_device_mappings=bdms,
        tags=objects.TagList())
    build.create()
    objects.InstanceMapping(
        context=ctx, instance_uuid=instance.uuid, project_id=ctx.project_id,
        user_id=ctx.user_id, cell_mapping=None,
        queued_for_delete=False).create()
    no_networks = objects.NetworkRequestList(
        objects=[objects.NetworkRequest(network_id="none")])
    conductor_api.ComputeTaskAPI().schedule_and_build_instances(
        ctx, build_requests=[build], request_spec=[spec], image=IMAGE_META,
        admin_password="", injected_files=[],
        requested_networks=no_networks, block_device_mapping=bdms,
        tags=objects.TagList())
    return instance.uuid


def wait_for_instance(ctx, cell, uuid, done):
    """The cell's Instance once ``done(instance)`` holds (None once it is
    gone, when ``done`` accepts None)."""
    from nova import context as nova_context

    def read():
        with nova_context.target_cell(ctx, cell) as cctx:
            try:
                return objects.Instance.get_by_uuid(
                    cctx, uuid, expected_attrs=["metadata"])
            except exception.InstanceNotFound:
                return None

    def held():
        instance = read()
        return (instance,) if done(instance) else None
    return waiting.until("instance %s as the test wants it" % uuid, held,
                         interval=0.5)[0]
