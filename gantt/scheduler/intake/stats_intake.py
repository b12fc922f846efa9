"""StatsIntake: agents' reports from the wire into the host cache, cheaply.

::

    take/offer(primitive)
        ─▶ peek (uuid, report_sequence) ─▶ not newer than held? dropped
        ─▶ the wire's checks (gantt.rpcapi.validate) on the primitive
        ─▶ HostUpdate straight from the primitive, validated
           (bad: rejected, counted; a pending good report stays)
        ─▶ pending[uuid]  (a newer report replaces an unapplied one)
    drain()
        ─▶ unchanged ─▶ host cache
        ─▶ new, changed, persist due ─▶ to_store[uuid] ─▶ storing thread
              ─▶ SchedulerManager.update_resource_stats (database, cache)

A worker takes thousands of full reports a second, and most of them only
say again what the cache holds with a higher ``report_sequence``. Going
through oslo.versionedobjects, ``HostUpdate.from_compute_node`` and the
object validation costs about 0.5 ms of CPU each, under the GIL that the
messaging threads also need; here a report costs a fraction of that:

* **Peek before anything.** ``uuid`` and ``report_sequence`` are read from
  the primitive; a report not newer than the one cached, pending or being
  stored for its host is dropped there (``reports_stale``), before any
  object is built.
* **No objects.** A report in the canonical form that Gantt's own
  serializer writes (the types each field holds, the object versions this
  code knows, no NUMA cells, PCI pools or child providers) becomes a
  ``HostUpdate`` directly, checked against the same rules as
  ``report_rules.validate_node``. Anything else takes the object path
  (oslo.versionedobjects, ``validate_node``, ``from_compute_node``), so a
  report the fast path cannot vouch for is judged exactly as before.
* **Coalescing.** Reports wait in ``pending``, one per host; a newer one
  replaces an unapplied older one (counted in ``reports_stale``). Stats
  are never lost: the newest valid report of every host is applied.
* **Who applies.** The stats topic's listener takes a batch of casts
  (:meth:`take`) and then calls :meth:`drain` itself, so reading and
  applying do not fight for the GIL; what the call topic's listener
  offers (:meth:`offer`, older agents' casts) is applied by the intake's
  own thread, so that listener stays free for calls.
* **The database never blocks a listener.** A report that is new, changed,
  or due to refresh the stored liveness time (``[scheduler]
  report_persist_interval``) goes through
  ``SchedulerManager.update_resource_stats`` as before, on a storing
  thread of its own (one report per host at a time, the newest).

Malformed input is rejected with a reason (one WARNING line ``Rejected
update_resource_stats message: <reason>``) and counted in
``messages_rejected``; nothing raised here reaches the messaging threads.
Every report is counted once: ``reports_applied``, ``reports_stale`` or
``messages_rejected``.
"""

import logging
import sys
import threading

from oslo_utils import uuidutils
from oslo_versionedobjects import exception as ovo_exc

from gantt import exception
from gantt import rejections
from gantt.objects import base as objects_base
from gantt.objects import compute_node as cn_obj
from gantt.rpcapi import validate
from gantt.scheduler.intake import report_rules
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.state import update as update_mod

LOG = logging.getLogger(__name__)

METHOD = "update_resource_stats"

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
#: traits and aggregate uuids already found valid (a bounded memo: the
#: same few hundred of each come in every report)
_VALID_TRAITS = set()
_VALID_UUIDS = set()
_MEMO_SIZE = 65536


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


def build_report(primitive, received_at):
    """A validated HostUpdate from a ComputeNode primitive.

    Equal to ``HostUpdate.from_compute_node`` of the deserialized object,
    after ``validate_node``: the fast path when the primitive is
    canonical, the object path otherwise.

    :returns: (HostUpdate, the ComputeNode object or None if none was made)
    :raises: InvalidRequest, naming what is wrong
    """
    try:
        return fast_report(primitive, received_at), None
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


def fast_report(primitive, received_at):
    """A HostUpdate straight from a canonical primitive (see the module).

    :raises: _ObjectPath when the primitive is not canonical;
        InvalidRequest when it is but breaks a rule of ``validate_node``
    """
    if peek(primitive) is None:
        raise _ObjectPath()
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
    }
    inventories = [_inventory(p) for p in _typed(data, "inventories", list,
                                                 [])]
    fields["aggregates"] = _check_identity(fields)
    report_rules.validate_boot_id(fields["boot_id"])
    fields["inventories"] = _checked_inventories(inventories)
    fields["traits"] = _checked_traits(fields["traits"])
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


def _check_identity(fields):
    """``_validate_identity``'s rules (required fields are there by now);
    the aggregates as a frozenset."""
    for name, limit in _MAX_LENGTH.items():
        value = fields[name]
        if value is not None and not 0 < len(value) <= limit:
            raise exception.InvalidRequest(
                reason="ComputeNode.%s must be 1 to %d characters"
                       % (name, limit))
    aggregates = frozenset(fields["aggregates"])
    if not aggregates <= _VALID_UUIDS:
        for agg in fields["aggregates"]:
            if not uuidutils.is_uuid_like(agg):
                raise exception.InvalidRequest(
                    reason="aggregate %r is not a uuid" % (agg,))
        _remember(_VALID_UUIDS, aggregates)
    return aggregates


def _checked_traits(traits):
    """Each trait validated (``validate_trait``), as a frozenset."""
    result = frozenset(traits)
    if not result <= _VALID_TRAITS:
        for trait in traits:
            request_mod.validate_trait(trait)
        _remember(_VALID_TRAITS, result)
    return result


def _remember(memo, values):
    if len(memo) > _MEMO_SIZE:
        memo.clear()
    memo.update(values)


def _checked_inventories(inventories):
    """``_validate_inventories``' rules; the HostUpdate inventory dict."""
    result = {}
    for rc, values in inventories:
        request_mod.validate_resource_class(rc)
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


# -- the intake -----------------------------------------------------------


class _Pending:
    """A report waiting to be applied, and what it was made from."""

    __slots__ = ("report", "node", "primitive")

    def __init__(self, report, node, primitive):
        self.report = report
        self.node = node
        self.primitive = primitive

    @property
    def sequence(self):
        return self.report.report_sequence


class StatsIntake:
    """One worker's stats intake (see the module docstring).

    Two threads of its own: one applies reports offered by listeners that
    do not drain (:meth:`offer`), the other writes the reports that must
    go to the database, so that no listener ever waits on it.

    :param manager: the worker's SchedulerManager (its cache, counters,
        configuration and full report path)
    """

    def __init__(self, manager, rejection_log=None):
        self.manager = manager
        self._limits = validate.Limits.from_conf(manager.conf)
        self._log = rejection_log or rejections.default(__name__)
        self._cache = manager.cache
        self._counters = manager.counters
        self._lock = threading.Lock()
        # uuid -> _Pending: to apply to the cache / to store first
        self._pending = {}
        self._to_store = {}
        # one thread applies at a time; the others leave it the work
        self._draining = threading.Lock()
        self._wake = threading.Event()
        self._store_wake = threading.Event()
        self._stopping = False
        self._threads = []

    # -- taking reports ----------------------------------------------------

    def offer(self, compute_node):
        """Take one ``update_resource_stats`` cast's ``compute_node`` (its
        primitive, as it came off the wire); the intake's thread applies it.

        Never raises: a bad report is logged, counted and dropped.
        """
        if self._take(compute_node):
            self._wake.set()

    def take(self, compute_node):
        """:meth:`offer` for a caller that calls :meth:`drain` itself."""
        self._take(compute_node)

    def _take(self, primitive):
        try:
            self._offer(primitive)
        except exception.InvalidRequest as exc:
            self._reject(exc)
        except Exception:
            self._log.failed(METHOD, sys.exc_info())
            self._counters.add("messages_rejected")
        else:
            return True
        return False

    def _offer(self, primitive):
        key = peek(primitive)
        if key is not None and not self._is_newest(*key):
            # changes nothing, whatever else it holds: not worth checking
            self._counters.add("reports_stale")
            return
        validate.check_arguments(METHOD, {"compute_node": primitive},
                                 self._limits)
        report, node = build_report(primitive, self._cache.now())
        entry = _Pending(report, node, primitive)
        with self._lock:
            if self._is_newest(report.uuid, entry.sequence, report.boot_id):
                replaced = self._pending.get(report.uuid)
                self._pending[report.uuid] = entry
            else:
                replaced = entry
        if replaced is not None:
            # never to be applied: a newer report of its host is held
            self._counters.add("reports_stale")

    def _is_newest(self, uuid, sequence, boot_id):
        """Whether the report supersedes all this worker holds of its
        host (``report_rules.supersedes``)."""
        for held in (self._pending.get(uuid), self._to_store.get(uuid)):
            if held is not None and not report_rules.supersedes(
                    sequence, boot_id, held.sequence, held.report.boot_id):
                return False
        return self._cache.supersedes(uuid, sequence, boot_id)

    def _reject(self, exc):
        self._log.rejected(METHOD, exc)
        self._counters.add("messages_rejected")

    # -- applying them -----------------------------------------------------

    def pending(self):
        """How many reports wait to be applied or stored."""
        return len(self._pending) + len(self._to_store)

    def drain(self):
        """Apply every pending report, unless another thread is at it.

        Returns once nothing is pending or another thread took over; that
        thread sees what was offered meanwhile, so nothing is stranded.
        Reports that must be stored first go to the storing thread.
        """
        while self._pending:
            if not self._draining.acquire(blocking=False):
                return
            try:
                while True:
                    with self._lock:
                        batch, self._pending = self._pending, {}
                    if not batch:
                        break
                    interval = (self.manager.conf.scheduler
                                .report_persist_interval)
                    for entry in batch.values():
                        self._apply(entry, interval)
            finally:
                self._draining.release()

    def _apply(self, entry, persist_interval):
        report = entry.report
        try:
            if self._cache.needs_persisting(report, persist_interval):
                self._queue_store(entry)
                return
            # the database holds this content, so (unless the row holds
            # something else since) only liveness is new
            applied = self._cache.refresh_liveness(report)
            if applied is None:
                applied = self._cache.apply_report(report)
        except Exception:
            LOG.exception("Could not apply the report %d of %s",
                          report.report_sequence, report.host)
            return
        self._counters.add("reports_applied" if applied else "reports_stale")

    def _queue_store(self, entry):
        """New, changed, or time to refresh the stored liveness: the
        manager's full path (database, then cache) on the storing thread."""
        uuid = entry.report.uuid
        with self._lock:
            held = self._to_store.get(uuid)
            if held is None or report_rules.supersedes(
                    entry.sequence, entry.report.boot_id, held.sequence,
                    held.report.boot_id):
                self._to_store[uuid] = entry
        if held is not None:
            self._counters.add("reports_stale")
        self._store_wake.set()

    def _store(self, entry):
        try:
            node = entry.node
            if node is None:
                node = deserialize(entry.primitive)
            self.manager.update_resource_stats(node)
        except exception.HostNameTaken:
            pass        # counted and logged (at a bounded rate) already
        except exception.InvalidRequest as exc:
            self._reject(exc)
        except Exception:
            LOG.exception("Could not store the report %d of %s",
                          entry.sequence, entry.report.host)

    def _store_all(self):
        with self._lock:
            batch, self._to_store = self._to_store, {}
        for entry in batch.values():
            self._store(entry)

    def flush(self):
        """Apply and store all that is pending, in the calling thread."""
        self.drain()
        self._store_all()

    # -- the intake's threads ----------------------------------------------

    def start(self):
        for target, name in ((self._apply_loop, "stats-apply"),
                             (self._store_loop, "stats-store")):
            thread = threading.Thread(target=target, daemon=True, name=name)
            thread.start()
            self._threads.append(thread)

    def _apply_loop(self):
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            self.drain()

    def _store_loop(self):
        while not self._stopping:
            self._store_wake.wait()
            self._store_wake.clear()
            self._store_all()

    def stop(self, timeout=10):
        """Apply and store what is pending, then stop the threads."""
        self._stopping = True
        self._wake.set()
        self._store_wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self.flush()
