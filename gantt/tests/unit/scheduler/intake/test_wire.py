"""A report from its wire form: peek, and the fast path equal to the
object path (gantt.scheduler.intake.wire).

Every report here goes through the wire form (``obj_to_primitive`` then a
JSON round trip), as a cast's argument reaches the intake.
"""

import datetime
import threading

import pytest

from gantt import exception
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa as numa_obj
from gantt.objects import provider as provider_obj
from gantt.scheduler.intake import wire
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler.intake import casts

AGG = "6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5"


def _object_report(primitive, received_at=1.0):
    """What the object path (and so the code before the intake) builds."""
    node = wire.deserialize(primitive)
    return update_mod.HostUpdate.from_compute_node(node, received_at)


FULL = dict(
    zone="az1", cell_uuid="aaaaaaaa-0000-4000-8000-000000000001",
    traits=["HW_CPU_X86_AVX2", "CUSTOM_GOLD"], aggregates=[AGG],
    capabilities={"hypervisor_type": "QEMU"}, disabled=True,
    num_instances=3, num_io_ops=2,
    extra_inventories=[cn_obj.Inventory(resource_class="CUSTOM_FPGA",
                                        total=2, reserved=1, min_unit=1,
                                        max_unit=2, step_size=1,
                                        allocation_ratio=1.5)],
    stats={"failed_builds": "1"}, metrics={"cpu.percent": 12.5},
    instance_uuids=["0f3f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"],
    updated_at=datetime.datetime(2024, 5, 1, 12, 0, 0,
                                 tzinfo=datetime.timezone.utc))


@pytest.mark.parametrize("fields", [{}, FULL], ids=["minimal", "full"])
@pytest.mark.parametrize("version", [None, "1.0", "1.2"])
def test_fast_report_equals_the_object_path(fields, version):
    primitive = casts.primitive(casts.node(**fields), version)
    report = wire.fast_report(primitive, 1.0)
    assert report == _object_report(primitive)
    assert wire.build_report(primitive, 1.0) == (report, None)


@pytest.mark.parametrize("change", [
    # values oslo.versionedobjects coerces: only the object path may judge
    lambda d: d.update(host=123),
    lambda d: d.update(report_sequence="12"),
    lambda d: d.update(disabled=1),
    lambda d: d["inventories"][0]["gantt_object.data"].update(total="16"),
    lambda d: d.update(metrics={"load": "1.5"}),
    lambda d: d.update(unknown_field=1),
    # null means the default for a field that has one
    lambda d: d.update(traits=None, inventories=None),
], ids=["int host", "str sequence", "int disabled", "str total",
        "str metric", "unknown field", "nulls"])
def test_unusual_primitives_take_the_object_path(change):
    primitive = casts.primitive(casts.node())
    change(casts.data(primitive))
    with pytest.raises(wire._ObjectPath):
        wire.fast_report(primitive, 1.0)
    report, node = wire.build_report(primitive, 1.0)
    assert node is not None
    assert report == _object_report(primitive)


def test_numa_cells_and_child_providers_take_the_object_path():
    node = casts.node(numa_cells=[numa_obj.NUMACell(
        id=0, cpuset=[0, 1], memory_mb=1024)],
        child_providers=[provider_obj.ResourceProvider(
            uuid="0c8f3e1a-2b4d-4c6e-8f0a-1b2c3d4e5f60", name="host1_pf0",
            parent_provider_uuid=factories.host_uuid("host1"),
            inventories=[cn_obj.Inventory(resource_class="SRIOV_NET_VF",
                                          total=8)])])
    primitive = casts.primitive(node)
    with pytest.raises(wire._ObjectPath):
        wire.fast_report(primitive, 1.0)
    report, made = wire.build_report(primitive, 1.0)
    assert made is not None and len(report.children) == 1
    assert report == _object_report(primitive)


BAD = {
    "missing uuid": (lambda d: d.pop("uuid"), "ComputeNode.uuid is required"),
    "empty host": (lambda d: d.update(host=""), "ComputeNode.host must be"),
    "long nodename": (lambda d: d.update(nodename="n" * 201),
                      "ComputeNode.nodename must be"),
    "bad aggregate": (lambda d: d.update(aggregates=["rack-1"]),
                      "'rack-1' is not a uuid"),
    "unknown class": (
        lambda d: d["inventories"][0]["gantt_object.data"].update(
            resource_class="GPU"), "unknown resource class 'GPU'"),
    "class twice": (lambda d: d["inventories"].append(d["inventories"][0]),
                    "resource class VCPU reported twice"),
    "reserved above total": (
        lambda d: d["inventories"][1]["gantt_object.data"].update(
            reserved=10 ** 9), "MEMORY_MB: reserved 1000000000 exceeds"),
    "zero step": (lambda d: d["inventories"][0]["gantt_object.data"].update(
        step_size=0), "VCPU: need 1 <= min_unit <= max_unit"),
    "zero ratio": (lambda d: d["inventories"][0]["gantt_object.data"].update(
        allocation_ratio=0.0), "VCPU: allocation_ratio must be positive"),
    "unknown trait": (lambda d: d.update(traits=["shiny"]),
                      "unknown trait 'shiny'"),
    "negative total": (
        lambda d: d["inventories"][0]["gantt_object.data"].update(total=-1),
        "malformed object"),
    "inventories not a list": (lambda d: d.update(inventories={"a": 1}),
                               "malformed object"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_reports_are_refused_with_a_reason(name):
    change, reason = BAD[name]
    primitive = casts.primitive(casts.node())
    change(casts.data(primitive))
    with pytest.raises(exception.InvalidRequest) as err:
        wire.build_report(primitive, 1.0)
    assert reason in str(err.value)


@pytest.mark.parametrize("primitive, reason", [
    ({"uuid": "nope"}, "must be a ComputeNode object, got dict"),
    ("nope", "must be a ComputeNode object, got str"),
    (None, "must be a ComputeNode object, got NoneType"),
    ({"gantt_object.name": "ComputeNode", "gantt_object.namespace": "gantt",
      "gantt_object.version": "1.99", "gantt_object.data": {}},
     "object version not supported"),
    ({"gantt_object.name": "Nope", "gantt_object.namespace": "gantt",
      "gantt_object.version": "1.0", "gantt_object.data": {}},
     "malformed object"),
])
def test_what_is_not_a_report_is_refused(primitive, reason):
    assert wire.peek(primitive) is None
    with pytest.raises(exception.InvalidRequest) as err:
        wire.build_report(primitive, 1.0)
    assert reason in str(err.value)


def test_what_is_known_valid_is_checked_once_and_bad_values_always():
    known = wire.KnownValid(size=2)
    good = casts.primitive(casts.node(**FULL))
    report = wire.fast_report(good, 1.0, known)
    assert report == wire.fast_report(good, 1.0, known)
    assert known._traits == set(FULL["traits"])
    assert known._uuids == {AGG}
    bad = casts.primitive(casts.node(**FULL))
    casts.data(bad)["traits"].append("shiny")
    with pytest.raises(exception.InvalidRequest, match="unknown trait"):
        wire.fast_report(bad, 1.0, known)
    # bounded: more values than it keeps clear it first
    known.traits(["COMPUTE_NET_ATTACH_INTERFACE", "HW_CPU_X86_SSE"])
    assert len(known._traits) == 4
    known.traits(["CUSTOM_SILVER"])
    assert known._traits == {"CUSTOM_SILVER"}


def test_threads_sharing_what_is_known_valid_refuse_each_bad_report():
    known = wire.KnownValid(size=3)
    refused = []

    def parse(trait):
        for _ in range(50):
            primitive = casts.primitive(casts.node(traits=[trait]))
            try:
                wire.fast_report(primitive, 1.0, known)
            except exception.InvalidRequest:
                refused.append(trait)

    traits = ["HW_CPU_X86_AVX2", "CUSTOM_GOLD", "shiny", "HW_CPU_X86_SSE"]
    threads = [threading.Thread(target=parse, args=(t,)) for t in traits]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused == ["shiny"] * 50
