"""gantt.rpcapi.validate: what the wire refuses, one rule at a time.

Each case below breaks one rule in an otherwise valid message and expects
``InvalidRequest`` naming the field and why: removing the rule makes its
case fail (the valid messages around it pass, as the first tests show).

Over 400 lines: the table of cases is one row per rule of every RPC
method; split, a rule's case would sit apart from its method's base
message.
"""

import copy
import inspect
import uuid

import pytest

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import base as objects_base
from gantt.objects import group as group_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.rpcapi import server as rpc_server
from gantt.rpcapi import validate
from gantt.tests import factories

DATA = "gantt_object.data"
DELETE = object()
# fixed, so that test ids are the same in every pytest-xdist worker
UUID = str(uuid.UUID(int=0x5EED))


def _report():
    return {"compute_node": factories.primitive(
        factories.full_compute_node_obj("host1"))}


def _select():
    return {"request_spec": factories.primitive(factories.full_request()),
            "instance_uuids": [UUID], "return_alternates": True}


def _selection():
    node = factories.host_uuid("host1")
    request = {"gantt_object.name": "AllocationRequest",
               "gantt_object.namespace": "gantt",
               "gantt_object.version": "1.0",
               DATA: {"allocations": [{
                   "gantt_object.name": "AllocationItem",
                   "gantt_object.namespace": "gantt",
                   "gantt_object.version": "1.0",
                   DATA: {"resource_provider_uuid": node,
                          "resources": {"VCPU": 1}}}]}}
    return {"gantt_object.name": "Selection",
            "gantt_object.namespace": "gantt",
            "gantt_object.version": "1.0",
            DATA: {"service_host": "host1", "nodename": "host1",
                   "compute_node_uuid": node, "weight": 1.0,
                   "allocation_request": request, "consumer_uuid": UUID,
                   "claimed": True}}


def _reclaim():
    return {"instance_uuid": UUID, "failed_selection": _selection(),
            "alternates": [_selection()]}


def _usage():
    return {"usages": [{"gantt_object.name": "ProviderUsage",
                        "gantt_object.namespace": "gantt",
                        "gantt_object.version": "1.1",
                        DATA: {"resource_provider_uuid": UUID,
                               "generation": 3, "usages": {"VCPU": 2},
                               "changed_at": 1.5}}]}


def _aggregate():
    return {"aggregate": factories.primitive(aggregate_obj.Aggregate(
        uuid=UUID, name="rack1", hosts=["host1"],
        metadata={"availability_zone": "az1"}))}


def _group():
    return {"group_request": factories.primitive(group_obj.GroupRequest(
        group_uuid=UUID, project_id="p",
        policies=[request_spec_obj.GroupLevelPolicy(
            level="rack", rule="max-per", limit=2)],
        members=[group_obj.GroupMember(name="web", count=3,
                                       request_spec=factories.request())],
        objective="balanced", time_budget=0.5, reservation_ttl=60))}


BUILDERS = {
    "reserve_group": _group,
    "set_aggregate": _aggregate,
    "update_resource_stats": _report,
    "select_destinations": _select,
    "reclaim": _reclaim,
    "provider_usage_changed": _usage,
}


def _change(args, path, value):
    """``args`` with the value at ``path`` (through object data) set."""
    args = copy.deepcopy(args)
    node = args
    envelope = str(path[-1]).startswith("gantt_object.")
    for index, key in enumerate(path[:-1]):
        node = node[key]
        last = index == len(path) - 2
        if isinstance(node, dict) and DATA in node and not (
                last and envelope):
            node = node[DATA]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return args


def _refused(method, args, limits=validate.DEFAULT_LIMITS):
    with pytest.raises(exception.InvalidRequest) as info:
        validate.check_arguments(method, args, limits)
    return str(info.value)


@pytest.mark.parametrize("method", sorted(BUILDERS))
def test_a_valid_message_of_every_kind_passes(method):
    validate.check_arguments(method, BUILDERS[method]())


def test_every_method_of_the_endpoints_has_its_arguments_checked():
    for endpoint in (rpc_server.SchedulerEndpoint, rpc_server.StatsEndpoint):
        for name, func in inspect.getmembers(endpoint, inspect.isfunction):
            if name.startswith("_"):
                continue
            params = list(inspect.signature(func).parameters)[2:]
            assert sorted(validate.ARGUMENTS[name]) == sorted(params), name


def _field_types(field):
    yield field._type
    element = getattr(field._type, "_element_type", None)
    if element is not None:
        yield from _field_types(element)


def test_every_field_of_every_object_has_a_checked_type():
    checked = validate.field_types()
    for name, classes in objects_base.GanttObjectRegistry.obj_classes(
            ).items():
        for fname, field in classes[0].fields.items():
            for ftype in _field_types(field):
                assert isinstance(ftype, checked), (name, fname, ftype)


R = ("compute_node",)
INV = R + ("inventories", 0)
SPEC = ("request_spec",)

# (method, path, bad value, what the reason must say)
CASES = [
    # integers: never a boolean, a float or a string; 64 bits
    ("update_resource_stats", INV + ("total",), True,
     "compute_node.inventories[0].total must be an integer, got true"),
    ("update_resource_stats", INV + ("total",), 3.7,
     "inventories[0].total must be an integer, got float 3.7"),
    ("update_resource_stats", INV + ("total",), "3",
     "inventories[0].total must be an integer, got str '3'"),
    ("update_resource_stats", INV + ("total",), 2 ** 63,
     "inventories[0].total must be between 0 and 9223372036854775807"),
    ("update_resource_stats", R + ("report_sequence",), 2 ** 64,
     "report_sequence must be between -9223372036854775808 and"),
    ("update_resource_stats", INV + ("reserved",), -1,
     "inventories[0].reserved must be between 0 and"),
    # 32-bit counters
    ("update_resource_stats", R + ("num_instances",), 2 ** 31,
     "compute_node.num_instances must be between 0 and 2147483647"),
    ("update_resource_stats", R + ("num_io_ops",), 2 ** 31,
     "compute_node.num_io_ops must be between 0 and 2147483647"),
    # floats: numbers, finite; ratios positive
    ("update_resource_stats", INV + ("allocation_ratio",), float("nan"),
     "allocation_ratio must be a finite number, got nan"),
    ("update_resource_stats", INV + ("allocation_ratio",), float("inf"),
     "allocation_ratio must be a finite number, got inf"),
    ("update_resource_stats", INV + ("allocation_ratio",), "1.5",
     "allocation_ratio must be a number, got str"),
    ("update_resource_stats", INV + ("allocation_ratio",), 0.0,
     "allocation_ratio must be greater than 0"),
    ("update_resource_stats", R + ("metrics", "cpu.percent"), True,
     "metrics['cpu.percent'] must be a number, got true"),
    # strings: strings, valid Unicode
    ("update_resource_stats", R + ("host",), 12,
     "compute_node.host must be a string, got int 12"),
    ("update_resource_stats", R + ("host",), "compute\udc80",
     "compute_node.host is not valid Unicode (a lone surrogate at "
     "character 7)"),
    ("update_resource_stats", R + ("traits",), ["\ud800"],
     "compute_node.traits[0] is not valid Unicode"),
    ("update_resource_stats", R + ("stats",), {"\udfff": "1"},
     "compute_node.stats (key '\\udfff') is not valid Unicode"),
    # booleans
    ("update_resource_stats", R + ("disabled",), 0,
     "compute_node.disabled must be a boolean, got int 0"),
    # uuids and dates
    ("update_resource_stats", R + ("uuid",), "not-a-uuid",
     "compute_node.uuid must be a uuid, got str 'not-a-uuid'"),
    ("update_resource_stats", R + ("instance_uuids", 0), "not-a-uuid",
     "compute_node.instance_uuids[0] must be a uuid"),
    ("update_resource_stats", R + ("aggregates",), ["agg"],
     "compute_node.aggregates[0] must be a uuid"),
    ("update_resource_stats", R + ("updated_at",), "yesterday",
     "compute_node.updated_at must be an ISO 8601 date-time"),
    # null only where nullable; required fields; no unknown fields
    ("update_resource_stats", R + ("inventories",), None,
     "compute_node.inventories must be a list, got null"),
    ("update_resource_stats", R + ("report_sequence",), DELETE,
     "compute_node.report_sequence is required"),
    ("update_resource_stats", INV + ("total",), DELETE,
     "compute_node.inventories[0].total is required"),
    ("update_resource_stats", R + ("colour",), "blue",
     "compute_node.colour is not a field of ComputeNode"),
    # lists and dicts
    ("update_resource_stats", R + ("traits",), "HW_CPU_X86_AVX",
     "compute_node.traits must be a list, got str"),
    ("update_resource_stats", R + ("capabilities",), ["a"],
     "compute_node.capabilities must be a JSON object, got a JSON array"),
    ("update_resource_stats", R + ("numa_cells", 0, "siblings", 0), 5,
     "numa_cells[0].siblings[0] must be a list, got int 5"),
    # nested objects: the envelope
    ("update_resource_stats", R + ("child_providers", 0,
                                   "gantt_object.name"), "Inventory",
     "child_providers[0] must be a ResourceProvider object"),
    ("update_resource_stats", INV + ("gantt_object.namespace",), "nova",
     "inventories[0] must be a Inventory object of namespace gantt"),
    ("update_resource_stats", R + ("gantt_object.version",), "1.9",
     "compute_node is ComputeNode version 1.9; this worker reads 1.0 to"),
    ("update_resource_stats", R + ("gantt_object.version",), "2.0",
     "compute_node is ComputeNode version 2.0"),
    ("update_resource_stats", R + ("gantt_object.version",), "1.x",
     "compute_node has a malformed version '1.x'"),
    ("update_resource_stats", R + ("gantt_object.extra",), 1,
     "compute_node has an unknown key 'gantt_object.extra'"),
    ("update_resource_stats", R + ("gantt_object.changes",), "host",
     "compute_node changes must be a list"),
    ("update_resource_stats", R + ("gantt_object.changes",), ["\udc00"],
     "compute_node changes[0] is not valid Unicode"),
    ("select_destinations", ("request_spec",), {"flavor": 1},
     "request_spec must be a RequestSpec object of namespace gantt, got a "
     "JSON object that is no object primitive"),
    ("update_resource_stats", R + ("gantt_object.data",), [],
     "compute_node data must be a JSON object"),
    # requests
    ("select_destinations", SPEC + ("flavor", "vcpus"), None,
     "request_spec.flavor.vcpus must be an integer, got null"),
    ("select_destinations", SPEC + ("flavor",), DELETE,
     "request_spec.flavor is required"),
    ("select_destinations", SPEC + ("group_policy",), "spread",
     "request_spec.group_policy must be one of none, isolate"),
    ("select_destinations", SPEC + ("instance_group", "policy"), "friends",
     "request_spec.instance_group.policy must be one of"),
    ("select_destinations", SPEC + ("instance_group", "members", 0), "x",
     "request_spec.instance_group.members[0] must be a uuid"),
    ("select_destinations", SPEC + ("request_groups", 0, "resources",
                                    "VCPU"), 1.5,
     "request_groups[0].resources['VCPU'] must be an integer"),
    ("select_destinations", SPEC + ("scheduler_hints", "same_host"), "x",
     "scheduler_hints['same_host'] must be a list"),
    ("select_destinations", ("instance_uuids", 0), "not-a-uuid",
     "select_destinations: instance_uuids[0] must be a uuid"),
    ("select_destinations", ("instance_uuids",), [],
     "instance_uuids must list 1 to 1000 instances, got 0"),
    ("select_destinations", ("instance_uuids",), [UUID, UUID],
     "instance_uuids lists an instance twice"),
    ("select_destinations", ("return_alternates",), "yes",
     "return_alternates must be a boolean"),
    # what the database stores in 255 characters
    ("select_destinations", SPEC + ("project_id",), "p" * 256,
     "request_spec.project_id must be at most 255 characters, got 256"),
    ("set_aggregate", ("aggregate", "name"), "n" * 256,
     "aggregate.name must be at most 255 characters"),
    ("set_aggregate", ("aggregate", "hosts", 0), "h" * 256,
     "aggregate.hosts[0] must be at most 255 characters"),
    ("set_aggregate", ("aggregate", "metadata", "availability_zone"),
     "z" * 256, "aggregate.metadata['availability_zone'] key and value "
                "must be at most 255"),
    # selections and usages
    ("reclaim", ("instance_uuid",), "x", "reclaim: instance_uuid must be "
                                         "a uuid"),
    ("reclaim", ("alternates",), {}, "alternates must be a list"),
    ("reclaim", ("alternates", 0, "allocation_request", "allocations", 0,
                 "resources", "VCPU"), 0,
     "allocations[0].resources['VCPU'] must be at least 1, got 0"),
    ("reclaim", ("failed_selection", "weight"), float("-inf"),
     "failed_selection.weight must be a finite number"),
    ("provider_usage_changed", ("usages", 0, "generation"), "3",
     "usages[0].generation must be an integer"),
    # holistic groups
    ("reserve_group", ("group_request", "group_uuid"), "g1",
     "group_request.group_uuid must be a uuid"),
    ("reserve_group", ("group_request", "time_budget"), 0.0,
     "group_request.time_budget must be more than 0"),
    ("reserve_group", ("group_request", "time_budget"), float("nan"),
     "group_request.time_budget must be a finite number"),
    ("reserve_group", ("group_request", "reservation_ttl"), -1,
     "group_request.reservation_ttl must be"),
    ("reserve_group", ("group_request", "objective"), "cheapest",
     "group_request.objective must be one of"),
    ("reserve_group", ("group_request", "members", 0, "count"), 0,
     "members[0].count must be between 1 and"),
    ("reserve_group", ("group_request", "members", 0, "name"), "n" * 256,
     "members[0].name must be at most 255 characters"),
    ("reserve_group", ("group_request", "members", 0, "request_spec",
                       "num_instances"), "3",
     "members[0].request_spec.num_instances must be an integer"),
    ("reserve_group", ("group_request", "policies", 0, "rule"), "nearby",
     "policies[0].rule must be one of"),
    ("reserve_group", ("group_request", "policies", 0, "limit"), -2,
     "policies[0].limit must be between 0 and"),
    ("reserve_group", ("group_request", "members"), DELETE,
     "group_request.members is required"),
]


@pytest.mark.parametrize("method,path,value,reason", CASES,
                         ids=[".".join(map(str, c[1])) + "=" + repr(c[2])[:20]
                              for c in CASES])
def test_each_rule_refuses_what_breaks_it(method, path, value, reason):
    args = _change(BUILDERS[method](), path, value)
    assert reason in _refused(method, args)


@pytest.mark.parametrize("method,args,reason", [
    ("release", {"consumer_uuid": 5}, "consumer_uuid must be a uuid, got int"),
    ("get_host_states", {"hosts": [None]}, "hosts[0] must be a string"),
    ("get_host_states", {"hosts": "host1"}, "hosts must be a list"),
    ("explain", {"limit": -1}, "limit must be between 0 and"),
    ("get_allocation_candidates", {"limit": 0}, "limit must be between 1"),
    ("claim_allocations", {"project_id": 7}, "project_id must be a string"),
    ("claim_allocations", {"user_id": "u" * 256},
     "user_id must be at most 255 characters"),
    ("delete_provider", {"provider_uuid": "pool"}, "must be a uuid"),
    ("release_group", {"group_uuid": "g1"}, "group_uuid must be a uuid"),
])
def test_plain_arguments_are_checked(method, args, reason):
    assert reason in _refused(method, args)


def _with_children(count, classes=1, traits=0):
    node = factories.compute_node_obj("big")
    node.child_providers = [factories.provider.ResourceProvider(
        uuid=str(uuid.uuid4()), name="c%d" % i,
        parent_provider_uuid=node.uuid,
        traits=["CUSTOM_T%d_%d" % (i, t) for t in range(traits)],
        inventories=[factories.compute_node.Inventory(
            resource_class="CUSTOM_C%d_%d" % (i, c), total=1)
            for c in range(classes)]) for i in range(count)]
    return {"compute_node": factories.primitive(node)}


@pytest.mark.parametrize("args,reason", [
    (_with_children(5), "has 5 providers; [wire] max_report_children is 4"),
    (_with_children(2, classes=3),
     "has 9 distinct resource classes; [wire] max_report_resource_classes "
     "is 8"),
    (_with_children(2, traits=5),
     "has 10 distinct traits; [wire] max_report_traits is 8"),
])
def test_a_report_larger_than_the_limits_is_refused(args, reason):
    limits = validate.Limits(max_report_children=4,
                             max_report_resource_classes=8,
                             max_report_traits=8)
    assert reason in _refused("update_resource_stats", args, limits)


def test_a_report_within_the_limits_passes():
    limits = validate.Limits(max_report_children=4,
                             max_report_resource_classes=11,
                             max_report_traits=8)
    validate.check_arguments("update_resource_stats",
                             _with_children(4, classes=2, traits=2), limits)


def test_a_value_is_quoted_short_in_a_reason():
    args = _change(_report(), R + ("uuid",), "x" * 100000)
    reason = _refused("update_resource_stats", args)
    assert len(reason) < 200


@pytest.mark.parametrize("message,size,reason", [
    ({"method": "release", "args": {}}, 2 ** 20 + 1,
     "a message of 1048577 bytes exceeds [wire] max_message_bytes "
     "(1048576)"),
    ({"method": ["x"]}, 10, "the message's method must be a string"),
    ({"method": "release", "version": 1.0}, 10,
     "the message's version must be a string"),
    ({"method": "release", "namespace": 3}, 10,
     "the message's namespace must be a string"),
    ({"method": "release", "args": []}, 10,
     "the message's args must be a JSON object"),
    ({"args": {}}, 10, "the message names no method"),
    ({"method": "release", "version": "1.x"}, 10,
     "the message's version '1.x' is not MAJOR.MINOR"),
    ({"method": "release", "version": "1"}, 10,
     "the message's version '1' is not MAJOR.MINOR"),
])
def test_the_envelope_is_checked_before_anything_is_read(message, size,
                                                          reason):
    with pytest.raises(exception.InvalidRequest) as info:
        validate.check_envelope(message, validate.DEFAULT_LIMITS, size)
    assert reason in str(info.value)


def test_a_message_of_the_largest_size_passes():
    validate.check_envelope({"method": "release", "args": {}},
                            validate.DEFAULT_LIMITS, 2 ** 20)


@pytest.mark.parametrize("ctxt,reason", [
    ([], "the context must be a JSON object"),
    ({"roles": "admin"}, "context.roles must be a list"),
    ({"roles": [1]}, "context.roles[0] must be a string"),
    ({"is_admin": "yes"}, "context.is_admin must be a bool"),
    ({"request_id": 5}, "context.request_id must be a str"),
    ({"user": "\udc00"}, "context.user is not valid Unicode"),
])
def test_the_context_is_checked(ctxt, reason):
    with pytest.raises(exception.InvalidRequest) as info:
        validate.check_context(ctxt)
    assert reason in str(info.value)


def test_a_context_with_unknown_keys_passes():
    validate.check_context({"request_id": "req-1", "roles": ["admin"],
                            "is_admin": True, "tenant": 5})
