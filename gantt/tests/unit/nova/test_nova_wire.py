"""Nova 34's primitives, as its own serializer made them (recorded in
nova34_primitives.json by gantt.tests.nova_e2e.record_primitives), read
without Nova and translated to Gantt's request."""

import copy
import json
import pathlib

import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt.nova import objects as nova_objects
from gantt.nova import server as nova_server
from gantt.nova import translate
from gantt.objects import selection as selection_obj

CELL = "33333333-4444-4555-8666-777777777777"
RECORDED = json.loads((pathlib.Path(__file__).parent
                       / "nova34_primitives.json").read_text())


def _read(name, mutate=None):
    primitive = copy.deepcopy(RECORDED[name])
    if mutate is not None:
        mutate(primitive)
    return nova_server.NovaSerializer().deserialize_entity({}, primitive)


def _refusal(name, mutate):
    with pytest.raises(messaging.ExpectedException) as caught:
        _read(name, mutate)
    return caught.value.exc_info[1]


def test_novas_request_spec_becomes_gantts():
    spec = translate.request_spec(_read("request_spec"))

    assert spec.instance_uuid == "11111111-2222-4333-8444-555555555555"
    assert spec.num_instances == 2
    assert spec.availability_zone == "az1"
    # boot from volume: no root disk asked for
    assert (spec.flavor.vcpus, spec.flavor.memory_mb, spec.flavor.root_gb) \
        == (4, 1024, 0)
    assert spec.flavor.extra_specs == {"hw:cpu_policy": "shared"}
    assert spec.image.properties == {
        "hw_disk_bus": "virtio", "hw_numa_nodes": "2",
        "hw_numa_cpus.0": "0,1", "hw_numa_cpus.1": "2,3",
        "hw_numa_mem.0": "512", "hw_numa_mem.1": "512",
        "trait:CUSTOM_IMAGE": "required", "disk_format": "qcow2"}
    group = spec.instance_group
    assert (group.policy, group.rules, group.hosts) == (
        "anti-affinity", {"max_server_per_host": "2"}, ["h0"])
    assert len(group.members) == 2
    dest = spec.requested_destination
    assert (dest.host, dest.node, dest.cell_uuid, dest.aggregates) == (
        "h1", "h1", "33333333-4444-4555-8666-777777777777", ["a1,a2"])
    assert spec.ignore_hosts == ["h9"]
    assert spec.scheduler_hints == {
        "same_host": ["11111111-2222-4333-8444-666666666666"]}
    assert spec.root_required == ["HW_CPU_X86_AVX"]
    assert spec.root_forbidden == ["CUSTOM_X"]
    assert spec.same_subtree == [["port-1"]]


def test_ports_and_forbidden_aggregates_become_request_groups():
    groups = translate.request_spec(_read("request_spec")).request_groups

    port, forbidden = groups
    assert port.suffix == "port-1"
    assert port.resources == {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}
    assert port.required_traits == ["CUSTOM_PHYSNET_A"]
    assert (forbidden.suffix, forbidden.forbidden_aggregates) == ("", ["a3"])


def test_a_newer_minor_version_is_read_and_its_new_fields_ignored():
    def newer(p):
        p["nova_object.version"] = "1.99"
        p["nova_object.data"]["some_future_field"] = {"x": 1}

    assert _read("request_spec", newer).num_instances == 2


def test_another_major_version_is_refused():
    def major(p):
        p["nova_object.version"] = "2.0"

    error = _refusal("request_spec", major)
    assert isinstance(error, exception.InvalidRequest)
    assert "RequestSpec" in str(error)


def test_a_field_of_the_wrong_type_is_refused():
    def bad(p):
        p["nova_object.data"]["num_instances"] = "many"

    error = _refusal("request_spec", bad)
    assert isinstance(error, exception.InvalidRequest)
    assert "RequestSpec.num_instances" in str(error)


def test_an_object_of_another_namespace_is_refused():
    def gantt(p):
        p["nova_object.namespace"] = "gantt"

    assert "malformed" in str(_refusal("aggregate", gantt))


def test_an_unknown_object_is_refused():
    def unknown(p):
        p["nova_object.name"] = "ComputeNode"

    assert "ComputeNode" in str(_refusal("aggregate", unknown))


def test_aggregates_and_instance_lists_are_read():
    aggregate = _read("aggregate")
    instances = _read("instance_list")

    assert (aggregate.hosts, aggregate.metadata) == (
        ["h1"], {"availability_zone": "az1"})
    assert [i.uuid for i in instances.objects] == [
        "11111111-2222-4333-8444-555555555555"]


def test_gantts_selection_is_written_as_novas():
    sel = translate.selection(_gantt_selection(), "az1", CELL)
    mine = nova_objects.NovaObjectSerializer().serialize_entity(None, sel)
    nova = RECORDED["selection"]

    for key in ("nova_object.name", "nova_object.namespace",
                "nova_object.version"):
        assert mine[key] == nova[key]
    assert sorted(mine["nova_object.data"]) == sorted(
        nova["nova_object.data"])
    limits = mine["nova_object.data"]["limits"]
    novas = nova["nova_object.data"]["limits"]
    assert limits["nova_object.version"] == novas["nova_object.version"]
    # every field of Nova 34's SchedulerLimits set, as Nova's conductor
    # reads them all (SchedulerLimits.to_dict, for each Selection)
    assert sorted(limits["nova_object.data"]) == [
        "disk_gb", "memory_mb", "numa_topology", "vcpu"]


def test_every_field_of_the_limits_is_set():
    """Nova's conductor calls ``SchedulerLimits.to_dict``, which reads
    every field: one left unset fails the build (NotImplementedError)."""
    gantt_sel = _gantt_selection()
    gantt_sel.limits = {"vcpu": 4}
    sel = translate.selection(gantt_sel, "az1", CELL)
    limits = nova_objects.NovaObjectSerializer().serialize_entity(
        None, sel)["nova_object.data"]["limits"]["nova_object.data"]

    assert limits == {"numa_topology": None, "vcpu": 4, "disk_gb": None,
                      "memory_mb": None}


def test_the_allocation_request_is_placements_body_at_1_36():
    sel = translate.selection(_gantt_selection(), None, None)

    assert sel.allocation_request_version == "1.36"
    assert json.loads(sel.allocation_request) == {
        "allocations": {
            "66666666-7777-4888-8999-000000000000": {
                "resources": {"VCPU": 1, "MEMORY_MB": 512}}},
        "mappings": {"": ["66666666-7777-4888-8999-000000000000"]}}


def test_a_selection_for_nova_1_0_drops_the_zone():
    sel = translate.selection(_gantt_selection(), "az1", None)

    primitive = sel.obj_to_primitive(target_version="1.0")

    assert "availability_zone" not in primitive["nova_object.data"]


def test_the_default_cell_is_named_for_a_host_without_one():
    assert translate.selection(_gantt_selection(), None, CELL).cell_uuid \
        == CELL


def _gantt_selection():
    node = "66666666-7777-4888-8999-000000000000"
    return selection_obj.Selection(
        service_host="h1", nodename="h1", compute_node_uuid=node,
        consumer_uuid="11111111-2222-4333-8444-555555555555",
        limits={}, allocation_request=selection_obj.AllocationRequest(
            allocations=[selection_obj.AllocationItem(
                resource_provider_uuid=node,
                resources={"VCPU": 1, "MEMORY_MB": 512})]))
