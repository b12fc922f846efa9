"""Agents' reports from their wire form, without objects: the intake's
fast parsing of ``update_resource_stats`` primitives into HostUpdates.

A worker takes thousands of full reports a second, and most of them only
say again what the cache holds with a higher ``report_sequence``. Going
through oslo.versionedobjects, ``HostUpdate.from_compute_node`` and the
object validation costs about 0.5 ms of CPU each, under the GIL that the
messaging threads also need; here a report costs a fraction of that:

* **Peek before anything.** :func:`peek` reads ``uuid`` and
  ``report_sequence`` from the primitive, so that the intake
  (``batching.py``) can drop a report not newer than the one it holds
  before any object is built.
* **No objects.** A report in the canonical form that Gantt's own
  serializer writes (the types each field holds, the object versions this
  code knows, no NUMA cells, PCI pools or child providers) becomes a
  ``HostUpdate`` directly (:func:`fast_report`), checked against the same
  rules as ``report_rules.validate_node``. Anything else takes the object
  path (oslo.versionedobjects, ``validate_node``, ``from_compute_node``),
  so a report the fast path cannot vouch for is judged exactly as before
  (:func:`build_report` tries one, then the other).
"""

import threading

from oslo_utils import uuidutils
from oslo_versionedobjects import exception as ovo_exc

from gantt import exception
from gantt.objects import base as objects_base
from gantt.objects import compute_node as cn_obj
from gantt.rpcapi import validate
from gantt.scheduler import vocabulary
from gantt.scheduler.intake import report_rules
from gantt.scheduler.state import update as update_mod

_NAME = "gantt_object.name"
_NAMESPACE = "gantt_object.namespace"
_VERSION = "gantt_object.version"
_DATA = "gantt_object.data"
_OBJ_NAMESPACE = objects_base.GanttObject.OBJ_PROJECT_NAMESPACE


def _versions(cls):
    """The version strings of ``cls`` this code reads as they are."""
    major, minor = cls.VERSION.split(".")
    return frozenset("%s.%d" % (major, m) for m in range(int(minor) + 1))


_NODE_VERSIONS = _versions(cn_obj.ComputeNode)
_INVENTORY_VERSIONS = _versions(cn_obj.Inventory)
_NODE_FIELDS = frozenset(cn_obj.ComputeNode.fields)
_INVENTORY_FIELDS = frozenset(cn_obj.Inventory.fields)
#: ComputeNode fields whose content only the object path reads
_OBJECT_LISTS = ("numa_cells", "pci_pools", "child_providers")
#: Inventory's defaults, in update.Inventory's field order after total
_INVENTORY_DEFAULTS = (("reserved", 0), ("min_unit", 1),
                       ("max_unit", 2147483647), ("step_size", 1))
_UPDATED_AT = cn_obj.ComputeNode.fields["updated_at"]
#: longest value the database stores for each string field of a report
_MAX_LENGTH = report_rules.MAX_LENGTH
_STR = frozenset([str])


class _ObjectPath(Exception):
    """The fast path cannot vouch for this primitive: use the objects."""


def peek(primitive):
    """``(uuid, report_sequence, boot_id)`` of a ComputeNode primitive, or
    None.

    None means the primitive is not in the canonical form (another object,
    an unknown version, a field of an unexpected type): only the object
    path can say what it is.
    """
    try:
        if (primitive[_NAME] != "ComputeNode"
                or primitive[_NAMESPACE] != _OBJ_NAMESPACE
                or primitive[_VERSION] not in _NODE_VERSIONS):
            return None
        data = primitive[_DATA]
        uuid = data["uuid"]
        sequence = data["report_sequence"]
        boot_id = data.get("boot_id")
    except (KeyError, TypeError, IndexError, AttributeError):
        return None
    if type(uuid) is not str or type(sequence) is not int or not (
            boot_id is None or type(boot_id) is str):
        return None
    if not validate.INT64_MIN <= sequence <= validate.INT64_MAX:
        # the cache holds int64 sequences: let the checks refuse it
        return None
    return uuid, sequence, boot_id


def build_report(primitive, received_at, known=None):
    """A validated HostUpdate from a ComputeNode primitive.

    Equal to ``HostUpdate.from_compute_node`` of the deserialized object,
    after ``validate_node``: the fast path when the primitive is
    canonical, the object path otherwise.

    :param known: the caller's :class:`KnownValid` (None: keep nothing)

    :returns: (HostUpdate, the ComputeNode object or None if none was made)
    :raises: InvalidRequest, naming what is wrong
    """
    try:
        return fast_report(primitive, received_at, known), None
    except _ObjectPath:
        pass
    node = deserialize(primitive)
    try:
        report_rules.validate_node(node)
        report = update_mod.HostUpdate.from_compute_node(node, received_at)
    except (ovo_exc.VersionedObjectsException, ValueError, TypeError,
            KeyError, AttributeError) as exc:
        raise exception.InvalidRequest(
            reason="malformed object: %s" % (exc,)) from None
    return report, node


def deserialize(primitive):
    """The ComputeNode object of a primitive, as the RPC serializer makes it.

    :raises: InvalidRequest
    """
    try:
        node = objects_base.GanttObjectSerializer().deserialize_entity(
            None, primitive)
    except ovo_exc.IncompatibleObjectVersion as exc:
        raise exception.InvalidRequest(
            reason="object version not supported: %s" % exc) from None
    except (ovo_exc.VersionedObjectsException, ValueError, TypeError,
            KeyError, AttributeError) as exc:
        raise exception.InvalidRequest(
            reason="malformed object: %s" % (exc,)) from None
    if not isinstance(node, cn_obj.ComputeNode):
        raise exception.InvalidRequest(
            reason="compute_node must be a ComputeNode object, got %s"
                   % type(node).__name__)
    return node


# -- the fast path ------------------------------------------------------------


def fast_report(primitive, received_at, known=None):
    """A HostUpdate straight from a canonical primitive (see the module).

    :param known: the caller's :class:`KnownValid` (None: keep nothing)

    :raises: _ObjectPath when the primitive is not canonical;
        InvalidRequest when it is but breaks a rule of ``validate_node``
    """
    if peek(primitive) is None:
        raise _ObjectPath()
    known = known or KnownValid()
    data = primitive[_DATA]
    if not data.keys() <= _NODE_FIELDS:
        raise _ObjectPath()
    for name in _OBJECT_LISTS:
        if _typed(data, name, list, []):
            raise _ObjectPath()
    get = data.get
    fields = {
        "uuid": data["uuid"], "host": _str(data, "host"),
        "nodename": _str(data, "nodename"),
        "cell_uuid": _str(data, "cell_uuid", nullable=True),
        "availability_zone": _str(data, "availability_zone",
                                  nullable=True),
        "disabled": _typed(data, "disabled", bool, False),
        "report_sequence": data["report_sequence"],
        "num_instances": _count(data, "num_instances"),
        "num_io_ops": _count(data, "num_io_ops"),
        "traits": _strings(get("traits", [])),
        "aggregates": _strings(get("aggregates", [])),
        "capabilities": _string_dict(get("capabilities", {})),
        "stats": _string_dict(get("stats", {})),
        "metrics": _float_dict(get("metrics", {})),
        "updated_at": _updated_at(get("updated_at")),
        "instance_uuids": _instance_uuids(data),
        "boot_id": _str(data, "boot_id", nullable=True),
        "location": _str(data, "location", nullable=True),
    }
    inventories = [_inventory(p) for p in _typed(data, "inventories", list,
                                                 [])]
    fields["aggregates"] = _check_identity(fields, known)
    report_rules.validate_boot_id(fields["boot_id"])
    report_rules.validate_location(fields["location"])
    fields["inventories"] = _checked_inventories(inventories)
    fields["traits"] = known.traits(fields["traits"])
    return update_mod.HostUpdate(received_at=received_at, **fields)


def _typed(data, name, cls, default):
    value = data.get(name, default)
    if type(value) is not cls:
        raise _ObjectPath()
    return value


def _str(data, name, nullable=False):
    value = data.get(name)
    if type(value) is str or (nullable and value is None):
        return value
    raise _ObjectPath()


def _count(data, name):
    value = data.get(name, 0)
    if type(value) is not int or value < 0:
        raise _ObjectPath()
    return value


def _strings(values):
    if type(values) is not list or not {*map(type, values)} <= _STR:
        raise _ObjectPath()
    return values


def _string_dict(values):
    if type(values) is not dict or not (
            {*map(type, values), *map(type, values.values())} <= _STR):
        raise _ObjectPath()
    return dict(values)


def _float_dict(values):
    if type(values) is not dict:
        raise _ObjectPath()
    result = {}
    for key, value in values.items():
        if type(key) is not str or type(value) not in (float, int):
            raise _ObjectPath()
        result[key] = float(value)
    return result


def _updated_at(value):
    if value is None:
        return None
    if type(value) is not str:
        raise _ObjectPath()
    try:
        return _UPDATED_AT.from_primitive(None, "updated_at", value)
    except (ValueError, TypeError):
        raise _ObjectPath() from None


def _instance_uuids(data):
    values = data.get("instance_uuids")
    return None if values is None else frozenset(_strings(values))


def _inventory(primitive):
    """``(class, (total, reserved, min, max, step, ratio))``."""
    try:
        if (primitive[_NAME] != "Inventory"
                or primitive[_NAMESPACE] != _OBJ_NAMESPACE
                or primitive[_VERSION] not in _INVENTORY_VERSIONS):
            raise _ObjectPath()
        data = primitive[_DATA]
        rc = data["resource_class"]
        total = data["total"]
    except (KeyError, TypeError, IndexError):
        raise _ObjectPath() from None
    if (type(data) is not dict or not data.keys() <= _INVENTORY_FIELDS
            or type(rc) is not str or type(total) is not int or total < 0):
        raise _ObjectPath()
    values = [total]
    for name, default in _INVENTORY_DEFAULTS:
        value = data.get(name, default)
        if type(value) is not int:
            raise _ObjectPath()
        values.append(value)
    if values[1] < 0:  # reserved is a NonNegativeIntegerField
        raise _ObjectPath()
    ratio = data.get("allocation_ratio", 1.0)
    if type(ratio) not in (float, int):
        raise _ObjectPath()
    values.append(float(ratio))
    return rc, tuple(values)


def _check_identity(fields, known):
    """``_validate_identity``'s rules (required fields are there by now);
    the aggregates as a frozenset."""
    for name, limit in _MAX_LENGTH.items():
        value = fields[name]
        if value is not None and not 0 < len(value) <= limit:
            raise exception.InvalidRequest(
                reason="ComputeNode.%s must be 1 to %d characters"
                       % (name, limit))
    return known.aggregates(fields["aggregates"])


def _checked_inventories(inventories):
    """``_validate_inventories``' rules; the HostUpdate inventory dict."""
    result = {}
    for rc, values in inventories:
        vocabulary.validate_resource_class(rc)
        if rc in result:
            raise exception.InvalidRequest(
                reason="resource class %s reported twice" % rc)
        total, reserved, min_unit, max_unit, step, ratio = values
        if reserved > total:
            raise exception.InvalidRequest(
                reason="%s: reserved %d exceeds total %d"
                       % (rc, reserved, total))
        if not 1 <= min_unit <= max_unit or step < 1:
            raise exception.InvalidRequest(
                reason="%s: need 1 <= min_unit <= max_unit and step_size "
                       ">= 1" % rc)
        if ratio <= 0:
            raise exception.InvalidRequest(
                reason="%s: allocation_ratio must be positive" % rc)
        result[rc] = update_mod.Inventory._make(values)
    return result


class KnownValid:
    """Traits and aggregate uuids already found valid, so that each is
    checked once: the same few hundred of each come in every report (a
    bounded memo, cleared when full). The intake keeps one.

    NOTE: an intake parses reports on its listeners' threads (the stats
    topic's and the call topic's) at once; the lock makes each lookup and
    each clear-and-add one step. Values are validated outside it.
    """

    def __init__(self, size=65536):
        self._size = size
        self._lock = threading.Lock()
        self._traits = set()
        self._uuids = set()

    def traits(self, traits):
        """Each trait validated (``validate_trait``), as a frozenset."""
        result = frozenset(traits)
        if not self._known(self._traits, result):
            for trait in traits:
                vocabulary.validate_trait(trait)
            self._remember(self._traits, result)
        return result

    def aggregates(self, uuids):
        """Each aggregate checked to be a uuid, as a frozenset."""
        result = frozenset(uuids)
        if not self._known(self._uuids, result):
            for agg in uuids:
                if not uuidutils.is_uuid_like(agg):
                    raise exception.InvalidRequest(
                        reason="aggregate %r is not a uuid" % (agg,))
            self._remember(self._uuids, result)
        return result

    def _known(self, memo, values):
        with self._lock:
            return values <= memo

    def _remember(self, memo, values):
        with self._lock:
            if len(memo) > self._size:
                memo.clear()
            memo.update(values)
