"""The wire contract: object fingerprints, compatibility and serialization."""

import datetime

from oslo_versionedobjects import fixture
import pytest

from gantt import exception
from gantt import objects
from gantt.objects import aggregate
from gantt.objects import base
from gantt.objects import compute_node
from gantt.objects import explain
from gantt.objects import group
from gantt.objects import host_state
from gantt.objects import notification
from gantt.objects import numa
from gantt.objects import pci
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.objects import selection
from gantt.objects import statistics
from gantt.objects import usage
from gantt.tests import factories

objects.register_all()

HOST_UUID = factories.host_uuid("node1")
CHILD_UUID = factories.host_uuid("node1_pf0")
CELL_UUID = "4c7d3bd2-7c2c-4b3e-9d0f-2a5c1f0e9a11"
GROUP_UUID = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
CONSUMER_UUID = "9d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"

# NOTE(developers): this test fails when the fields (or remotable methods) of
# a registered object change. Objects travel between services of different
# releases, so such a change must come with a version bump:
#
#   1. bump the object's VERSION (e.g. "1.0" -> "1.1") and add a line to the
#      "# Version x.y: ..." history comment above it;
#   2. teach obj_make_compatible() to drop or convert the new field(s) when
#      a peer asks for an older version (and extend
#      test_primitive_round_trip_at_every_version below);
#   3. only then copy the new fingerprint printed by the failure into
#      ``expected`` here.
#
# Updating the hash alone, without steps 1 and 2, breaks rolling upgrades.
expected = {
    "AllocationItem": "1.0-2518ad18efadef6fcbbdac74aa8f943a",
    "AllocationRequest": "1.0-534a21cca5d1cd0a62f43d73081fc952",
    "Aggregate": "1.0-b5b1fc44ea289c4c288cb090da88c1dc",
    "AllocationCandidate": "1.0-e0b9fb2bad2bfa3ab9736a2d24144ba6",
    "ComputeNode": "1.6-f8d04bcb335b895f8a259433e6d997e8",
    "Destination": "1.0-75710506e044d25e65182618a60cd586",
    "Explanation": "1.1-890b7805b3b55f7034eca14c60058ebc",
    "FilterStep": "1.0-c9236948c3b56f8d5b8fbf510b996d38",
    "Flavor": "1.0-b777ab1829d95cf6be7f8752ad25e398",
    "HostState": "1.2-d201826802bfd44192312bc0864428e6",
    "ImageMeta": "1.0-7682284d5e485d3bf950d3ff3b3a7462",
    "GroupLevelPolicy": "1.0-ecd41daabf22a59fbcb4056b8496f8bf",
    "InstanceGroup": "1.1-13ab9f3a0b388070bcadca907cf8a4e5",
    "Inventory": "1.0-601555ef497b9258e392cfafb0af749b",
    "NUMACell": "1.1-5d9726b209f725a5663aad7a95416a28",
    "NUMAPagePool": "1.0-731e7ef337068955d6a28d70aa71b3cf",
    "PciDevicePool": "1.0-5d5c200614c9afcdcc0c43f52a3e6c7a",
    "ProviderUsage": "1.1-33803896cc0d0447c17a898c18b636aa",
    "RequestGroup": "1.0-39a4d91b1578524e46307139b2bd7e28",
    "ProviderReport": "1.3-68f9c5d574bbe85b7cb20835feb35228",
    "ReportResult": "1.0-5f0a32199d7e71cac6dfba3b692e7711",
    "RequestSpec": "1.3-8588ca3c80a40952ec52742e40d85ffd",
    "ResourceProvider": "1.0-7b419e572bf2d1fedb8941ccdbfe3fc0",
    "ResourceUsage": "1.0-2536df9d6eb65112b05b2977babdb5f5",
    "SchedulerStatistics": "1.2-a83b9de26d62bf2b54475ca930414934",
    "ProviderVacantPayload": "1.0-babf9215232bbc2181fe61c4f6833a13",
    "SelectDestinationsPayload": "1.2-bb817261a43e867824c1e5310bb80704",
    "Selection": "1.0-078535b8d261f06db41caf09c54337dd",
    "WeighedHost": "1.0-8f0780b564347495e21c81e8450bd312",
    "GroupMember": "1.0-7023130a47213e715aa7d5b0de0d602d",
    "GroupPlan": "1.0-688c6714c06cb8e116fe73c47e4a8f9a",
    "GroupRequest": "1.0-9b5315fe3b07f7c7b52a2fad18acacee",
    "GroupSlot": "1.0-684e4ef217e952496324c957b926df45",
    "GroupSlotRef": "1.0-9d51f86088cdfe33353a74f76a33cebb",
}

# Which version of each child object a parent embeds. When a child's VERSION
# is bumped, bump the parent too and update this tree. (oslo's checker only
# follows ObjectField children, not ListOfObjectsField ones.)
expected_relationships = {
    "AllocationCandidate": {"AllocationRequest": "1.0"},
    "ProviderReport": {"ResourceProvider": "1.0"},
    "RequestSpec": {"Destination": "1.0", "Flavor": "1.0",
                    "ImageMeta": "1.0", "InstanceGroup": "1.1",
                    "GroupSlotRef": "1.0"},
    "SelectDestinationsPayload": {"RequestSpec": "1.3"},
    "GroupMember": {"RequestSpec": "1.3"},
    "Selection": {"AllocationRequest": "1.0"},
}


def _checker():
    return fixture.ObjectVersionChecker(
        base.GanttObjectRegistry.obj_classes())


def test_versions():
    actual, expect = _checker().test_hashes(expected)
    assert actual == expect, (
        "Some objects changed their fields without a version bump; read the "
        "NOTE above ``expected`` in this file before updating the hashes")


def test_relationships():
    tree = _checker().get_dependency_tree()
    assert tree == expected_relationships


def test_compatibility_routines():
    # obj_make_compatible must accept every version each object ever had
    _checker().test_compatibility_routines()


# -- one fully populated sample per registered object -----------------------


def _allocation_request():
    return selection.AllocationRequest(allocations=[
        selection.AllocationItem(resource_provider_uuid=HOST_UUID,
                                 resources={"VCPU": 2, "MEMORY_MB": 4096})])


def _request_spec():
    return request_spec.RequestSpec(
        instance_uuid=CONSUMER_UUID, project_id="p1", user_id="u1",
        num_instances=2,
        flavor=factories.flavor(
            name="m1.big", vcpus=4, memory_mb=8192, root_gb=40,
            ephemeral_gb=10, swap=512,
            extra_specs={"trait:HW_CPU_X86_AVX2": "required"}),
        image=request_spec.ImageMeta(
            id="img-1", name="cirros",
            properties={"hw_architecture": "x86_64"}),
        request_groups=[request_spec.RequestGroup(
            suffix="1", resources={"CUSTOM_FPGA": 1},
            required_traits=["CUSTOM_GOLD"], forbidden_traits=["CUSTOM_OLD"],
            any_traits=[["CUSTOM_A", "CUSTOM_B"]],
            member_of=[["agg-1", "agg-2"]],
            forbidden_aggregates=["agg-3"], in_tree=HOST_UUID)],
        group_policy="isolate", availability_zone="az1",
        same_subtree=[["1", "_NET"]], root_required=["CUSTOM_ROOT"],
        root_forbidden=["CUSTOM_OLD"],
        instance_group=request_spec.InstanceGroup(
            uuid=GROUP_UUID, name="g", policy="anti-affinity",
            rules={"max_server_per_host": "2"}, members=[CONSUMER_UUID],
            hosts=["node1"]),
        scheduler_hints={"same_host": [CONSUMER_UUID]},
        requested_destination=request_spec.Destination(
            host="node1", node="node1", cell_uuid=CELL_UUID,
            aggregates=["agg-1,agg-2"]),
        ignore_hosts=["node9"], force_hosts=[], force_nodes=[])


def _level_policy():
    return request_spec.GroupLevelPolicy(level="rack", rule="max-per",
                                         limit=2, weight=1.5)


def _group_with_levels():
    group = _request_spec().instance_group
    group.level_policies = [_level_policy()]
    return group


def _group_request():
    return group.GroupRequest(
        group_uuid=GROUP_UUID, project_id="p1", user_id="u1",
        policies=[_level_policy()],
        members=[group.GroupMember(name="worker", count=3,
                                   request_spec=_request_spec())],
        objective="balanced", time_budget=0.5, reservation_ttl=300)


def _group_plan():
    return group.GroupPlan(
        group_uuid=GROUP_UUID, method="solver-feasible", gap=0.05,
        objective_value=-3.0, reserved=True,
        expires_at=datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC),
        seconds=0.2,
        slots=[group.GroupSlot(slot=0, member="worker",
                               reservation_uuid=CONSUMER_UUID,
                               selections=[_selection()])])


def _selection():
    return selection.Selection(
        service_host="node1", nodename="node1", compute_node_uuid=HOST_UUID,
        cell_uuid=CELL_UUID, weight=1.5, limits={"VCPU": 32},
        allocation_request=_allocation_request(),
        consumer_uuid=CONSUMER_UUID, claimed=True)


def _compute_node():
    return factories.compute_node_obj(
        "node1", cell_uuid=CELL_UUID, zone="az1",
        traits=["HW_CPU_X86_AVX2"], aggregates=["agg-1"],
        capabilities={"hypervisor_type": "QEMU"}, num_instances=3,
        num_io_ops=1, sequence=42, stats={"k": "v"}, metrics={"cpu": 0.5},
        updated_at=datetime.datetime(2026, 1, 2, 3, 4, 5,
                                     tzinfo=datetime.UTC),
        instance_uuids=[CONSUMER_UUID],
        numa_cells=[_numa_cell()], pci_pools=[_pci_pool()],
        child_providers=[_child_provider()],
        boot_id="5b0e1d2c-3f4a-4b5c-9d6e-7f8091a2b3c4",
        location="room=r1/row=b/rack=b07")


def _child_provider():
    return provider.ResourceProvider(
        uuid=CHILD_UUID, name="node1_pf0", parent_provider_uuid=HOST_UUID,
        inventories=[compute_node.Inventory(resource_class="SRIOV_NET_VF",
                                            total=8)],
        traits=["CUSTOM_PHYSNET_A"], aggregates=["agg-1"])


def _allocation_candidate():
    return provider.AllocationCandidate(
        root_provider_uuid=HOST_UUID,
        allocation_request=_allocation_request(),
        mappings={"": [HOST_UUID], "_NET": [CHILD_UUID]})


def _numa_cell():
    return numa.NUMACell(
        id=0, cpuset=[0, 1, 2, 3], pcpuset=[4, 5, 6, 7], pinned_cpus=[4],
        cpu_usage=2, memory_mb=65536, memory_usage_mb=4096,
        mempages=[numa.NUMAPagePool(size_kb=4, total=1000, used=10,
                                    reserved=5),
                  numa.NUMAPagePool(size_kb=2048, total=512, used=2)],
        siblings=[[0, 1], [2, 3], [4, 5], [6, 7]])


def _pci_pool():
    return pci.PciDevicePool(vendor_id="8086", product_id="154d",
                             numa_node=0, count=4,
                             tags={"dev_type": "type-PF"})


def _explanation():
    return explain.Explanation(
        considered=3, passed=1, summary="1 of 3 hosts available: 2 x",
        resources={"VCPU": 1}, filters=["ComputeFilter"],
        weighers=["RAMWeigher"],
        steps=[explain.FilterStep(stage="filters", name="ComputeFilter",
                                  reason="were disabled", removed=2,
                                  hosts=["node2", "node3"])],
        weighed=[explain.WeighedHost(host="node1", nodename="node1",
                                     uuid=HOST_UUID, weight=1.0,
                                     weights={"RAMWeigher": 1.0})])


def _resource_usage():
    return host_state.ResourceUsage(
        resource_class="VCPU", total=16, reserved=1, allocation_ratio=2.0,
        used=4, free=26)


SAMPLES = {
    "Aggregate": lambda: aggregate.Aggregate(
        uuid=GROUP_UUID, name="ssd", hosts=["node1"],
        metadata={"availability_zone": "az1"}),
    "AllocationItem": lambda: _allocation_request().allocations[0],
    "AllocationRequest": _allocation_request,
    "AllocationCandidate": _allocation_candidate,
    "ProviderReport": lambda: provider.ProviderReport(
        provider=_child_provider(), report_sequence=7, force=True,
        boot_id="0d6c1f0e-5b8a-4c39-9e0f-1a2b3c4d5e6f", kind="volume",
        service="cinder-volume@lvm", availability_zone="az1",
        capabilities={"thin_provisioning_support": True,
                      "total_capacity_gb": 1000.5, "max_volumes": 100,
                      "volume_backend_name": "lvm"},
        instance_uuid=CONSUMER_UUID, location="room=r1/row=b"),
    "ReportResult": lambda: provider.ReportResult(
        provider_uuid=HOST_UUID, applied=True, generation=4,
        refused={"DISK_GB": "900 in use exceeds the new capacity 500"}),
    "ResourceProvider": _child_provider,
    "ComputeNode": _compute_node,
    "Destination": lambda: _request_spec().requested_destination,
    "Explanation": _explanation,
    "FilterStep": lambda: _explanation().steps[0],
    "Flavor": lambda: _request_spec().flavor,
    "HostState": lambda: host_state.HostState(
        uuid=HOST_UUID, host="node1", nodename="node1", cell_uuid=CELL_UUID,
        availability_zone="az1", resources=[_resource_usage()],
        traits=["HW_CPU_X86_AVX2"], aggregates=["agg-1"], num_instances=1,
        num_io_ops=0, generation=7, report_sequence=42,
        updated_at=datetime.datetime(2026, 1, 2,
                                     tzinfo=datetime.UTC),
        up=True, disabled=False, kind="container", service="zun-compute",
        capabilities={"runtime": "runc", "cpu_shares": 1024},
        instance_uuid=CONSUMER_UUID, vacant=True, location="rack=b07"),
    "ImageMeta": lambda: _request_spec().image,
    "NUMACell": _numa_cell,
    "NUMAPagePool": lambda: _numa_cell().mempages[1],
    "PciDevicePool": _pci_pool,
    "InstanceGroup": lambda: _group_with_levels(),
    "GroupLevelPolicy": _level_policy,
    "Inventory": lambda: compute_node.Inventory(
        resource_class="VCPU", total=16, reserved=2, min_unit=1, max_unit=8,
        step_size=2, allocation_ratio=4.0),
    "ProviderUsage": lambda: usage.ProviderUsage(
        resource_provider_uuid=HOST_UUID, generation=3,
        usages={"VCPU": 2}, changed_at=1795000000.25),
    "RequestGroup": lambda: _request_spec().request_groups[0],
    "RequestSpec": _request_spec,
    "ResourceUsage": _resource_usage,
    "SchedulerStatistics": lambda: statistics.SchedulerStatistics(
        worker="w1", hosts=3, requests=4, placements=3, no_valid_host=1,
        claim_conflicts=0, reports_applied=5, reports_stale=1,
        messages_rejected=0, filter_eliminations={"lacked VCPU": 2},
        peer_updates=10, peer_lag_p50_ms=1.5, peer_lag_p99_ms=9.0,
        oldest_report_s=4.5, min_report_sequence=40,
        rpc_api_version="1.5"),
    "ProviderVacantPayload": lambda: notification.ProviderVacantPayload(
        provider_uuid=HOST_UUID, kind="container", generation=12,
        name="ctr-1", service="zun-compute", instance_uuid=CONSUMER_UUID),
    "SelectDestinationsPayload": lambda: (
        notification.SelectDestinationsPayload(
            request_spec=_request_spec(), instance_uuids=[CONSUMER_UUID],
            destinations=[_selection()], reason=None)),
    "Selection": _selection,
    "WeighedHost": lambda: _explanation().weighed[0],
    "GroupMember": lambda: _group_request().members[0],
    "GroupRequest": lambda: _group_request(),
    "GroupSlot": lambda: _group_plan().slots[0],
    "GroupPlan": lambda: _group_plan(),
    "GroupSlotRef": lambda: group.GroupSlotRef(group_uuid=GROUP_UUID,
                                               slot=2),
}


def test_every_object_has_a_sample():
    # a new object must be added to SAMPLES (and to ``expected``)
    assert sorted(SAMPLES) == sorted(expected)


def _set_fields(obj):
    """The set fields as plain data, nested objects included.

    NOTE: not ``obj == other``: ComparableVersionedObject compares
    primitives whose list of changed fields comes from a set, in an order
    that can differ between two equal objects.
    """
    return obj.obj_to_dict()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_primitive_round_trip_at_every_version(name):
    """obj_make_compatible: each version a peer may ask for serialises, and
    comes back with exactly the fields that version knows."""
    obj = SAMPLES[name]()
    cls = type(obj)
    assert cls.VERSION == expected[name].split("-")[0]
    for version, dropped in [(cls.VERSION, ())] + OLDER.get(name, []):
        primitive = obj.obj_to_primitive(target_version=version)
        assert primitive["gantt_object.version"] == version
        assert primitive["gantt_object.namespace"] == "gantt"
        back = base.GanttObject.obj_from_primitive(primitive)
        assert type(back) is cls
        assert _set_fields(back) == _without(_set_fields(obj), dropped)


def _generic_primitive(obj):
    """What oslo.versionedobjects itself makes of ``obj`` (Gantt's base
    class overrides it with a faster path), nested objects included."""
    ovo = base.ovo_base.VersionedObject
    data = {}
    for name, field in obj.fields.items():
        if obj.obj_attr_is_set(name):
            value = getattr(obj, name)
            data[name] = (_generic_value(value) if _has_objects(value)
                          else field.to_primitive(obj, name, value))
    primitive = {"gantt_object.name": obj.obj_name(),
                 "gantt_object.namespace": "gantt",
                 "gantt_object.version": obj.VERSION,
                 "gantt_object.data": data}
    changes = ovo.obj_what_changed(obj) & set(data)
    if changes:
        primitive["gantt_object.changes"] = sorted(changes)
    return primitive


def _has_objects(value):
    if isinstance(value, base.GanttObject):
        return True
    return isinstance(value, list) and any(
        isinstance(v, base.GanttObject) for v in value)


def _generic_value(value):
    if isinstance(value, base.GanttObject):
        return _generic_primitive(value)
    if isinstance(value, list):
        return [_generic_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _generic_value(v) for k, v in value.items()}
    return value


def _sorted_changes(primitive):
    if isinstance(primitive, list):
        return [_sorted_changes(v) for v in primitive]
    if not isinstance(primitive, dict):
        return primitive
    return {k: sorted(v) if k == "gantt_object.changes" else
            _sorted_changes(v) for k, v in primitive.items()}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("changes", ["all", "none", "nested only"])
def test_the_fast_primitive_is_what_ovo_would_send(name, changes):
    """Field for field, and with the same changed fields, what the wire
    carries must not depend on the fast path."""
    obj = SAMPLES[name]()
    if changes == "none":
        obj.obj_reset_changes(recursive=True)
    elif changes == "nested only":
        obj.obj_reset_changes()
    generic = _sorted_changes(_generic_primitive(obj))
    fast = obj.obj_to_primitive()
    # ovo's own, called directly, agrees on the top level
    reference = base.ovo_base.VersionedObject.obj_to_primitive(obj)
    assert _sorted_changes(fast) == generic
    assert set(fast.get("gantt_object.changes", ())) == set(
        reference.get("gantt_object.changes", ()))
    assert fast["gantt_object.data"].keys() == (
        reference["gantt_object.data"].keys())
    assert base.ovo_base.VersionedObject.obj_what_changed(obj) == (
        obj.obj_what_changed())


def _without(data, dropped):
    """``data`` without the fields named in ``dropped``; ``a.b`` drops
    field ``b`` of every object in the list ``a``."""
    out = {k: v for k, v in data.items() if k not in dropped}
    for name in dropped:
        outer, _, inner = name.partition(".")
        if inner and outer in out:
            out[outer] = [_without(item, [inner]) for item in out[outer]]
    return out


#: older versions still spoken, and the fields they do not know
OLDER = {
    "ComputeNode": [("1.5", ("location",)),
                    ("1.4", ("location", "boot_id")),
                    ("1.3", ("location", "boot_id", "numa_cells.siblings")),
                    ("1.2", ("location", "boot_id", "numa_cells.siblings",
                             "child_providers")),
                    ("1.1", ("location", "boot_id", "numa_cells",
                             "pci_pools", "child_providers")),
                    ("1.0", ("location", "boot_id", "instance_uuids",
                             "numa_cells", "pci_pools", "child_providers"))],
    "NUMACell": [("1.0", ("siblings",))],
    "Explanation": [("1.0", ("profile", "packing"))],
    "ProviderReport": [
        ("1.2", ("location",)),
        ("1.1", ("location", "kind", "service", "availability_zone",
                 "capabilities", "instance_uuid")),
        ("1.0", ("location", "boot_id", "kind", "service",
                 "availability_zone", "capabilities", "instance_uuid"))],
    "HostState": [("1.1", ("location",)),
                  ("1.0", ("location", "kind", "service", "capabilities",
                           "instance_uuid", "vacant"))],
    "RequestSpec": [("1.1", ("profile", "packing", "capabilities")),
                    ("1.0", ("same_subtree", "root_required",
                             "root_forbidden"))],
    "ProviderUsage": [("1.0", ("changed_at",))],
    "SchedulerStatistics": [("1.1", ("rpc_api_version",)),
                            ("1.0", ("peer_updates", "peer_lag_p50_ms",
                                     "peer_lag_p99_ms", "oldest_report_s",
                                     "min_report_sequence",
                                     "rpc_api_version"))],
}


def test_a_1_0_agent_report_reads_as_not_telling_its_instances():
    primitive = _compute_node().obj_to_primitive(target_version="1.0")
    node = base.GanttObject.obj_from_primitive(primitive)
    assert type(node) is compute_node.ComputeNode
    assert node.instance_uuids is None     # out of the orphan audit


@pytest.mark.parametrize("name", ["ComputeNode", "RequestSpec", "Selection"])
def test_rpc_serializer_round_trip(name):
    serializer = base.GanttObjectSerializer()
    obj = SAMPLES[name]()
    wire = serializer.serialize_entity(None, obj)
    assert isinstance(wire, dict)  # plain primitives, fit for a message bus
    back = serializer.deserialize_entity(None, wire)
    assert type(back) is type(obj)
    assert back.obj_to_dict() == obj.obj_to_dict()


def test_serializer_keeps_nested_request_spec_objects():
    serializer = base.GanttObjectSerializer()
    spec = serializer.deserialize_entity(
        None, serializer.serialize_entity(None, _request_spec()))
    assert isinstance(spec.flavor, request_spec.Flavor)
    assert spec.flavor.swap == 512
    assert spec.flavor.extra_specs == {"trait:HW_CPU_X86_AVX2": "required"}
    assert isinstance(spec.image, request_spec.ImageMeta)
    assert spec.image.properties == {"hw_architecture": "x86_64"}
    assert isinstance(spec.instance_group, request_spec.InstanceGroup)
    assert spec.instance_group.rules == {"max_server_per_host": "2"}
    assert isinstance(spec.request_groups[0], request_spec.RequestGroup)
    assert spec.request_groups[0].any_traits == [["CUSTOM_A", "CUSTOM_B"]]
    assert isinstance(spec.requested_destination, request_spec.Destination)
    assert spec.requested_destination.cell_uuid == CELL_UUID


def test_serializer_keeps_selection_allocation_request():
    serializer = base.GanttObjectSerializer()
    sel = serializer.deserialize_entity(
        None, serializer.serialize_entity(None, [_selection()]))[0]
    assert sel.claimed is True
    assert sel.allocation_request.as_mapping() == {
        HOST_UUID: {"VCPU": 2, "MEMORY_MB": 4096}}


@pytest.mark.parametrize("field, default", [
    ("reserved", 0),
    ("min_unit", 1),
    ("max_unit", 2147483647),
    ("step_size", 1),
    ("allocation_ratio", 1.0),
])
def test_inventory_defaults_when_unset(field, default):
    inv = compute_node.Inventory(resource_class="VCPU", total=8)
    assert getattr(inv, field) == default
    assert type(getattr(inv, field)) is type(default)


def test_minimal_inventory_survives_the_wire():
    # an agent may send only class and total; the receiver reads defaults
    inv = compute_node.Inventory(resource_class="VCPU", total=8)
    back = base.GanttObject.obj_from_primitive(
        inv.obj_to_primitive())
    assert (back.min_unit, back.step_size, back.allocation_ratio) == (
        1, 1, 1.0)


@pytest.mark.parametrize("field, value", [
    ("total", -1),
    ("reserved", -1),
])
def test_inventory_rejects_negative_amounts(field, value):
    kwargs = {"resource_class": "VCPU", "total": 8, field: value}
    with pytest.raises(ValueError):
        compute_node.Inventory(**kwargs)


def test_obj_to_dict_is_plain():
    node = _compute_node()
    data = node.obj_to_dict()
    assert data["inventories"][0] == {
        "resource_class": "VCPU", "total": 16, "allocation_ratio": 1.0}
    assert data["updated_at"] == "2026-01-02T03:04:05+00:00"


def test_a_group_with_level_policies_is_never_sent_to_an_older_worker():
    """An older worker would place the group ignoring its level policies:
    the caller is told, nothing is silently dropped."""
    spec = _request_spec()
    spec.instance_group = _group_with_levels()
    with pytest.raises(exception.VersionCapped) as err:
        spec.obj_to_primitive(target_version="1.2", version_manifest={
            "InstanceGroup": "1.0", "Flavor": "1.0", "ImageMeta": "1.0",
            "RequestGroup": "1.0", "Destination": "1.0"})
    assert "level policies" in str(err.value)


def test_a_group_without_level_policies_still_reaches_an_older_worker():
    primitive = _request_spec().instance_group.obj_to_primitive(
        target_version="1.0")
    assert "level_policies" not in primitive["gantt_object.data"]
