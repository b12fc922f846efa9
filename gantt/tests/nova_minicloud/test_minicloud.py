"""Nova's conductor and computes with Gantt in nova-scheduler's and
placement-api's place (see doc/source/admin/nova.rst, "The mini-cloud").

Gantt claims the flavor on the node it selects (select_destinations);
the conductor builds there, and on a failed build claims the alternate
Gantt returned with its ``allocation_request`` (through gantt-api). So
"landed where Gantt decided" is: the instance's node is the one provider
of the allocation Gantt holds, and that allocation is the flavor's.
"""

import os

from nova import context as nova_context
from nova import objects
from nova.compute import api as compute_api
from nova.compute import vm_states

from gantt.tests.functional import waiting
from gantt.tests.nova_minicloud import boot
from gantt.tests.nova_minicloud import faildriver


def _active(instance):
    """Not yet in the cell (before the conductor's placement), building,
    or active; never in ERROR."""
    if instance is None:
        return False
    assert instance.vm_state != vm_states.ERROR, instance.fault
    return instance.vm_state == vm_states.ACTIVE


def _gone(instance):
    assert instance is None or instance.vm_state != vm_states.ERROR, (
        instance.fault)
    return instance is None


def _boot(cloud, name, flavor, metadata=None):
    uuid = boot.create_server(cloud.context, flavor, name, metadata)
    return boot.wait_for_instance(cloud.context, cloud.cell, uuid, _active)


def _assert_holds_exactly(cloud, instance, flavor):
    want = {cloud.node_uuid(instance): {
        "VCPU": flavor.vcpus, "MEMORY_MB": flavor.memory_mb,
        "DISK_GB": flavor.root_gb}}
    # the node is not named after its host: Gantt placed on the node and
    # named Nova's service host, as Nova's tables say
    assert instance.node == instance.host + faildriver.NODE_SUFFIX
    assert instance.host in cloud.hosts
    assert cloud.gantt_allocations(instance.uuid) == want
    assert cloud.placement_allocations(instance.uuid) == want


def _delete(cloud, instance):
    compute_api.API().delete(cloud.context, instance)
    boot.wait_for_instance(cloud.context, cloud.cell, instance.uuid, _gone)
    assert cloud.gantt_allocations(instance.uuid) == {}
    assert cloud.placement_allocations(instance.uuid) == {}


def test_boot_lands_where_gantt_claimed_and_delete_frees_it(minicloud):
    flavor = boot.make_flavor(minicloud.context, "m1.boot", 1, 512, 1)
    instance = _boot(minicloud, "vm-boot", flavor)

    _assert_holds_exactly(minicloud, instance, flavor)
    assert not os.path.exists(os.path.join(minicloud.fails_dir,
                                           instance.uuid))
    _delete(minicloud, instance)
    # the delete read Neutron (nothing there), and wrote nothing to it
    requests = minicloud.neutron.requests
    assert ("GET", "/v2.0/ports", {"device_id": [instance.uuid]}) in requests
    assert {method for method, _, _ in requests} == {"GET"}


def test_failed_build_lands_on_gantts_alternate(minicloud):
    flavor = boot.make_flavor(minicloud.context, "m1.retry", 2, 1024, 2)
    instance = _boot(minicloud, "vm-retry", flavor,
                     {faildriver.FAIL_FIRST: "yes"})

    with open(os.path.join(minicloud.fails_dir, instance.uuid)) as f:
        failed_on = f.read()
    assert failed_on in minicloud.hosts
    assert instance.host != failed_on
    _assert_holds_exactly(minicloud, instance, flavor)
    _delete(minicloud, instance)


def _reload(cloud, instance):
    with nova_context.target_cell(cloud.context, cloud.cell) as cctx:
        return objects.Instance.get_by_uuid(
            cctx, instance.uuid, expected_attrs=[
                "flavor", "system_metadata", "metadata", "info_cache"])


def _state(vm_state):
    def done(instance):
        assert instance.vm_state != vm_states.ERROR, instance.fault
        return instance.vm_state == vm_state and instance.task_state is None
    return done


def _migrations(cloud, instance):
    with nova_context.target_cell(cloud.context, cloud.cell) as cctx:
        return list(objects.MigrationList.get_by_filters(
            cctx, {"instance_uuid": instance.uuid}))


def _wait_no_allocations(cloud, consumer):
    waiting.until("no allocation of %s" % consumer,
                  lambda: not cloud.gantt_allocations(consumer),
                  interval=0.5)


def test_resize_moves_to_the_node_gantt_claimed(minicloud):
    ctx = minicloud.context
    small = boot.make_flavor(ctx, "m1.before", 1, 512, 1)
    big = boot.make_flavor(ctx, "m1.after", 2, 2048, 3)
    instance = _boot(minicloud, "vm-resize", small)
    source = minicloud.node_uuid(instance)

    with nova_context.target_cell(ctx, minicloud.cell) as cctx:
        compute_api.API().resize(cctx, _reload(minicloud, instance),
                                 flavor_id=big.flavorid)
    resized = boot.wait_for_instance(ctx, minicloud.cell, instance.uuid,
                                     _state(vm_states.RESIZED))
    assert resized.host != instance.host
    _assert_holds_exactly(minicloud, resized, big)
    [migration] = _migrations(minicloud, instance)
    # the source holds the old flavor, for the migration, until confirmed
    assert minicloud.gantt_allocations(migration.uuid) == {source: {
        "VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}

    with nova_context.target_cell(ctx, minicloud.cell) as cctx:
        compute_api.API().confirm_resize(cctx, _reload(minicloud, resized))
    boot.wait_for_instance(ctx, minicloud.cell, instance.uuid,
                           _state(vm_states.ACTIVE))
    _wait_no_allocations(minicloud, migration.uuid)
    _assert_holds_exactly(minicloud, resized, big)
    _delete(minicloud, resized)
