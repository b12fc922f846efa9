"""The stats intake: peek, drop stale, coalesce, build reports cheaply.

Every report here goes through the wire form (``obj_to_primitive`` then a
JSON round trip), as a cast's argument reaches the intake.
"""

import datetime
import json
import random
import threading

import pytest

from gantt import exception
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa as numa_obj
from gantt.objects import provider as provider_obj
from gantt.scheduler.intake import stats_intake
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests import stored_hosts

AGG = "6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5"


def _wire(node, version=None):
    """``node`` as a cast delivers it: a primitive through JSON."""
    primitive = (node.obj_to_primitive(target_version=version) if version
                 else node.obj_to_primitive())
    return json.loads(json.dumps(primitive))


def _node(name="host1", sequence=10, **fields):
    return factories.compute_node_obj(name, sequence=sequence, **fields)


def _object_report(primitive, received_at=1.0):
    """What the object path (and so the code before the intake) builds."""
    node = stats_intake.deserialize(primitive)
    return update_mod.HostUpdate.from_compute_node(node, received_at)


def _data(primitive):
    return primitive["gantt_object.data"]


def _stats(manager):
    values = manager.counters.values
    return (values["reports_applied"], values["reports_stale"],
            values["messages_rejected"])


def _cached_sequence(manager, name):
    table = manager.cache.table
    return int(table.report_sequence[
        table.row_by_uuid[factories.host_uuid(name)]])


@pytest.fixture
def intake(manager):
    return stats_intake.StatsIntake(manager)


# -- the report: fast path equals the object path -----------------------------


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
    primitive = _wire(_node(**fields), version)
    report = stats_intake.fast_report(primitive, 1.0)
    assert report == _object_report(primitive)
    assert stats_intake.build_report(primitive, 1.0) == (report, None)


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
    primitive = _wire(_node())
    change(_data(primitive))
    with pytest.raises(stats_intake._ObjectPath):
        stats_intake.fast_report(primitive, 1.0)
    report, node = stats_intake.build_report(primitive, 1.0)
    assert node is not None
    assert report == _object_report(primitive)


def test_numa_cells_and_child_providers_take_the_object_path():
    node = _node(numa_cells=[numa_obj.NUMACell(
        id=0, cpuset=[0, 1], memory_mb=1024)],
        child_providers=[provider_obj.ResourceProvider(
            uuid="0c8f3e1a-2b4d-4c6e-8f0a-1b2c3d4e5f60", name="host1_pf0",
            parent_provider_uuid=factories.host_uuid("host1"),
            inventories=[cn_obj.Inventory(resource_class="SRIOV_NET_VF",
                                          total=8)])])
    primitive = _wire(node)
    with pytest.raises(stats_intake._ObjectPath):
        stats_intake.fast_report(primitive, 1.0)
    report, made = stats_intake.build_report(primitive, 1.0)
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
    primitive = _wire(_node())
    change(_data(primitive))
    with pytest.raises(exception.InvalidRequest) as err:
        stats_intake.build_report(primitive, 1.0)
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
    assert stats_intake.peek(primitive) is None
    with pytest.raises(exception.InvalidRequest) as err:
        stats_intake.build_report(primitive, 1.0)
    assert reason in str(err.value)


# -- the intake ---------------------------------------------------------------


def test_a_new_host_is_stored_then_unchanged_reports_skip_the_database(
        manager, intake):
    intake.take(_wire(_node(sequence=10)))
    intake.flush()
    (stored,) = stored_hosts.load_hosts(manager.db)
    assert stored.report["report_sequence"] == 10
    intake.take(_wire(_node(sequence=11)))
    intake.flush()
    # in the cache, not written again (report_persist_interval)
    assert _cached_sequence(manager, "host1") == 11
    (stored,) = stored_hosts.load_hosts(manager.db)
    assert stored.report["report_sequence"] == 10
    assert _stats(manager) == (2, 0, 0)


def test_draining_leaves_database_writes_to_the_storing_thread(
        manager, intake):
    intake.take(_wire(_node(sequence=10)))
    intake.drain()
    # a host new to the cache must be stored first: not done by drain()
    assert (intake.pending(), len(manager.cache)) == (1, 0)
    assert stored_hosts.load_hosts(manager.db) == []
    intake.take(_wire(_node(sequence=11)))
    intake.drain()
    # the newer one replaced it in the storing queue
    assert intake.pending() == 1
    intake.flush()
    (stored,) = stored_hosts.load_hosts(manager.db)
    assert stored.report["report_sequence"] == 11
    assert _cached_sequence(manager, "host1") == 11
    assert _stats(manager) == (1, 1, 0)


def test_a_changed_report_is_stored(manager, intake):
    intake.take(_wire(_node(sequence=10)))
    intake.take(_wire(_node(sequence=11, vcpus=64)))
    intake.flush()
    (stored,) = stored_hosts.load_hosts(manager.db)
    assert stored.report["report_sequence"] == 11
    assert stored.inventories["VCPU"][0] == 64


def test_stale_reports_are_dropped_before_they_are_read(
        manager, intake, monkeypatch):
    intake.take(_wire(_node(sequence=10)))
    intake.flush()
    built = []
    real = stats_intake.build_report
    monkeypatch.setattr(stats_intake, "build_report",
                        lambda *a: built.append(a) or real(*a))
    stale = _wire(_node(sequence=9))
    # even a stale report that would be refused is only counted stale: it
    # was never read past its uuid and sequence
    _data(stale)["inventories"][0]["gantt_object.data"]["total"] = -1
    intake.take(stale)
    intake.take(_wire(_node(sequence=10)))
    intake.flush()
    assert built == []
    assert _cached_sequence(manager, "host1") == 10
    assert _stats(manager) == (1, 2, 0)


def test_queued_reports_coalesce_and_the_newest_is_applied(manager, intake):
    for sequence in (11, 14, 12, 13):
        intake.take(_wire(_node(sequence=sequence, vcpus=sequence)))
    intake.take(_wire(_node("host2", sequence=5)))
    assert intake.pending() == 2
    intake.flush()
    assert intake.pending() == 0
    assert _cached_sequence(manager, "host1") == 14
    assert _cached_sequence(manager, "host2") == 5
    # 11 replaced by 14; 12 and 13 older than the pending 14
    assert _stats(manager) == (2, 3, 0)
    view = {s.host: s for s in manager.get_host_states()}
    vcpu = {r.resource_class: r.total for r in view["host1"].resources}
    assert vcpu["VCPU"] == 14


def test_a_bad_report_is_counted_and_keeps_the_pending_good_one(
        manager, intake, caplog):
    intake.take(_wire(_node(sequence=10)))
    bad = _wire(_node(sequence=11, reserved_memory_mb=10 ** 9))
    intake.take(bad)
    intake.flush()
    assert _cached_sequence(manager, "host1") == 10
    assert _stats(manager) == (1, 0, 1)
    assert ("Rejected update_resource_stats message: Invalid request: "
            "MEMORY_MB: reserved") in caplog.text


@pytest.mark.parametrize("sequence", [2 ** 63, 2 ** 64, -2 ** 63 - 1])
def test_a_sequence_beyond_64_bits_is_refused_not_compared(
        manager, intake, caplog, sequence):
    intake.take(_wire(_node(sequence=10)))
    intake.flush()
    intake.take(_wire(_node(sequence=sequence)))
    intake.flush()
    assert _cached_sequence(manager, "host1") == 10
    assert _stats(manager) == (1, 0, 1)
    assert "report_sequence must be between" in caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("junk", [None, "x", 7, [], {"uuid": "nope"},
                                  {"gantt_object.name": "ComputeNode"}])
def test_junk_never_raises_and_is_counted(manager, intake, junk):
    intake.take(junk)
    intake.offer(junk)
    intake.flush()
    assert _stats(manager) == (0, 0, 2)
    assert len(manager.cache) == 0


def test_a_failure_while_applying_is_logged_and_the_rest_applied(
        manager, intake, monkeypatch, caplog):
    intake.take(_wire(_node("host1", sequence=1)))
    intake.take(_wire(_node("host2", sequence=1)))
    real = manager.update_resource_stats

    def broken(node):
        if node.host == "host1":
            raise RuntimeError("boom")
        return real(node)

    monkeypatch.setattr(manager, "update_resource_stats", broken)
    intake.flush()
    assert {s.host for s in manager.get_host_states()} == {"host2"}
    assert "Could not store the report 1 of host1" in caplog.text


def test_the_intake_thread_applies_offered_reports(manager, intake):
    intake.start()
    for sequence in range(1, 50):
        intake.offer(_wire(_node(sequence=sequence)))
    intake.stop()
    assert _cached_sequence(manager, "host1") == 49
    applied, stale, rejected = _stats(manager)
    assert (applied + stale, rejected) == (49, 0)


def test_concurrent_intake_keeps_each_hosts_newest_report(manager, intake):
    """Three listeners offer shuffled reports of the same hosts while the
    intake's thread and the listeners themselves apply them."""
    hosts = ["host%d" % i for i in range(20)]
    sequences = list(range(1, 31))
    primitives = [_wire(_node(h, sequence=s)) for h in hosts
                  for s in sequences]
    random.Random(7).shuffle(primitives)
    intake.start()

    def listener(part, inline):
        for primitive in part:
            if inline:
                intake.take(primitive)
                intake.drain()
            else:
                intake.offer(primitive)

    threads = [threading.Thread(target=listener,
                                args=(primitives[i::3], i != 0))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    intake.stop()
    assert {h: _cached_sequence(manager, h) for h in hosts} == {
        h: 30 for h in hosts}
    applied, stale, rejected = _stats(manager)
    assert (applied + stale, rejected) == (len(primitives), 0)
    assert intake.pending() == 0
