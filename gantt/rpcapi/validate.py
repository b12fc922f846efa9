"""Strict checks of every RPC argument and object primitive, before use.

oslo.versionedobjects coerces loosely: an ``IntegerField`` takes ``"3"``,
``3.7`` and ``true``, a ``FloatField`` takes ``NaN``, a ``StringField``
takes ``12``. Deserialising first would store whatever that makes of a
bad value, so every argument of every RPC method is checked here, as it
came off the wire, before anything reads it. This is the one place that
says what the wire accepts:

* **Shape**, from the objects' own field definitions (no second schema to
  keep in step, and no object fingerprint changes): the exact JSON type of
  each field (an integer is never a boolean, a float or a string), ``null``
  only where the field is nullable, every field without a default present,
  no field the object does not have, the object name and a version this
  worker reads, strings that are valid Unicode (no lone surrogates),
  integers within 64 bits (the database's BIGINT) and finite floats.
* **Ranges** the field types cannot say (:data:`_RULES`): uuids where
  strings carry uuids, 32-bit counters, positive allocation ratios.
* **Size** (:class:`Limits`): resource classes, traits and child providers
  per report, and instances per request.

A failure is an ``InvalidRequest`` whose reason names the argument and
field path and says why (``compute_node.inventories[0].total must be an
integer, got true``); values are quoted shortened, never whole.

The module is longer than most: it is the one place where the wire's
rules live, so that a reader (and the wire reference) finds them together.
"""

import dataclasses
import math
import re

from oslo_utils import timeutils
from oslo_versionedobjects import fields as ovo_fields

from gantt import exception
from gantt.objects import base as objects_base

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1
INT32_MAX = 2 ** 31 - 1
#: a quoted value is cut to this many characters in a reason
_QUOTE = 40

_NAME = "gantt_object.name"
_NAMESPACE = "gantt_object.namespace"
_VERSION = "gantt_object.version"
_DATA = "gantt_object.data"
_CHANGES = "gantt_object.changes"
_KEYS = frozenset([_NAME, _NAMESPACE, _VERSION, _DATA, _CHANGES])
_VERSION_RE = re.compile(r"^([0-9]{1,3})\.([0-9]{1,3})$")
_UUID_MATCH = re.compile(ovo_fields.UUID.PATTERN).match


@dataclasses.dataclass(frozen=True)
class Limits:
    """How much one message may carry (``[wire]`` options)."""

    max_message_bytes: int = 1048576
    max_report_resource_classes: int = 256
    max_report_traits: int = 256
    max_report_children: int = 256
    max_instances_per_request: int = 1000

    @classmethod
    def from_conf(cls, conf):
        wire = conf.wire
        return cls(**{f.name: getattr(wire, f.name)
                      for f in dataclasses.fields(cls)})


DEFAULT_LIMITS = Limits()


class _Invalid(Exception):
    """A rule broken at ``path``; becomes InvalidRequest at the top."""

    def __init__(self, path, why):
        super().__init__("%s %s" % (path, why))


def quote(value):
    text = repr(value)
    if len(text) > _QUOTE:
        text = text[:_QUOTE - 3] + "..."
    return text


def _got(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a JSON %s" % ("object" if isinstance(value, dict)
                              else "array")
    return "%s %s" % (type(value).__name__, quote(value))


# -- scalars -----------------------------------------------------------------


def _string(value, path):
    if type(value) is not str:
        raise _Invalid(path, "must be a string, got %s" % _got(value))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(path, "is not valid Unicode (a lone surrogate "
                             "at character %d)" % _surrogate(value)) from None


def _surrogate(text):
    return next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)


def _integer(value, path, low=INT64_MIN, high=INT64_MAX):
    if type(value) is not int:
        raise _Invalid(path, "must be an integer, got %s" % _got(value))
    if not low <= value <= high:
        raise _Invalid(path, "must be between %d and %d, got %d"
                       % (low, high, value))


def _float(value, path):
    if type(value) not in (int, float):
        raise _Invalid(path, "must be a number, got %s" % _got(value))
    if not math.isfinite(value):
        raise _Invalid(path, "must be a finite number, got %s" % value)


def _boolean(value, path):
    if type(value) is not bool:
        raise _Invalid(path, "must be a boolean, got %s" % _got(value))


def _uuid(value, path):
    _string(value, path)
    if _UUID_MATCH(value) is None:
        raise _Invalid(path, "must be a uuid, got %s" % quote(value))


def _datetime(value, path):
    _string(value, path)
    try:
        timeutils.parse_isotime(value)
    except ValueError:
        raise _Invalid(path, "must be an ISO 8601 date-time, got %s"
                       % quote(value)) from None


def _list(value, path):
    if type(value) is not list:
        raise _Invalid(path, "must be a list, got %s" % _got(value))
    return value


def _dict(value, path):
    if type(value) is not dict:
        raise _Invalid(path, "must be a JSON object, got %s" % _got(value))
    for key in value:
        _string(key, "%s (key %s)" % (path, quote(key)))
    return value


# -- field types, from the objects' own definitions -------------------------


def _field(field, value, path, limits):
    """A value of an oslo.versionedobjects ``Field`` (nullable or not)."""
    if value is None:
        if field.nullable:
            return
        raise _Invalid(path, "must not be null")
    _typed(field._type, value, path, limits)


def _enum(ftype, value, path, limits):
    _string(value, path)
    if value not in ftype.valid_values:
        raise _Invalid(path, "must be one of %s, got %s"
                       % (", ".join(ftype.valid_values), quote(value)))


def _each(ftype, value, path, limits):
    for index, item in enumerate(_list(value, path)):
        _field(ftype._element_type, item, "%s[%d]" % (path, index), limits)


def _values(ftype, value, path, limits):
    for key, item in _dict(value, path).items():
        _field(ftype._element_type, item, "%s[%s]" % (path, quote(key)),
               limits)


def _nested(ftype, value, path, limits):
    check_object(ftype._obj_name, value, path, limits)


def _scalar(check):
    return lambda ftype, value, path, limits: check(value, path)


def _non_negative(value, path):
    _integer(value, path, low=0)


#: (field type, check), most specific first: Enum is a String, Gantt's
#: UUID is ovo's
_TYPES = (
    (ovo_fields.Enum, _enum),
    (ovo_fields.UUID, _scalar(_uuid)),
    (ovo_fields.String, _scalar(_string)),
    (ovo_fields.Boolean, _scalar(_boolean)),
    (ovo_fields.NonNegativeInteger, _scalar(_non_negative)),
    (ovo_fields.Integer, _scalar(_integer)),
    (ovo_fields.Float, _scalar(_float)),
    (ovo_fields.DateTime, _scalar(_datetime)),
    (ovo_fields.List, _each),
    (ovo_fields.Dict, _values),
    (ovo_fields.Object, _nested),
)


def _typed(ftype, value, path, limits):
    for cls, check in _TYPES:
        if isinstance(ftype, cls):
            return check(ftype, value, path, limits)
    # every field type Gantt's objects use is above (a unit test walks them)
    raise _Invalid(path, "has a field type the wire does not carry")


def field_types():
    """The field types this module checks (for the test that walks every
    object's fields)."""
    return tuple(cls for cls, _ in _TYPES)


# -- objects -----------------------------------------------------------------


def _object_class(name):
    return objects_base.GanttObjectRegistry.obj_classes()[name][0]


def _version(value, cls, path):
    """The primitive's version must be one ``cls`` reads."""
    match = _VERSION_RE.match(value) if type(value) is str else None
    if match is None:
        raise _Invalid(path, "has a malformed version %s" % quote(value))
    major, minor = (int(g) for g in match.groups())
    own_major, own_minor = (int(p) for p in cls.VERSION.split("."))
    if major != own_major or minor > own_minor:
        raise _Invalid(path, "is %s version %s; this worker reads %d.0 to "
                             "%s" % (cls.obj_name(), value, own_major,
                                     cls.VERSION))


def _envelope(name, primitive, path):
    """The primitive's keys, name, namespace, version and changes."""
    if type(primitive) is not dict:
        raise _Invalid(path, "must be a %s object, got %s"
                       % (name, _got(primitive)))
    unknown = primitive.keys() - _KEYS
    if unknown:
        raise _Invalid(path, "has an unknown key %s"
                       % quote(sorted(map(str, unknown))[0]))
    if primitive.get(_NAMESPACE) != objects_base.GanttObject.\
            OBJ_PROJECT_NAMESPACE or primitive.get(_NAME) != name:
        raise _Invalid(path, "must be a %s object of namespace gantt, got "
                             "%s" % (name, quote(primitive.get(_NAME))))
    cls = _object_class(name)
    _version(primitive.get(_VERSION), cls, path)
    for index, change in enumerate(_list(primitive.get(_CHANGES, []),
                                         path + " changes")):
        _string(change, "%s changes[%d]" % (path, index))
    return cls


def check_object(name, primitive, path, limits=DEFAULT_LIMITS):
    """Check the primitive of a ``name`` object (and all it embeds).

    :raises: _Invalid
    """
    cls = _envelope(name, primitive, path)
    data = _dict(primitive.get(_DATA), path + " data")
    for key in data:
        if key not in cls.fields:
            raise _Invalid("%s.%s" % (path, key),
                           "is not a field of %s" % name)
    for fname, field in cls.fields.items():
        fpath = "%s.%s" % (path, fname)
        if fname in data:
            _field(field, data[fname], fpath, limits)
        elif field.default is ovo_fields.UnspecifiedDefault:
            raise _Invalid(fpath, "is required")
    for rule in _RULES.get(name, ()):
        rule(data, path, limits)


# -- rules the field types cannot express ------------------------------------


def _uuids(field):
    def rule(data, path, limits):
        for index, value in enumerate(data.get(field) or ()):
            _uuid(value, "%s.%s[%d]" % (path, field, index))
    return rule


def _int32(field):
    def rule(data, path, limits):
        if field in data:
            _integer(data[field], "%s.%s" % (path, field), 0, INT32_MAX)
    return rule


def _positive_ratio(data, path, limits):
    ratio = data.get("allocation_ratio", 1.0)
    if ratio <= 0:
        raise _Invalid(path + ".allocation_ratio",
                       "must be greater than 0, got %s" % ratio)


def _positive_amounts(data, path, limits):
    for rc, amount in data.get("resources", {}).items():
        if amount < 1:
            raise _Invalid("%s.resources[%s]" % (path, quote(rc)),
                           "must be at least 1, got %d" % amount)


def _providers(data):
    """The data of a report's providers: the node and its children."""
    return [data] + [c[_DATA] for c in data.get("child_providers", ())]


def _tree_size(data, path, limits):
    """Resource classes, traits and children of a whole report."""
    children = len(data.get("child_providers", ()))
    if children > limits.max_report_children:
        raise _Invalid(path + ".child_providers", "has %d providers; "
                       "[wire] max_report_children is %d"
                       % (children, limits.max_report_children))
    providers = _providers(data)
    classes = {inv[_DATA]["resource_class"] for p in providers
               for inv in p.get("inventories", ())}
    traits = {t for p in providers for t in p.get("traits", ())}
    _at_most(path, "resource classes", len(classes),
             "max_report_resource_classes", limits)
    _at_most(path, "traits", len(traits), "max_report_traits", limits)


def _at_most(path, what, count, option, limits):
    limit = getattr(limits, option)
    if count > limit:
        raise _Invalid(path, "has %d distinct %s; [wire] %s is %d"
                       % (count, what, option, limit))


_RULES = {
    "ComputeNode": (_int32("num_instances"), _int32("num_io_ops"),
                    _uuids("aggregates"), _uuids("instance_uuids"),
                    _tree_size),
    "ResourceProvider": (_uuids("aggregates"), _tree_size),
    "Inventory": (_positive_ratio,),
    "AllocationItem": (_positive_amounts,),
    "InstanceGroup": (_uuids("members"),),
}


# -- RPC arguments -----------------------------------------------------------


def _object_arg(name, nullable=False):
    def check(value, path, limits):
        if value is None and nullable:
            return
        check_object(name, value, path, limits)
    return check


def _objects_arg(name):
    def check(value, path, limits):
        for index, item in enumerate(_list(value, path)):
            check_object(name, item, "%s[%d]" % (path, index), limits)
    return check


def _uuid_arg(value, path, limits):
    _uuid(value, path)


def _instances_arg(value, path, limits):
    uuids = _list(value, path)
    if not 1 <= len(uuids) <= limits.max_instances_per_request:
        raise _Invalid(path, "must list 1 to %d instances, got %d"
                       % (limits.max_instances_per_request, len(uuids)))
    for index, item in enumerate(uuids):
        _uuid(item, "%s[%d]" % (path, index))
    if len(set(uuids)) != len(uuids):
        raise _Invalid(path, "lists an instance twice")


def _hosts_arg(value, path, limits):
    if value is not None:
        for index, item in enumerate(_list(value, path)):
            _string(item, "%s[%d]" % (path, index))


def _bool_arg(value, path, limits):
    _boolean(value, path)


def _limit_arg(low):
    def check(value, path, limits):
        _integer(value, path, low, INT32_MAX)
    return check


def _optional_string_arg(value, path, limits):
    if value is not None:
        _string(value, path)


_SPEC = _object_arg("RequestSpec")
_NODE = _object_arg("ComputeNode")

#: every argument of every method of SchedulerEndpoint and StatsEndpoint
#: (a unit test checks that the names match their signatures)
ARGUMENTS = {
    "update_resource_stats": {"compute_node": _NODE},
    "select_destinations": {"request_spec": _SPEC,
                            "instance_uuids": _instances_arg,
                            "return_alternates": _bool_arg},
    "reclaim": {"instance_uuid": _uuid_arg,
                "failed_selection": _object_arg("Selection", True),
                "alternates": _objects_arg("Selection")},
    "release": {"consumer_uuid": _uuid_arg},
    "get_host_states": {"hosts": _hosts_arg},
    "get_statistics": {},
    "provider_usage_changed": {"usages": _objects_arg("ProviderUsage")},
    "explain": {"request_spec": _SPEC, "limit": _limit_arg(0)},
    "set_aggregate": {"aggregate": _object_arg("Aggregate")},
    "delete_aggregate": {"aggregate_uuid": _uuid_arg},
    "get_aggregates": {},
    "aggregates_changed": {},
    "report_resource_stats": {"compute_node": _NODE, "force": _bool_arg},
    "update_provider": {"report": _object_arg("ProviderReport")},
    "delete_provider": {"provider_uuid": _uuid_arg},
    "providers_changed": {},
    "get_allocation_candidates": {"request_spec": _SPEC,
                                  "limit": _limit_arg(1)},
    "claim_allocations": {"consumer_uuid": _uuid_arg,
                          "allocation_request":
                              _object_arg("AllocationRequest"),
                          "project_id": _optional_string_arg,
                          "user_id": _optional_string_arg},
    "move_claim": {"request_spec": _SPEC, "instance_uuid": _uuid_arg,
                   "migration_uuid": _uuid_arg,
                   "return_alternates": _bool_arg},
    "confirm_move": {"migration_uuid": _uuid_arg},
    "revert_move": {"instance_uuid": _uuid_arg, "migration_uuid": _uuid_arg},
}


def check_arguments(method, args, limits=DEFAULT_LIMITS):
    """Check the arguments of a call or cast of ``method`` (their names
    already match the method's signature).

    :raises: InvalidRequest naming the argument, the field and why
    """
    checks = ARGUMENTS.get(method)
    if checks is None:
        return      # not a Gantt method (oslo.messaging's own ping)
    try:
        for name, value in args.items():
            checks[name](value, name, limits)
    except _Invalid as exc:
        raise exception.InvalidRequest(
            reason="%s: %s" % (method, exc)) from None


def check_envelope(message, limits, size):
    """What the dispatcher reads itself: method, version, namespace, args
    and the message's size, before anything is decoded.

    :raises: InvalidRequest
    """
    if size is not None and size > limits.max_message_bytes:
        raise exception.InvalidRequest(
            reason="a message of %d bytes exceeds [wire] max_message_bytes "
                   "(%d)" % (size, limits.max_message_bytes))
    for key, kinds in (("method", (str,)), ("version", (str,)),
                       ("namespace", (str, type(None))),
                       ("args", (dict,))):
        if key in message and type(message[key]) not in kinds:
            raise exception.InvalidRequest(
                reason="the message's %s must be a %s, got %s" % (
                    key, "string" if str in kinds else "JSON object",
                    quote(message[key])))
    if "method" not in message:
        raise exception.InvalidRequest(reason="the message names no method")


#: keys of the request context Gantt reads, and the JSON type of each
_CONTEXT = {"request_id": str, "global_request_id": str, "user_id": str,
            "user": str, "project_id": str, "user_name": str,
            "project_name": str, "is_admin": bool, "read_only": bool,
            "roles": list}


def check_context(ctxt):
    """The context must be a JSON object whose keys Gantt reads have the
    right types (others are ignored).

    :raises: InvalidRequest
    """
    if not isinstance(ctxt, dict):
        raise exception.InvalidRequest(
            reason="the context must be a JSON object, got %s" % _got(ctxt))
    try:
        for key, kind in _CONTEXT.items():
            value = ctxt.get(key)
            if value is not None and type(value) is not kind:
                raise _Invalid("context." + key, "must be a %s, got %s"
                               % (kind.__name__, _got(value)))
        for index, role in enumerate(ctxt.get("roles") or ()):
            _string(role, "context.roles[%d]" % index)
        for key in _CONTEXT:
            if type(ctxt.get(key)) is str:
                _string(ctxt[key], "context." + key)
    except _Invalid as exc:
        raise exception.InvalidRequest(reason=str(exc)) from None


def context_is_valid(ctxt):
    """:func:`check_context` as a boolean."""
    try:
        check_context(ctxt)
    except exception.InvalidRequest:
        return False
    return True
