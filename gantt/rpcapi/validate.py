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
  per report, capabilities per standalone provider, and instances per
  request.

A failure is an ``InvalidRequest`` whose reason names the argument and
field path and says why (``compute_node.inventories[0].total must be an
integer, got true``); values are quoted shortened, never whole.

The module is longer than most: it is the one place where the wire's
rules live, so that a reader (and the wire reference) finds them together.
"""

import dataclasses
import math
import re
import typing

from oslo_utils import timeutils
from oslo_versionedobjects import fields as ovo_fields

from gantt import exception
from gantt import objects
from gantt.objects import base as objects_base
from gantt.objects import fields as gantt_fields
from gantt.objects import provider as provider_obj

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
_RPC_VERSION_RE = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}(\.[0-9]{1,3})?$")
_UUID_MATCH = re.compile(ovo_fields.UUID.PATTERN).match
_GANTT = objects_base.GanttObject.OBJ_PROJECT_NAMESPACE
_STR = frozenset([str])


@dataclasses.dataclass(frozen=True)
class Limits:
    """How much one message may carry (``[wire]`` options)."""

    max_message_bytes: int = 1048576
    max_report_resource_classes: int = 256
    max_report_traits: int = 256
    max_report_children: int = 256
    max_instances_per_request: int = 1000
    max_report_capabilities: int = 64

    @classmethod
    def from_conf(cls, conf):
        wire = conf.wire
        return cls(**{f.name: getattr(wire, f.name)
                      for f in dataclasses.fields(cls)})


DEFAULT_LIMITS = Limits()


class _Invalid(Exception):
    """A broken rule; the path to the bad value is filled in on the way
    out (nothing is spent on paths while values are valid)."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why
        self.parts = []

    def at(self, part):
        self.parts.insert(0, part)
        return self

    def __str__(self):
        return "%s %s" % ("".join(map(_render, self.parts)), self.why)


class _Key(str):
    """A dict key in a path: ``[...]``."""


class _Text(str):
    """Words in a path, as they are."""


def _render(part):
    if isinstance(part, _Text):
        return part
    if isinstance(part, _Key):
        return "[%s]" % quote(str(part))
    if isinstance(part, int):
        return "[%d]" % part
    return "." + part


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


# -- scalars: check(value, limits), raising _Invalid -------------------------


def _string(value, limits=None):
    if type(value) is not str:
        raise _Invalid("must be a string, got %s" % _got(value))
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Invalid("is not valid Unicode (a lone surrogate at "
                           "character %d)" % _surrogate(value)) from None


def _surrogate(text):
    return next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)


def _integer_between(low, high):
    def check(value, limits=None):
        if type(value) is not int:
            raise _Invalid("must be an integer, got %s" % _got(value))
        if not low <= value <= high:
            raise _Invalid("must be between %d and %d, got %d"
                           % (low, high, value))
    return check


_integer = _integer_between(INT64_MIN, INT64_MAX)
_non_negative = _integer_between(0, INT64_MAX)
_int32 = _integer_between(0, INT32_MAX)


def _float(value, limits=None):
    if type(value) is not float and type(value) is not int:
        raise _Invalid("must be a number, got %s" % _got(value))
    if not math.isfinite(value):
        raise _Invalid("must be a finite number, got %s" % value)


def _boolean(value, limits=None):
    if type(value) is not bool:
        raise _Invalid("must be a boolean, got %s" % _got(value))


def _uuid(value, limits=None):
    if type(value) is not str or _UUID_MATCH(value) is None:
        raise _Invalid("must be a uuid, got %s" % _got(value))


def _capability(value, limits=None):
    """A typed capability value (``fields.CapabilityValue``): a string
    of at most 255 characters, a 64-bit integer, a finite float or a
    boolean."""
    kind = type(value)
    if kind is str:
        _string(value)
        if len(value) > 255:
            raise _Invalid("must be at most 255 characters, got %d"
                           % len(value))
    elif kind is int:
        _integer(value)
    elif kind is float:
        _float(value)
    elif kind is not bool:
        raise _Invalid("must be a string, an integer, a float or a "
                       "boolean, got %s" % _got(value))


def _datetime(value, limits=None):
    _string(value)
    try:
        timeutils.parse_isotime(value)
    except ValueError:
        raise _Invalid("must be an ISO 8601 date-time, got %s"
                       % quote(value)) from None


def _list(value):
    if type(value) is not list:
        raise _Invalid("must be a list, got %s" % _got(value))
    return value


def _dict(value):
    if type(value) is not dict:
        raise _Invalid("must be a JSON object, got %s" % _got(value))
    for key in value:
        try:
            _string(key)
        except _Invalid as exc:
            exc.at(_Text(" (key %s)" % quote(key)))
            raise
    return value


# -- field types, compiled from the objects' own definitions ------------------


def _list_of(check):
    if check is _string:
        return _strings
    def each(value, limits=None):
        for index, item in enumerate(_list(value)):
            try:
                check(item, limits)
            except _Invalid as exc:
                exc.at(index)
                raise
    return each


def _strings(value, limits=None):
    """A list of strings: one pass in C when all are ASCII strings."""
    if (type(value) is list and set(map(type, value)) <= _STR
            and "".join(value).isascii()):
        return
    for index, item in enumerate(_list(value)):
        try:
            _string(item)
        except _Invalid as exc:
            exc.at(index)
            raise


def _dict_of(check):
    if check is _string:
        return _string_values
    def values(value, limits):
        for key, item in _dict(value).items():
            try:
                check(item, limits)
            except _Invalid as exc:
                exc.at(_Key(key))
                raise
    return values


def _string_values(value, limits=None):
    """A dict of strings, as :func:`_strings`."""
    if (type(value) is dict and set(map(type, value.values())) <= _STR
            and set(map(type, value)) <= _STR
            and "".join(value).isascii()
            and "".join(value.values()).isascii()):
        return
    for key, item in _dict(value).items():
        try:
            _string(item)
        except _Invalid as exc:
            exc.at(_Key(key))
            raise


def _enum_of(valid):
    def check(value, limits=None):
        _string(value)
        if value not in valid:
            raise _Invalid("must be one of %s, got %s"
                           % (", ".join(valid), quote(value)))
    return check


def _object_of(name):
    return lambda value, limits: check_object(name, value, limits)


def _nullable(check):
    def maybe(value, limits):
        if value is not None:
            check(value, limits)
    return maybe


#: (field type, compiler of its check), most specific first: Enum is a
#: String, Gantt's UUID is ovo's
_TYPES = (
    (gantt_fields.CapabilityValue, lambda t: _capability),
    (ovo_fields.Enum, lambda t: _enum_of(tuple(t.valid_values))),
    (ovo_fields.UUID, lambda t: _uuid),
    (ovo_fields.String, lambda t: _string),
    (ovo_fields.Boolean, lambda t: _boolean),
    (ovo_fields.NonNegativeInteger, lambda t: _non_negative),
    (ovo_fields.Integer, lambda t: _integer),
    (ovo_fields.Float, lambda t: _float),
    (ovo_fields.DateTime, lambda t: _datetime),
    (ovo_fields.List, lambda t: _list_of(_compile(t._element_type))),
    (ovo_fields.Dict, lambda t: _dict_of(_compile(t._element_type))),
    (ovo_fields.Object, lambda t: _object_of(t._obj_name)),
)


def _compile(field):
    """The check of an oslo.versionedobjects ``Field``'s values."""
    for cls, compiler in _TYPES:
        if isinstance(field._type, cls):
            check = compiler(field._type)
            # a null where none may be fails the type check ("must be a
            # list, got null")
            return _nullable(check) if field.nullable else check
    # every field type of Gantt's objects is above (a unit test walks them)
    raise TypeError("no check for %r" % field)


def field_types():
    """The field types this module checks (for the test that walks every
    object's fields)."""
    return tuple(cls for cls, _ in _TYPES)


# -- objects -----------------------------------------------------------------


class _Schema(typing.NamedTuple):
    """What the primitive of one object class must hold."""

    cls: type
    major: int
    minor: int
    versions: frozenset
    checks: dict
    required: tuple


def _schema(cls):
    major, minor = (int(p) for p in cls.VERSION.split("."))
    return _Schema(cls, major, minor,
                   frozenset("%d.%d" % (major, m) for m in range(minor + 1)),
                   {n: _compile(f) for n, f in cls.fields.items()},
                   tuple(n for n, f in cls.fields.items()
                         if f.default is ovo_fields.UnspecifiedDefault))


def _version(value, schema):
    """The primitive's version must be one ``schema`` reads."""
    if type(value) is str and value in schema.versions:
        return
    match = _VERSION_RE.match(value) if type(value) is str else None
    if match is None:
        raise _Invalid("has a malformed version %s" % quote(value))
    major, minor = (int(g) for g in match.groups())
    if major != schema.major or minor > schema.minor:
        raise _Invalid("is %s version %s; this worker reads %d.0 to %s"
                       % (schema.cls.obj_name(), value, schema.major,
                          schema.cls.VERSION))


def _envelope(name, primitive):
    """The primitive's keys, name, namespace, version and changes."""
    if type(primitive) is not dict:
        raise _Invalid("must be a %s object, got %s"
                       % (name, _got(primitive)))
    if primitive.get(_NAMESPACE) != _GANTT or primitive.get(_NAME) != name:
        raise _Invalid("must be a %s object of namespace gantt, got %s"
                       % (name, quote(primitive[_NAME]) if _NAME in primitive
                          else "a JSON object that is no object primitive"))
    if not primitive.keys() <= _KEYS:
        raise _Invalid("has an unknown key %s" % quote(
            sorted(map(str, primitive.keys() - _KEYS))[0]))
    schema = _SCHEMAS[name]
    _version(primitive.get(_VERSION), schema)
    changes = primitive.get(_CHANGES, [])
    if type(changes) is not list or not set(map(type, changes)) <= _STR:
        raise _Invalid("changes must be a list of strings")
    for index, change in enumerate(
            () if "".join(changes).isascii() else changes):
        if not change.isascii():
            try:
                _string(change)
            except _Invalid as exc:
                exc.at(index).at(_Text(" changes"))
                raise
    return schema


def check_object(name, primitive, limits=DEFAULT_LIMITS):
    """Check the primitive of a ``name`` object (and all it embeds).

    :raises: _Invalid
    """
    schema = _envelope(name, primitive)
    data = primitive.get(_DATA)
    if type(data) is not dict:
        # (its keys are checked against the fields below)
        raise _Invalid("data must be a JSON object, got %s" % _got(data))
    checks = schema.checks
    for key, value in data.items():
        check = checks.get(key)
        if check is None:
            raise _Invalid("is not a field of %s" % name).at(str(key))
        try:
            check(value, limits)
        except _Invalid as exc:
            exc.at(key)
            raise
    for key in schema.required:
        if key not in data:
            raise _Invalid("is required").at(key)
    for rule in _RULES.get(name, ()):
        rule(data, limits)


# -- rules the field types cannot express ------------------------------------


def _each_of(field, check):
    def rule(data, limits):
        values = data.get(field)
        if values is not None:
            try:
                _list_of(check)(values, limits)
            except _Invalid as exc:
                exc.at(field)
                raise
    return rule


def _within(field, check):
    def rule(data, limits):
        if field in data:
            try:
                check(data[field])
            except _Invalid as exc:
                exc.at(field)
                raise
    return rule


def _short(field, length=255):
    """Strings the database stores in a column of ``length`` characters."""
    def check(value, limits=None):
        if value is not None and len(value) > length:
            raise _Invalid("must be at most %d characters, got %d"
                           % (length, len(value)))
    return _within(field, check)


def _short_entries(field, length=255):
    def check(values, limits=None):
        for index, value in enumerate(values):
            if len(value) > length:
                raise _Invalid("must be at most %d characters, got %d"
                               % (length, len(value))).at(index)
    return _within(field, check)


def _short_items(field, length=255):
    def check(values, limits=None):
        for key, value in values.items():
            if max(len(key), len(value)) > length:
                raise _Invalid("key and value must be at most %d "
                               "characters" % length).at(_Key(key))
    return _within(field, check)


def _positive_ratio(data, limits):
    ratio = data.get("allocation_ratio", 1.0)
    if ratio <= 0:
        raise _Invalid("must be greater than 0, got %s" % ratio).at(
            "allocation_ratio")


def _positive_amounts(data, limits):
    for rc, amount in data.get("resources", {}).items():
        if amount < 1:
            raise _Invalid("must be at least 1, got %d" % amount).at(
                _Key(rc)).at("resources")


def _positive_seconds(value, limits=None):
    if not 0 < value <= 3600:
        raise _Invalid("must be more than 0 and at most 3600 seconds, "
                       "got %s" % value)


def _providers(data):
    """The data of a report's providers: the node and its children."""
    return [data] + [c[_DATA] for c in data.get("child_providers", ())]


def _tree_size(data, limits):
    """Resource classes, traits and children of a whole report."""
    children = len(data.get("child_providers", ()))
    if children > limits.max_report_children:
        raise _Invalid("has %d providers; [wire] max_report_children is %d"
                       % (children, limits.max_report_children)).at(
                           "child_providers")
    providers = _providers(data)
    classes = {inv[_DATA]["resource_class"] for p in providers
               for inv in p.get("inventories", ())}
    traits = {t for p in providers for t in p.get("traits", ())}
    _at_most("resource classes", len(classes), "max_report_resource_classes",
             limits)
    _at_most("traits", len(traits), "max_report_traits", limits)


def _at_most(what, count, option, limits):
    limit = getattr(limits, option)
    if count > limit:
        raise _Invalid("has %d distinct %s; [wire] %s is %d"
                       % (count, what, option, limit))


def _provider_kind(data, limits):
    """What a standalone provider says it is (ProviderReport 1.2)."""
    kind = data.get("kind", provider_obj.ProviderReport.DEFAULT_KIND)
    reason = provider_obj.kind_error(kind)
    if reason is not None:
        raise _Invalid(reason).at("kind")
    capabilities = data.get("capabilities", {})
    _at_most("capabilities", len(capabilities), "max_report_capabilities",
             limits)
    for key in capabilities:
        if not 0 < len(key) <= 255:
            raise _Invalid("names must be 1 to 255 characters").at(
                _Key(key)).at("capabilities")


_RULES = {
    "ComputeNode": (_within("num_instances", _int32),
                    _within("num_io_ops", _int32),
                    _each_of("aggregates", _uuid),
                    _each_of("instance_uuids", _uuid), _tree_size),
    "ResourceProvider": (_each_of("aggregates", _uuid), _tree_size),
    "ProviderReport": (_provider_kind, _short("service"),
                       _short("availability_zone")),
    "Inventory": (_positive_ratio,),
    "AllocationItem": (_positive_amounts,),
    "InstanceGroup": (_each_of("members", _uuid),),
    "RequestSpec": (_short("project_id"), _short("user_id"),
                    _short("profile"), _short("packing"),
                    _short_items("capabilities")),
    "Aggregate": (_short("name"), _short_entries("hosts"),
                  _short_items("metadata")),
    "GroupRequest": (_short("project_id"), _short("user_id"),
                     _within("time_budget", _positive_seconds),
                     _within("reservation_ttl", _int32)),
    "GroupMember": (_short("name"),
                    _within("count", _integer_between(1, INT32_MAX))),
    "GroupLevelPolicy": (_short("level"), _within("limit", _int32)),
}

objects.register_all()
#: every object class's schema, built once here (never changed after);
#: ovo's registry is one per process, and a process that imports another
#: project's objects too (Nova's, in the tests that drive Gantt with
#: Nova's clients) has theirs in it as well
_SCHEMAS = {name: _schema(classes[0]) for name, classes in
            objects_base.gantt_classes().items()}


# -- RPC arguments: check(value, limits) -------------------------------------


def _object_arg(name, nullable=False):
    check = _object_of(name)
    return _nullable(check) if nullable else check


def _instances_arg(value, limits):
    uuids = _list(value)
    if not 1 <= len(uuids) <= limits.max_instances_per_request:
        raise _Invalid("must list 1 to %d instances, got %d"
                       % (limits.max_instances_per_request, len(uuids)))
    _list_of(_uuid)(uuids, limits)
    if len(set(uuids)) != len(uuids):
        raise _Invalid("lists an instance twice")


def _short_string(value, limits=None):
    _string(value)
    if len(value) > 255:
        raise _Invalid("must be at most 255 characters, got %d" % len(value))


_SPEC = _object_arg("RequestSpec")
_NODE = _object_arg("ComputeNode")
_UUID = _uuid

#: every argument of every method of SchedulerEndpoint and StatsEndpoint
#: (a unit test checks that the names match their signatures)
ARGUMENTS = {
    "update_resource_stats": {"compute_node": _NODE},
    "select_destinations": {"request_spec": _SPEC,
                            "instance_uuids": _instances_arg,
                            "return_alternates": _boolean,
                            "replace": _boolean},
    "reclaim": {"instance_uuid": _UUID,
                "failed_selection": _object_arg("Selection", True),
                "alternates": _list_of(_object_of("Selection"))},
    "release": {"consumer_uuid": _UUID},
    "get_host_states": {"hosts": _nullable(_list_of(_string))},
    "get_statistics": {},
    "provider_usage_changed": {"usages": _list_of(_object_of(
        "ProviderUsage"))},
    "explain": {"request_spec": _SPEC,
                "limit": _integer_between(0, INT32_MAX)},
    "set_aggregate": {"aggregate": _object_arg("Aggregate")},
    "delete_aggregate": {"aggregate_uuid": _UUID},
    "get_aggregates": {},
    "aggregates_changed": {},
    "report_resource_stats": {"compute_node": _NODE, "force": _boolean},
    "update_provider": {"report": _object_arg("ProviderReport")},
    "delete_provider": {"provider_uuid": _UUID},
    "retire_provider": {"provider_uuid": _UUID,
                        "generation": _integer_between(0, INT64_MAX)},
    "providers_changed": {},
    "trees_changed": {"root_uuids": _list_of(_UUID)},
    "get_allocation_candidates": {"request_spec": _SPEC,
                                  "limit": _integer_between(1, INT32_MAX)},
    "claim_allocations": {"consumer_uuid": _UUID,
                          "allocation_request":
                              _object_arg("AllocationRequest"),
                          "project_id": _nullable(_short_string),
                          "user_id": _nullable(_short_string)},
    "move_claim": {"request_spec": _SPEC, "instance_uuid": _UUID,
                   "migration_uuid": _UUID, "return_alternates": _boolean},
    "confirm_move": {"migration_uuid": _UUID},
    "revert_move": {"instance_uuid": _UUID, "migration_uuid": _UUID},
    "reset_report_sequence": {"host": _short_string},
    "report_sequence_reset": {"provider_uuid": _UUID},
    "plan_group": {"group_request": _object_arg("GroupRequest")},
    "reserve_group": {"group_request": _object_arg("GroupRequest")},
    "extend_group": {"group_request": _object_arg("GroupRequest")},
    "release_group": {"group_uuid": _UUID},
}


def check_arguments(method, args, limits=DEFAULT_LIMITS):
    """Check the arguments of a call or cast of ``method`` (their names
    already match the method's signature).

    :raises: InvalidRequest naming the argument, the field and why
    """
    checks = ARGUMENTS.get(method)
    if checks is None:
        return      # not a Gantt method (oslo.messaging's own ping)
    for name, value in args.items():
        try:
            checks[name](value, limits)
        except _Invalid as exc:
            exc.parts.insert(0, _Text(name))
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
    if not rpc_version_is_valid(message.get("version", "1.0")):
        raise exception.InvalidRequest(
            reason="the message's version %s is not MAJOR.MINOR"
                   % quote(message["version"]))


def rpc_version_is_valid(version):
    """Whether ``version`` is an RPC version oslo.messaging can compare
    (it raises on anything else)."""
    return type(version) is str and bool(_RPC_VERSION_RE.match(version))


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
            if value is None:
                continue
            if type(value) is not kind:
                raise _Invalid("must be a %s, got %s"
                               % (kind.__name__, _got(value))).at(key)
            try:
                if kind is not bool:
                    (_list_of(_string) if kind is list else _string)(value)
            except _Invalid as exc:
                exc.at(key)
                raise
    except _Invalid as exc:
        exc.parts.insert(0, _Text("context"))
        raise exception.InvalidRequest(reason=str(exc)) from None


def context_is_valid(ctxt):
    """:func:`check_context` as a boolean."""
    try:
        check_context(ctxt)
    except exception.InvalidRequest:
        return False
    return True
