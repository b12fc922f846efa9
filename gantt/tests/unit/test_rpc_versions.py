"""The version cap: which objects each RPC version carries, and a capped
client that sends only what that version's workers read."""

from oslo_versionedobjects import base as ovo_base
import pytest

from gantt import exception
from gantt import objects
from gantt import rpc
from gantt import rpcapi
from gantt.objects import base
from gantt.objects import numa
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.objects import selection
from gantt.objects import statistics
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import versions
from gantt.tests import factories
from gantt.tests import fixtures as gantt_fixtures

objects.register_all()


def _registry():
    # notification payloads go to listeners, not over the RPC API (see
    # gantt.objects.notification)
    return {name: classes[0].VERSION for name, classes in
            base.GanttObjectRegistry.obj_classes().items()
            if not getattr(classes[0], "NOTIFICATION_ONLY", False)}


def test_the_newest_rpc_version_carries_every_object_as_it_is_now():
    """An object bumped without a new RPC version here could not be
    capped: add the version (rpcapi.RPC_API_VERSION, the history in
    gantt.rpcapi.client and an entry in versions.OBJECT_VERSIONS)."""
    newest = max(versions.OBJECT_VERSIONS, key=versions.parse)
    assert newest == rpcapi.RPC_API_VERSION
    assert versions.OBJECT_VERSIONS[newest] == _registry()


def test_each_rpc_version_names_object_versions_that_existed():
    registry = _registry()
    previous = {}
    for rpc_version in sorted(versions.OBJECT_VERSIONS, key=versions.parse):
        manifest = versions.OBJECT_VERSIONS[rpc_version]
        for name, version in manifest.items():
            # an object version never goes back, and never ahead of now
            assert versions.parse(version) <= versions.parse(registry[name])
            if name in previous:
                assert (versions.parse(version)
                        >= versions.parse(previous[name]))
        assert set(previous) <= set(manifest)   # objects are not removed
        previous = manifest


@pytest.mark.parametrize("cap,expected", [
    ("1.0", "1.0"), ("1.1", "1.0"), ("1.2", "1.2"), ("1.3", "1.3"),
    ("1.4", "1.4"), ("1.5", "1.5"), ("1.6", "1.6"), ("1.7", "1.7"),
    ("1.8", "1.8"), ("1.9", "1.9"), ("1.10", "1.10"), ("1.11", "1.11"),
    ("1.12", "1.12"), ("1.13", "1.13"), ("1.14", "1.13")])
def test_a_cap_uses_the_newest_version_at_or_below_it(cap, expected):
    assert versions.manifest_for(cap) == versions.OBJECT_VERSIONS[expected]


@pytest.mark.parametrize("cap", ["x", "1", "1.2.3", "", "2.0", "0.9"])
def test_a_cap_this_code_cannot_honour_is_a_configuration_error(cap):
    with pytest.raises(exception.ConfigurationError) as err:
        versions.manifest_for(cap)
    assert repr(cap) in str(err.value) or cap in str(err.value)


def _node_with_everything():
    node = factories.compute_node_obj("capped1")
    node.instance_uuids = [factories.uuids(1)[0]]
    node.numa_cells = [numa.NUMACell(
        id=0, cpuset=[0, 1, 2, 3], pcpuset=[], memory_mb=32768,
        siblings=[[0, 2], [1, 3]])]
    node.child_providers = [provider.ResourceProvider(
        uuid=factories.host_uuid("capped1_numa0"), name="capped1_numa0",
        parent_provider_uuid=node.uuid, inventories=[], traits=[])]
    return node


def _versions_in(primitive, found=None):
    """Every (object name, version) in a primitive, nested ones too."""
    found = [] if found is None else found
    if isinstance(primitive, dict):
        if "gantt_object.name" in primitive:
            found.append((primitive["gantt_object.name"],
                          primitive["gantt_object.version"]))
        for value in primitive.values():
            _versions_in(value, found)
    elif isinstance(primitive, list):
        for value in primitive:
            _versions_in(value, found)
    return found


@pytest.mark.parametrize("cap", ["1.0", "1.2", "1.3"])
def test_a_capped_serializer_sends_what_that_version_reads(cap):
    manifest = versions.manifest_for(cap)
    node = _node_with_everything()
    sent = rpc.Serializer(manifest).serialize_entity({}, {"n": [node]})
    primitive = sent["n"][0]
    found = _versions_in(primitive)
    assert ("ComputeNode", manifest["ComputeNode"]) in found
    for name, version in found:
        assert version == manifest[name], (name, version)
    data = primitive["gantt_object.data"]
    assert ("child_providers" in data) == (cap >= "1.3")
    assert ("numa_cells" in data) == (cap >= "1.2")
    if "numa_cells" in data:
        assert "siblings" not in data["numa_cells"][0]["gantt_object.data"]
    # and today's reader still reads it, without the newer fields
    back = rpc.Serializer().deserialize_entity({}, primitive)
    assert back.uuid == node.uuid
    assert back.child_providers == ([] if cap < "1.3"
                                    else node.child_providers)


def test_an_uncapped_serializer_sends_objects_as_they_are():
    node = _node_with_everything()
    primitive = rpc.Serializer().serialize_entity({}, node)
    assert primitive["gantt_object.version"] == "1.6"
    cell = primitive["gantt_object.data"]["numa_cells"][0]
    assert cell["gantt_object.data"]["siblings"] == [[0, 2], [1, 3]]


def test_a_request_spec_capped_at_1_0_drops_the_tree_constraints():
    spec = request_spec.RequestSpec(
        instance_uuid=factories.uuids(1)[0], project_id="p", user_id="u",
        num_instances=1, flavor=factories.flavor(),
        image=request_spec.ImageMeta(id=factories.uuids(1)[0],
                                     properties={}),
        same_subtree=[["_CPU", "_NET"]], root_required=["HW_CPU_X86_AVX2"])
    primitive = rpc.Serializer(versions.manifest_for("1.2")).serialize_entity(
        {}, spec)
    assert primitive["gantt_object.version"] == "1.0"
    assert "same_subtree" not in primitive["gantt_object.data"]
    assert "root_required" not in primitive["gantt_object.data"]


@pytest.mark.parametrize("method,args", [
    ("report_resource_stats", (None, None)),
    ("get_allocation_candidates", (None, None)),
    ("confirm_move", (None, "m")),
    ("providers_changed", (None,)),
])
def test_a_method_newer_than_the_cap_is_refused_before_sending(
        fake_transport, method, args):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap="1.2")
    with pytest.raises(exception.VersionCapped) as err:
        getattr(client, method)(*args)
    assert err.value.kwargs == {"method": method, "version": "1.3",
                                "cap": "1.2"}
    assert "[upgrade_levels] scheduler" in str(err.value)


def test_the_cap_comes_from_the_configuration(fake_transport):
    conf = gantt_fixtures.make_conf()
    conf.set_override("scheduler", "1.3", group="upgrade_levels")
    client = rpc_client.SchedulerClient.from_conf(conf, fake_transport)
    assert client.version_cap == "1.3"
    assert client.can_send_version("1.3")
    assert not client.can_send_version("1.4")
    conf.clear_override("scheduler", group="upgrade_levels")
    assert rpc_client.SchedulerClient.from_conf(
        conf, fake_transport).can_send_version(rpcapi.RPC_API_VERSION)


def test_a_malformed_cap_is_refused_by_the_configuration():
    conf = gantt_fixtures.make_conf()
    with pytest.raises(ValueError):
        conf.set_override("scheduler", "one.two", group="upgrade_levels")


def test_a_cap_of_another_major_version_stops_the_client(fake_transport):
    with pytest.raises(exception.ConfigurationError):
        rpc_client.SchedulerClient(fake_transport, "t", version_cap="2.0")


def test_every_object_in_a_manifest_is_a_gantt_object():
    classes = base.GanttObjectRegistry.obj_classes()
    for manifest in versions.OBJECT_VERSIONS.values():
        for name in manifest:
            assert issubclass(classes[name][0], ovo_base.VersionedObject)


def test_only_objects_that_changed_or_hold_one_need_a_backport():
    old = versions.needing_backport(versions.manifest_for("1.0"))
    assert {"ComputeNode", "ProviderUsage", "RequestSpec",
            "SchedulerStatistics"} <= old
    # unchanged since 1.0, nothing changed inside: the fast path
    assert not old & {"Selection", "AllocationRequest", "ResourceUsage",
                      "Flavor", "Inventory"}
    assert versions.needing_backport(
        versions.manifest_for(rpcapi.RPC_API_VERSION)) == frozenset()


def test_an_unchanged_object_is_sent_alike_under_any_cap():
    sel = selection.Selection(
        consumer_uuid=factories.uuids(1)[0], service_host="h1",
        nodename="h1", compute_node_uuid=factories.host_uuid("h1"),
        cell_uuid=factories.uuids(1)[0], limits={},
        allocation_request=selection.AllocationRequest(allocations=[]))
    plain = rpc.Serializer().serialize_entity({}, [sel])
    capped = rpc.Serializer(versions.manifest_for("1.0")).serialize_entity(
        {}, [sel])
    assert capped == plain


def test_statistics_backported_for_a_1_0_reader():
    stats = statistics.SchedulerStatistics(
        worker="w", hosts=1, requests=2, placements=2, no_valid_host=0,
        claim_conflicts=0, reports_applied=1, reports_stale=0,
        messages_rejected=0, filter_eliminations={}, peer_updates=3,
        peer_lag_p50_ms=1.5)
    primitive = rpc.Serializer(versions.manifest_for("1.0")).serialize_entity(
        {}, stats)
    assert primitive["gantt_object.version"] == "1.0"
    assert "peer_updates" not in primitive["gantt_object.data"]


def test_a_worker_keeps_one_reply_serializer_per_version():
    dispatcher = rpc.Dispatcher([], rpc.Serializer())
    assert dispatcher._replies_for("1.0") is dispatcher._replies_for("1.00")
    assert dispatcher._replies_for("1.1") is not dispatcher._replies_for(
        "1.0")
    # a version string the caller made up cannot grow the table
    for i in range(50):
        dispatcher._replies_for("1." + "0" * i)
    assert len(dispatcher._reply_serializers) == 2
    assert dispatcher._replies_for("x") is dispatcher.serializer.base


@pytest.mark.parametrize("cap, sent", [
    (None, ("trees_changed", {"root_uuids": ["r1", "r2"]})),
    ("1.13", ("trees_changed", {"root_uuids": ["r1", "r2"]})),
    # older workers re-read the standalone providers only
    ("1.12", ("providers_changed", {})),
    ("1.3", ("providers_changed", {}))])
def test_trees_changed_falls_back_below_1_13(fake_transport, monkeypatch,
                                             cap, sent):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap=cap)
    casts = []
    monkeypatch.setattr(
        client, "_cast_to_all",
        lambda prepared, ctxt, method, **kw: casts.append((method, kw)))
    client.trees_changed(None, ("r1", "r2"))
    assert casts == [sent]
