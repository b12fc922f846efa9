"""Every read of oslo.versionedobjects' private parts by Gantt's wire fast
paths, in one place.

Why they are read at all: ovo keeps what a field holds (``Field._type``,
a container's ``_element_type``, an ``Object`` type's ``_obj_name``) and
where an object keeps its values (``_obj_<field>``, ``_changed_fields``,
``_context``) in underscored attributes and offers no public accessor;
:mod:`gantt.objects.lean` must read them to produce what ovo produces
without its per-field layers, and :mod:`gantt.rpcapi.versions` to know
which objects hold which. setup.cfg pins ``oslo.versionedobjects<4``; a
release that moves any of these fails the identity tests
(gantt/tests/unit/objects/test_lean.py), which go through every function
here. ``gantt.objects.base`` reads ``_obj_<field>`` and
``_changed_fields`` too, for the same reason (its fast
``obj_to_primitive``), under the same tests.

Every other check below compares a class's method with ovo's own: the
fast paths are taken only where ovo's code would run unchanged.
"""

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import exception as ovo_exc
from oslo_versionedobjects import fields as ovo_fields

#: ovo's classes, named here so that lean.py imports ovo from one module
VersionedObject = ovo_base.VersionedObject
CoercedDict = ovo_fields.CoercedDict
CoercedList = ovo_fields.CoercedList
ObjectError = ovo_exc.VersionedObjectsException


def attr_name(name):
    """Where an object keeps field ``name``'s value (ovo's
    ``_get_attrname``)."""
    return "_obj_" + name


def changed_fields(obj):
    """The set ovo records set fields in (``obj_reset_changes`` empties
    it)."""
    return obj._changed_fields


def adopt(obj, context, version):
    """What ovo's ``_obj_from_primitive`` sets before the fields: the
    context and the version read (an instance attribute)."""
    obj._context = context
    obj.VERSION = version


def set_changed(obj, names):
    """What ovo's ``_obj_from_primitive`` sets after the fields."""
    obj._changed_fields = names


def field_type(field):
    """The FieldType a Field wraps (``String()``, ``Dict(...)``...)."""
    return field._type


def element_field(kind):
    """The Field a List or Dict type wraps for its elements, else None."""
    return getattr(kind, "_element_type", None)


def object_name(kind):
    """The object name an ``Object`` type holds, else None."""
    return getattr(kind, "_obj_name", None)


def takes_subclasses(kind):
    """Whether an ``Object`` type accepts subclasses' names too."""
    return kind._subclasses


def child_object_names(cls):
    """Names of the object types ``cls``'s fields hold (lists included)."""
    for field in cls.fields.values():
        kind = field_type(field)
        element = element_field(kind)
        if element is not None:
            kind = field_type(element)
        name = object_name(kind)
        if name is not None:
            yield name


# -- which of ovo's code a field runs --------------------------------------


def _runs(kind, method, owner):
    """Whether ``kind``'s ``method`` is ``owner``'s, unchanged."""
    return getattr(type(kind), method) is getattr(owner, method)


def plain_field(field):
    """A Field whose own to/from_primitive and coerce are ovo's (they
    only handle None and hand the value to the type)."""
    return (_runs(field, "to_primitive", ovo_fields.Field)
            and _runs(field, "from_primitive", ovo_fields.Field)
            and _runs(field, "coerce", ovo_fields.Field))


def sends_as_is(kind):
    """A type whose primitive is the value itself."""
    return _runs(kind, "to_primitive", ovo_fields.FieldType)


def reads_as_is(kind):
    """A type that reads the primitive as the value (then coerces it)."""
    return _runs(kind, "from_primitive", ovo_fields.FieldType)


def is_dict(kind):
    return all(_runs(kind, m, ovo_fields.Dict)
               for m in ("to_primitive", "from_primitive", "coerce"))


def is_list(kind):
    return all(_runs(kind, m, ovo_fields.List)
               for m in ("to_primitive", "from_primitive", "coerce"))


def is_object(kind):
    return all(_runs(kind, m, ovo_fields.Object)
               for m in ("to_primitive", "from_primitive", "coerce"))


#: types whose coerce returns a value of exactly this Python type as it
#: is (``int(7) is 7``): a dict of them needs no per-element call
EXACT_TYPES = {ovo_fields.Integer: int, ovo_fields.String: str,
               ovo_fields.Float: float, ovo_fields.Boolean: bool}


def exact_type(kind):
    """The Python type ``kind`` coerces to itself unchanged, else None."""
    return EXACT_TYPES.get(type(kind))


def builds_like_ovo(cls):
    """Whether ``cls`` is built from a primitive by ovo's own code:
    constructor, ``obj_from_primitive``, ``_obj_from_primitive`` and
    plain attribute setting."""
    base = ovo_base.VersionedObject
    return (cls.__init__ is base.__init__
            and cls.__setattr__ is object.__setattr__
            and cls.obj_from_primitive.__func__
            is base.obj_from_primitive.__func__
            and cls._obj_from_primitive.__func__
            is base._obj_from_primitive.__func__)
