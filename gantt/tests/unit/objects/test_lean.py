"""Lean replies are what ovo makes, to and from the wire, and they are
the path a select_destinations reply takes."""

import json
from unittest import mock

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from oslo_versionedobjects import fields as ovo_fields
import pytest

from gantt.objects import base
from gantt.objects import lean
from gantt.objects import ovo_internals
from gantt.objects import selection as selection_obj
from gantt.rpc import dispatcher
from gantt.rpc import serializer as rpc_serializer
from gantt.rpcapi import versions

OVO = base.GanttObjectSerializer()
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
CLASSES = (selection_obj.Selection, selection_obj.AllocationRequest,
           selection_obj.AllocationItem)

uuids = st.uuids().map(str)
names = st.text(min_size=0, max_size=12)
amounts = st.dictionaries(st.sampled_from(
    ["VCPU", "MEMORY_MB", "DISK_GB", "CUSTOM_X", ""]), st.integers(
        -2**40, 2**40), max_size=4)


@st.composite
def maybe(draw, values):
    """A field's value, or _UNSET: a test leaves the field unset."""
    return draw(st.one_of(st.just(_UNSET), values))


_UNSET = object()


def _build(cls, values, how):
    """``cls`` of ``values`` (unset ones left out), built as the
    scheduler does (trusted) or through ovo's coercion."""
    values = {k: v for k, v in values.items() if v is not _UNSET}
    return cls.trusted(**values) if how == "trusted" else cls(**values)


@st.composite
def items(draw, how):
    return _build(selection_obj.AllocationItem, {
        "resource_provider_uuid": draw(maybe(uuids)),
        "resources": draw(maybe(amounts))}, how)


@st.composite
def allocation_requests(draw, how):
    return _build(selection_obj.AllocationRequest, {
        "allocations": draw(maybe(st.lists(items(how), max_size=3)))}, how)


@st.composite
def selections(draw):
    how = draw(st.sampled_from(["trusted", "coerced"]))
    obj = _build(selection_obj.Selection, {
        "service_host": draw(maybe(names)), "nodename": draw(maybe(names)),
        "compute_node_uuid": draw(maybe(uuids)),
        "cell_uuid": draw(maybe(st.one_of(st.none(), uuids))),
        "weight": draw(maybe(st.floats(allow_nan=False))),
        "limits": draw(maybe(amounts)),
        "allocation_request": draw(maybe(allocation_requests(how))),
        "consumer_uuid": draw(maybe(uuids)),
        "claimed": draw(maybe(st.booleans()))}, how)
    _forget(draw, obj)
    return obj


def _forget(draw, obj):
    """Changes tracking in every state: none forgotten, all, the top
    level only, some fields, or the nested objects' only."""
    way = draw(st.sampled_from(["keep", "all", "top", "some", "nested"]))
    nested = obj.obj_attr_is_set("allocation_request")
    if way == "all":
        obj.obj_reset_changes(recursive=True)
    elif way == "top":
        obj.obj_reset_changes()
    elif way == "some":
        obj.obj_reset_changes(draw(st.lists(st.sampled_from(
            sorted(obj.fields)), unique=True)))
    elif way == "nested" and nested:
        obj.allocation_request.obj_reset_changes(recursive=True)
    if draw(st.booleans()):
        # a changed field that is not set (as a primitive's changes can
        # name): obj_what_changed lists it, the primitive does not
        obj._changed_fields.add(draw(st.sampled_from(sorted(obj.fields))))


replies = st.lists(st.lists(selections(), max_size=3), max_size=4)


def _dump(value):
    return json.dumps(value)


def _same_primitive(fast, slow):
    """Equal, and equal as JSON: the same key order everywhere."""
    assert fast == slow
    assert _dump(fast) == _dump(slow)


# -- to the wire ------------------------------------------------------------


@SETTINGS
@given(replies)
def test_a_lean_reply_is_what_ovo_sends(reply):
    slow = OVO.serialize_entity(None, reply)
    _same_primitive(lean.reply_primitive(reply), slow)
    _same_primitive(rpc_serializer.Serializer().serialize_entity(
        None, reply), slow)


@SETTINGS
@given(replies)
def test_a_read_reply_sent_again_is_what_ovo_sends(reply):
    """Objects as ovo reads them (CoercedDict, CoercedList, VERSION set on
    the instance, changes from the wire) travel on unchanged."""
    read = OVO.deserialize_entity(None, OVO.serialize_entity(None, reply))
    _same_primitive(lean.reply_primitive(read),
                    OVO.serialize_entity(None, read))


@SETTINGS
@given(selections())
def test_the_changed_flag_is_ovos(obj):
    """What a parent lists a nested object's field as changed by."""
    prim, dirty = lean.primitive(obj)
    _same_primitive(prim, obj.obj_to_primitive())
    assert dirty == bool(obj.obj_what_changed())
    # and ovo's own, not only GanttObject's, agrees on the changes
    ovo_own = base.ovo_base.VersionedObject.obj_to_primitive(obj)
    assert set(prim.get(lean.CHANGES, ())) == set(
        ovo_own.get(lean.CHANGES, ()))


def test_an_odd_value_takes_ovos_code_for_its_field():
    """A value the plan does not expect (a tuple where a dict goes, an
    object where a string goes) is sent as ovo sends it."""
    obj = selection_obj.Selection.trusted(
        limits=(("VCPU", 1),), nodename=selection_obj.AllocationRequest(
            allocations=[]), allocation_request=None)
    with pytest.raises(AttributeError):
        ovo_fields.DictOfIntegersField().to_primitive(obj, "limits",
                                                      obj.limits)
    with pytest.raises(AttributeError):
        lean.primitive(obj)
    del obj.limits
    # (a string field holding an object: not JSON, compared as it is)
    assert lean.primitive(obj) == (obj.obj_to_primitive(), True)


def test_a_class_with_its_own_primitive_has_no_plan():
    class Odd(selection_obj.AllocationItem):
        def obj_to_primitive(self, target_version=None,
                             version_manifest=None):
            return {"odd": True}

    assert lean.plan_of(Odd) is None
    assert lean.primitive(Odd(resources={}))[0] == {"odd": True}


# -- from the wire ------------------------------------------------------------


def _state(obj, seen=None):
    """Everything ovo leaves in an object that a caller could see: class,
    version, context, changes, each set field's value and type, and the
    coercing containers' element type, owner and field."""
    if isinstance(obj, (ovo_fields.CoercedDict, ovo_fields.CoercedList)):
        inner = (obj.items() if isinstance(obj, dict) else enumerate(obj))
        return (type(obj), obj._element_type, obj._field, id(obj._obj)
                == id(seen), [(k, _state(v, seen)) for k, v in inner])
    if not isinstance(obj, base.GanttObject):
        return (type(obj), obj)
    fields = [(name, _state(getattr(obj, name), obj)) for name in obj.fields
              if obj.obj_attr_is_set(name)]
    return (type(obj), obj.VERSION, "VERSION" in vars(obj), obj._context,
            sorted(obj._changed_fields), sorted(obj.obj_what_changed()),
            fields, sorted(vars(obj)))


def _read_both(primitive, ctxt="ctxt"):
    """(what lean reads, what ovo reads), or the errors they raise."""
    def read(fn):
        try:
            return [[_state(o) for o in inner] for inner in fn(ctxt)]
        except Exception as exc:  # noqa: BLE001 - compared below
            return (type(exc), str(exc))

    return (read(lambda c: lean.reply_from_primitive(
                c, primitive, OVO.deserialize_entity)),
            read(lambda c: OVO.deserialize_entity(c, primitive)))


@SETTINGS
@given(replies)
def test_a_lean_read_is_what_ovo_reads(reply):
    primitive = OVO.serialize_entity(None, reply)
    assert lean.looks_like_reply(primitive)
    fast, slow = _read_both(primitive)
    assert fast == slow
    assert not isinstance(fast, tuple)


#: what a peer could send instead of a good primitive, at any level:
#: path (inside a Selection's primitive) -> values
ODD = {
    ("gantt_object.version",): ["1.1", "1.0.1", "2.0", "abc", None, 1.0],
    ("gantt_object.namespace",): ["nova", None],
    ("gantt_object.name",): ["AllocationRequest"],
    ("gantt_object.changes",): [["weight", "nope"], [], "weight", None],
    ("gantt_object.extra",): ["x"],
    ("gantt_object.data", "weight"): [None, 3, "1.5", True],
    ("gantt_object.data", "claimed"): [None, 1, "yes"],
    ("gantt_object.data", "cell_uuid"): [None, "not-a-uuid", 7],
    ("gantt_object.data", "compute_node_uuid"): [None, "not-a-uuid"],
    ("gantt_object.data", "service_host"): [None, 5, 1.5, ["x"]],
    ("gantt_object.data", "limits"): [None, {"VCPU": True},
                                      {"VCPU": "4"}, {"VCPU": 4.0},
                                      {"VCPU": None}, [1], {1: 2}],
    ("gantt_object.data", "no_such_field"): [1],
    ("gantt_object.data", "allocation_request"): [None, {}, "x", {
        "gantt_object.name": "Selection", "gantt_object.namespace": "gantt",
        "gantt_object.version": "1.0", "gantt_object.data": {}}],
    ("gantt_object.data", "allocation_request", "gantt_object.data",
     "allocations"): [None, [None], "x", [{}], [1], ()],
    ("gantt_object.data", "allocation_request", "gantt_object.version"):
        ["1.1", "0.9"],
}


def _odd_cases():
    return [(path, value) for path, values in ODD.items()
            for value in values]


def _set(primitive, path, value):
    target = primitive
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@pytest.mark.parametrize("path, value", _odd_cases())
def test_an_odd_primitive_is_read_as_ovo_reads_it(path, value):
    """Anything but a current, well-formed primitive gives what ovo gives:
    the same objects, or the same error."""
    reply = [[_full_selection(), _full_selection()]]
    primitive = OVO.serialize_entity(None, reply)
    _set(primitive[0][1], path, value)
    fast, slow = _read_both(primitive)
    assert fast == slow


def test_an_older_compatible_version_is_read_by_ovo():
    """A Selection 1.0 read by code at 1.1 (a newer worker's caller, say):
    ovo builds it (and says it is 1.0); the fast path reads only the
    current version."""
    primitive = OVO.serialize_entity(None, [[_full_selection()]])
    with mock.patch.object(selection_obj.Selection, "VERSION", "1.1"):
        ovo_read = mock.Mock(wraps=OVO.deserialize_entity)
        back = lean.reply_from_primitive("ctxt", primitive, ovo_read)
        expected = OVO.deserialize_entity("ctxt", primitive)
    ovo_read.assert_called_once_with("ctxt", primitive[0][0])
    assert _state(back[0][0]) == _state(expected[0][0])
    assert back[0][0].VERSION == "1.0"


def test_a_reply_with_odd_containers_is_not_a_reply():
    good = OVO.serialize_entity(None, [[_full_selection()]])
    for odd in ([good[0][0]], [tuple(good[0])], ({"a": 1},), "x",
                [[dict(good[0][0], **{"gantt_object.name": "X"})]]):
        assert not lean.looks_like_reply(odd)


def _full_selection(**changes):
    return selection_obj.Selection(
        service_host="h1", nodename="n1",
        compute_node_uuid="11111111-1111-4111-8111-111111111111",
        cell_uuid="c0c0c0c0-0000-4000-8000-000000000001", weight=2.5,
        limits={"VCPU": 64, "MEMORY_MB": 4096},
        allocation_request=selection_obj.AllocationRequest(allocations=[
            selection_obj.AllocationItem(
                resource_provider_uuid="11111111-1111-4111-8111-111111111111",
                resources={"VCPU": 2})]),
        consumer_uuid="22222222-2222-4222-8222-222222222222", claimed=True,
        **changes)


# -- the hot path takes it ----------------------------------------------------


def test_every_field_of_a_selection_is_planned():
    """No field of a reply's objects falls back to ovo's code: a
    mutation that did would make the fast path slow, silently."""
    for cls in CLASSES:
        plan = lean.plan_of(cls)
        assert plan is not None and plan.reads is not None
        assert [s[0] for s in plan.sends] == list(cls.fields)
        assert lean.OVO not in {s[2] for s in plan.sends}
        assert lean.OVO not in {s[2] for s in plan.reads}


def _no_per_field_ovo():
    """ovo's per-field layers made to fail if called."""
    return mock.patch.multiple(ovo_fields.Field, **{
        name: mock.Mock(side_effect=AssertionError(name))
        for name in ("to_primitive", "from_primitive", "coerce")})


@pytest.mark.parametrize("cap", [None, "1.0", "1.7", "1.13"])
def test_the_rpc_serializer_sends_and_reads_a_reply_lean(cap):
    """At any cap that leaves Selections as they are (every one so far),
    a reply goes out and comes back without ovo's per-field code."""
    manifest = versions.manifest_for(cap) if cap else None
    ser = rpc_serializer.Serializer(manifest)
    reply = [[_full_selection(), _full_selection()]] * 3
    expected = OVO.serialize_entity(None, reply)
    lean.plan_of(selection_obj.Selection)
    with _no_per_field_ovo():
        primitive = ser.serialize_entity(None, reply)
        back = ser.deserialize_entity("ctxt", primitive)
    _same_primitive(primitive, expected)
    assert _state(back[2][1]) == _state(
        OVO.deserialize_entity("ctxt", expected)[2][1])


def test_a_worker_replies_lean_at_the_callers_version():
    """The dispatcher's reply serializer, for a call at 1.0, too."""
    disp = dispatcher.Dispatcher([], rpc_serializer.Serializer())
    with mock.patch.object(lean, "reply_primitive",
                           wraps=lean.reply_primitive) as fast:
        disp._replies_for("1.0").serialize_entity(
            None, [[_full_selection()]])
    fast.assert_called_once()


def test_a_cap_that_backports_selections_takes_ovos_path():
    """Whatever would backport a Selection (a stale Selection or any
    object it holds) sends it by obj_to_primitive(target_version)."""
    for stale in ("Selection", "AllocationRequest", "AllocationItem"):
        manifest = dict(versions.manifest_for("1.13"), **{stale: "0.9"})
        ser = rpc_serializer.Serializer(manifest)
        with mock.patch.object(selection_obj.Selection, "obj_to_primitive",
                               return_value="backported") as backport, \
                mock.patch.object(lean, "reply_primitive") as fast:
            assert ser.serialize_entity(None, [[_full_selection()]]) == [
                ["backported"]]
        fast.assert_not_called()
        assert backport.call_args.kwargs["version_manifest"] == manifest


def test_anything_else_is_not_sent_lean():
    ser = rpc_serializer.Serializer()
    for entity in ([_full_selection()], ([_full_selection()],),
                   [[_full_selection(), "x"]], [[_full_selection().
                                                 allocation_request]]):
        with mock.patch.object(lean, "reply_primitive") as fast:
            assert ser.serialize_entity(None, entity) == (
                OVO.serialize_entity(None, entity))
        fast.assert_not_called()


def test_the_ovo_internals_read_are_where_ovo_keeps_them():
    """The reads gantt.objects.ovo_internals isolates, checked against an
    object built by ovo's own code (a release that moved them fails)."""
    obj = _full_selection()
    assert getattr(obj, ovo_internals.attr_name("weight")) == 2.5
    assert ovo_internals.changed_fields(obj) == set(obj.fields)
    field = selection_obj.Selection.fields["limits"]
    assert isinstance(ovo_internals.field_type(field), ovo_fields.Dict)
    assert ovo_internals.exact_type(ovo_internals.field_type(
        ovo_internals.element_field(ovo_internals.field_type(field)))) is int
    assert sorted(ovo_internals.child_object_names(
        selection_obj.Selection)) == ["AllocationRequest"]
