"""Record what Nova 34 puts on the wire, for Gantt's unit tests.

``python -m gantt.tests.nova_e2e.record_primitives`` (in the virtualenv
of tools/nova_e2e.sh) writes gantt/tests/unit/nova/nova34_primitives.json:
the primitives Nova's own serializer makes of the objects its conductor,
API and computes send to the scheduler, and of a Selection as Nova's
scheduler answers. test_recorded_primitives_are_current checks that the
file is what this nova makes.
"""

import json
import pathlib
import sys

from nova import objects
from nova.objects import base as nova_base

from gantt.tests.nova_e2e import nova_requests as nr

PATH = (pathlib.Path(__file__).resolve().parents[1] / "unit" / "nova"
        / "nova34_primitives.json")
INSTANCE = "11111111-2222-4333-8444-555555555555"
OTHER = "11111111-2222-4333-8444-666666666666"
GROUP = "22222222-3333-4444-8555-666666666666"
CELL = "33333333-4444-4555-8666-777777777777"
IMAGE = "44444444-5555-4666-8777-888888888888"
AGGREGATE = "55555555-6666-4777-8888-999999999999"
NODE = "66666666-7777-4888-8999-000000000000"


def full_spec():
    """A RequestSpec with every part Gantt reads set."""
    group = nr.server_group("anti-affinity", members=[INSTANCE, OTHER],
                            hosts=["h0"], rules={"max_server_per_host": "2"})
    group.uuid = GROUP
    image = objects.ImageMeta.from_dict({
        "id": IMAGE, "name": "cirros", "disk_format": "qcow2",
        "container_format": "bare", "properties": {
            "hw_disk_bus": "virtio", "hw_numa_nodes": 2,
            "hw_numa_cpus.0": "0,1", "hw_numa_mem.0": 512,
            "hw_numa_cpus.1": "2,3", "hw_numa_mem.1": 512,
            "trait:CUSTOM_IMAGE": "required"}})
    return nr.spec(
        num_instances=2, instance_uuid=INSTANCE, image=image,
        flavor=nr.flavor(vcpus=4, memory_mb=1024, root_gb=10,
                         extra_specs={"hw:cpu_policy": "shared"}),
        availability_zone="az1", instance_group=group,
        ignore_hosts=["h9"], scheduler_hints={"same_host": [OTHER]},
        is_bfv=True,
        requested_destination=objects.Destination(
            host="h1", node="h1", cell=objects.CellMapping(
                uuid=CELL, name="cell1"),
            aggregates=["a1,a2"], forbidden_aggregates={"a3"},
            allow_cross_cell_move=False),
        requested_resources=[objects.RequestGroup(
            requester_id="port-1", resources={"NET_BW_EGR_KILOBIT_PER_SEC":
                                              1000},
            required_traits={"CUSTOM_PHYSNET_A"})],
        request_level_params=objects.RequestLevelParams(
            root_required={"HW_CPU_X86_AVX"}, root_forbidden={"CUSTOM_X"},
            same_subtree=[["port-1"]]))


def record():
    ser = nova_base.NovaObjectSerializer()
    aggregate = objects.Aggregate(id=1, uuid=AGGREGATE, name="agg",
                                  hosts=["h1"], metadata={
                                      "availability_zone": "az1"})
    instances = objects.InstanceList(objects=[objects.Instance(
        uuid=INSTANCE, host="h1", node="h1")])
    selection = objects.Selection(
        compute_node_uuid=NODE, service_host="h1", nodename="h1",
        cell_uuid=CELL, limits=objects.SchedulerLimits(),
        allocation_request="{}", allocation_request_version="1.36",
        availability_zone="az1")
    values = {"request_spec": full_spec(), "aggregate": aggregate,
              "instance_list": instances, "selection": selection}
    return _sorted_changes(json.loads(json.dumps(
        {k: ser.serialize_entity(None, v) for k, v in values.items()},
        default=sorted)))


def _sorted_changes(value):
    """``nova_object.changes`` sorted (Nova lists a set): a stable file."""
    if isinstance(value, list):
        return [_sorted_changes(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _sorted_changes(v) for k, v in value.items()}
    if "nova_object.changes" in out:
        out["nova_object.changes"] = sorted(out["nova_object.changes"])
    return out


def main():
    PATH.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print("wrote %s" % PATH)


if __name__ == "__main__":
    sys.exit(main())
