"""Lean replies: a ``select_destinations`` reply to and from primitives
without ovo's per-field layers, identical to what ovo makes.

Serialising a 100-instance reply with two alternates each (900 objects)
spent most of its time in ovo's layers around each field: the property,
``Field.to_primitive`` then the type's, ``obj_what_changed`` of every
nested object; deserialising it, ``Field.from_primitive``, the property
setter, ``Field.coerce`` then the type's, once per field and per dict
element. Here each object class gets a plan, built once from its fields,
that names what ovo's code would do with each field; the plan does only
the part that changes the value (the type's own ``coerce``, a dict
copy), and hands any field or object it cannot vouch for to ovo itself:

* a class whose ``obj_to_primitive``, ``obj_what_changed`` or
  construction differ from those the plan mirrors has no plan (ovo's path
  for the whole object);
* a field type the plan does not know, or a value not of the kind the
  plan expects (a None, a dict of something else, a primitive of another
  version or class), takes ovo's code for that field or that object.

The result is the same: same dicts, lists and key order, same
``gantt_object.changes``; the same objects, field types
(``CoercedDict``, ``CoercedList``), versions, contexts and
``obj_what_changed()`` (gantt/tests/unit/objects/test_lean.py compares
them on generated replies). Only whole replies take this path
(:func:`is_reply`, :func:`looks_like_reply`); what ovo's private
attributes are read, and why, is in :mod:`gantt.objects.ovo_internals`.
A reply backported to an older caller never comes here: the RPC
serializer sends it through ``obj_to_primitive(target_version)``.
"""

import threading

from gantt.objects import base
from gantt.objects import ovo_internals as ovo
from gantt.objects import selection

_KEY = base.GanttObject.OBJ_SERIAL_NAMESPACE + "."
NAME, NAMESPACE, VERSION = _KEY + "name", _KEY + "namespace", _KEY + "version"
DATA, CHANGES = _KEY + "data", _KEY + "changes"
_PRIMITIVE_KEYS = frozenset((NAME, NAMESPACE, VERSION, DATA, CHANGES))

#: what a plan does with a field: its value as it is, a dict copy, one
#: object, a list of objects, or ovo's own code
AS_IS, DICT, OBJECT, OBJECTS, OVO = "as is", "dict", "object", "objects", "ovo"
_MISSING = object()

#: the objects a lean reply holds: lists of lists of them
REPLY_CLASS = selection.Selection


# -- plans --------------------------------------------------------------


class Plan:
    """What to do with each field of one class, to and from primitives."""

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.obj_name()
        self.namespace = cls.OBJ_PROJECT_NAMESPACE
        self.names = frozenset(cls.fields)
        self.sends = tuple((name, ovo.attr_name(name), _send_how(field),
                            field) for name, field in cls.fields.items())
        self.reads = (tuple(_read_step(name, field)
                            for name, field in cls.fields.items())
                      if _reads_like_gantt(cls) else None)


def _reads_like_gantt(cls):
    """Whether ovo reads ``cls`` with ovo's construction and Gantt's
    choice of class, in Gantt's namespaces (the ones a plan checks)."""
    return (ovo.builds_like_ovo(cls)
            and cls.obj_class_from_name.__func__
            is base.GanttObject.obj_class_from_name.__func__
            and cls.OBJ_PROJECT_NAMESPACE == base.NAMESPACE
            and cls.OBJ_SERIAL_NAMESPACE
            == base.GanttObject.OBJ_SERIAL_NAMESPACE)


def _send_how(field):
    """How ovo's ``field.to_primitive`` ends, for a value not None."""
    kind = ovo.field_type(field)
    element = ovo.element_field(kind)
    if not ovo.plain_field(field):
        return OVO
    if ovo.sends_as_is(kind):
        return AS_IS
    if ovo.is_object(kind):
        return OBJECT
    if element is None or not ovo.plain_field(element):
        return OVO
    if ovo.is_dict(kind) and ovo.sends_as_is(ovo.field_type(element)):
        return DICT
    if ovo.is_list(kind) and ovo.is_object(ovo.field_type(element)):
        return OBJECTS
    return OVO


def _read_step(name, field):
    """``(name, attr, how, field, detail)``: detail is the type to coerce
    with (as is), the object name (object), or ``(the elements' Python
    type or object name, the elements' Field)`` (dict, objects)."""
    kind = ovo.field_type(field)
    element = ovo.element_field(kind)
    step = (name, ovo.attr_name(name))
    if not ovo.plain_field(field):
        return step + (OVO, field, None)
    if ovo.reads_as_is(kind):
        return step + (AS_IS, field, kind)
    if ovo.is_object(kind) and not ovo.takes_subclasses(kind):
        return step + (OBJECT, field, ovo.object_name(kind))
    return step + _read_container(field, kind, element)


def _read_container(field, kind, element):
    if element is None or not ovo.plain_field(element):
        return (OVO, field, None)
    inner = ovo.field_type(element)
    if ovo.is_dict(kind) and ovo.reads_as_is(inner) and ovo.exact_type(inner):
        return (DICT, field, (ovo.exact_type(inner), element))
    if (ovo.is_list(kind) and ovo.is_object(inner)
            and not ovo.takes_subclasses(inner)):
        return (OBJECTS, field, (ovo.object_name(inner), element))
    return (OVO, field, None)


#: each class's Plan, made at its first reply: derived from the class
#: alone (its fields and methods, fixed once the class is defined), so the
#: same for every thread and caller; the lock makes the first one made the
#: only one anyone gets
_PLANS = {}
_PLANS_LOCK = threading.Lock()


def plan_of(cls):
    """``cls``'s Plan, or None where ovo's obj_to_primitive and
    obj_what_changed are not the ones the plan mirrors (GanttObject's)."""
    found = _PLANS.get(cls, _MISSING)
    if found is not _MISSING:
        return found
    plan = None
    if (issubclass(cls, base.GanttObject)
            and cls.obj_to_primitive is base.GanttObject.obj_to_primitive
            and cls.obj_what_changed is base.GanttObject.obj_what_changed):
        plan = Plan(cls)
    with _PLANS_LOCK:
        return _PLANS.setdefault(cls, plan)


# -- to primitives --------------------------------------------------------


def is_reply(entity):
    """Whether ``entity`` is a list of lists of Selections."""
    return type(entity) is list and all(
        type(inner) is list
        and all(type(obj) is REPLY_CLASS for obj in inner)
        for inner in entity)


def reply_primitive(reply):
    """What ``GanttObjectSerializer().serialize_entity(ctxt, reply)``
    makes of a reply (:func:`is_reply`), at the objects' own versions."""
    return [[primitive(obj)[0] for obj in inner] for inner in reply]


def primitive(obj):
    """``(obj.obj_to_primitive(), bool(obj.obj_what_changed()))``, the
    second for free: a parent lists a nested object's field as changed
    when anything changed inside."""
    plan = plan_of(type(obj))
    if plan is None:
        return obj.obj_to_primitive(), bool(obj.obj_what_changed())
    changed = ovo.changed_fields(obj)
    data, changes = _data(obj, plan, changed)
    prim = {NAME: plan.name, NAMESPACE: plan.namespace,
            VERSION: obj.VERSION, DATA: data}
    if changes:
        prim[CHANGES] = changes
    # obj_what_changed also names changed fields that are not set
    return prim, bool(changes) or not plan.names.isdisjoint(changed)


def _data(obj, plan, changed):
    """The set fields' primitives, and the changed fields, in field
    order (as GanttObject.obj_to_primitive lists them)."""
    data, changes = {}, []
    for name, attr, how, field in plan.sends:
        value = getattr(obj, attr, _MISSING)
        if value is _MISSING:
            continue            # not set
        if how is AS_IS and not isinstance(value, ovo.VersionedObject):
            data[name], dirty = value, False    # most fields: no call
        else:
            data[name], dirty = _value_primitive(obj, name, how, field,
                                                 value)
        if dirty or name in changed:
            changes.append(name)
    return data, changes


def _value_primitive(obj, name, how, field, value):
    """``(field.to_primitive(obj, name, value), whether value is an
    object with changes)``."""
    if value is None:
        return None, False
    if how is AS_IS and not isinstance(value, ovo.VersionedObject):
        return value, False
    if how is DICT and type(value) in (dict, ovo.CoercedDict):
        return dict(value), False
    if how is OBJECT and isinstance(value, ovo.VersionedObject):
        return primitive(value)
    if how is OBJECTS and type(value) in (list, ovo.CoercedList):
        return [None if v is None else primitive(v)[0] for v in value], False
    return field.to_primitive(obj, name, value), (
        isinstance(value, ovo.VersionedObject)
        and bool(value.obj_what_changed()))


# -- from primitives ------------------------------------------------------


def looks_like_reply(entity):
    """Whether ``entity`` is a list of lists of Selection primitives."""
    return type(entity) is list and all(
        type(inner) is list
        and all(type(prim) is dict and prim.get(NAME) == REPLY_CLASS.__name__
                for prim in inner)
        for inner in entity)


def reply_from_primitive(ctxt, entity, ovo_read):
    """What ``GanttObjectSerializer().deserialize_entity(ctxt, entity)``
    makes of a reply's primitive (:func:`looks_like_reply`).

    :param ovo_read: that ``deserialize_entity``: it reads any Selection
        the plans cannot vouch for, and raises ovo's own errors
    """
    reader = Reader(ctxt, ovo_read)
    return [[reader.top(prim) for prim in inner] for inner in entity]


class Reader:
    """Objects from primitives, by plans, for one context."""

    def __init__(self, ctxt, ovo_read):
        self.ctxt = ctxt
        self._ovo_read = ovo_read
        self._classes = {}      # (name, version): class, in this reply

    def top(self, prim):
        plan = self.plan_for(prim, REPLY_CLASS.__name__)
        if plan is None:
            return self._ovo_read(self.ctxt, prim)
        return self.build(plan, prim)

    def plan_for(self, prim, name):
        """The Plan to read ``prim`` (an object named ``name``) by, or
        None: it is not exactly a current object of a planned class."""
        if (type(prim) is not dict or prim.get(NAME) != name
                or prim.get(NAMESPACE) != base.NAMESPACE
                or not prim.keys() <= _PRIMITIVE_KEYS
                or type(prim.get(DATA)) is not dict):
            return None
        cls = self._class(name, prim.get(VERSION))
        plan = None if cls is None else plan_of(cls)
        if (plan is None or plan.reads is None or plan.name != name
                or cls.VERSION != prim[VERSION]):
            return None
        return plan

    def _class(self, name, version):
        """The class ovo would read ``name`` at ``version`` as (Gantt's
        ``obj_class_from_name``, once per reply), or None."""
        if type(version) is not str:
            return None
        key = (name, version)
        if key not in self._classes:
            try:
                found = base.GanttObject.obj_class_from_name(name, version)
            except ovo.ObjectError:     # ovo's path raises it again
                found = None
            self._classes[key] = found
        return self._classes[key]

    def build(self, plan, prim):
        """What ovo's ``_obj_from_primitive`` builds, in the same order:
        context and version first (a field ovo reads may use them)."""
        obj = plan.cls()
        ovo.adopt(obj, self.ctxt, prim[VERSION])
        data = prim[DATA]
        for step in plan.reads:
            name = step[0]
            if name not in data:
                continue
            value = data[name]
            if step[2] is AS_IS and value is not None:
                # most fields: the type's coerce, as the setter calls it
                setattr(obj, step[1], step[4].coerce(obj, name, value))
            else:
                self._read(obj, step, value)
        ovo.set_changed(obj, {name for name in prim.get(CHANGES, [])
                              if name in plan.names})
        return obj

    def _read(self, obj, step, value):
        name, attr, how, field, detail = step
        found = _MISSING
        if value is None or how is OVO:
            pass
        elif how is AS_IS:
            found = detail.coerce(obj, name, value)
        elif how is DICT:
            found = _exact_dict(obj, name, value, *detail)
        elif how is OBJECT:
            found = self._child(value, detail)
        elif how is OBJECTS:
            found = self._children(obj, name, value, *detail)
        if found is _MISSING:
            # ovo's own code for this field: the property's setter too
            setattr(obj, name, field.from_primitive(obj, name, value))
        else:
            setattr(obj, attr, found)

    def _child(self, prim, name):
        plan = self.plan_for(prim, name)
        return _MISSING if plan is None else self.build(plan, prim)

    def _children(self, obj, name, prims, obj_name, element):
        """A CoercedList of objects, as ovo's List.coerce leaves it."""
        if type(prims) is not list:
            return _MISSING
        plans = [self.plan_for(prim, obj_name) for prim in prims]
        if None in plans:
            return _MISSING
        found = ovo.CoercedList([self.build(plan, prim) for plan, prim
                                 in zip(plans, prims, strict=True)])
        found.enable_coercing(element, obj, name)
        return found


def _exact_dict(obj, name, value, pytype, element):
    """A CoercedDict, as ovo's Dict.coerce leaves it, when every key is a
    string and every value exactly ``pytype`` (which ovo's coerce keeps
    as it is); else _MISSING."""
    if type(value) is not dict or not all(
            type(k) is str and type(v) is pytype for k, v in value.items()):
        return _MISSING
    found = ovo.CoercedDict(value)
    found.enable_coercing(element, obj, name)
    return found
