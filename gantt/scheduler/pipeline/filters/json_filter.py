"""JsonFilter: the ``query`` scheduler hint, a JSON expression per host.

The grammar is Nova's: ``[op, arg, ...]`` with ``=``, ``<``, ``>``, ``<=``,
``>=`` (the first argument against every other one), ``in`` (the first
argument is one of the others), ``not`` (each argument flipped: a list),
``or`` and ``and``; a string ``$name`` (or ``$name.key`` into a dict) is a
host attribute; arguments that come out as None (unknown attribute, empty
string) are dropped, and an operator left with fewer than two arguments is
false. The host passes when the result is true (a list: when any element
is).

Attributes: ``host``, ``nodename``, ``uuid``, ``availability_zone``,
``cell_uuid``, ``num_instances``, ``num_io_ops``, ``free_ram_mb``
(MEMORY_MB total - reserved - used), ``total_usable_ram_mb``,
``free_disk_mb`` (DISK_GB free x 1024), ``total_usable_disk_gb``,
``vcpus_total``, ``vcpus_used``, and the dicts ``capabilities``, ``stats``
and ``metrics``; any other name is looked up in the capabilities. Where
Python would refuse a comparison (a string against a number) the operator
is false rather than an error.

Queries over numbers only (and ``and``/``or``) run on columns; anything
else runs host by host.
"""

import json
import operator

import numpy as np

from gantt import exception
from gantt.scheduler.pipeline import filters

_COMPARE = {"=": operator.eq, "<": operator.lt, ">": operator.gt,
            "<=": operator.le, ">=": operator.ge}
_COMMANDS = set(_COMPARE) | {"in", "not", "or", "and"}
#: numeric attributes: (resource class, what) or a plain column
_RESOURCE_VARS = {
    "free_ram_mb": ("MEMORY_MB", "free"),
    "total_usable_ram_mb": ("MEMORY_MB", "total"),
    "free_disk_mb": ("DISK_GB", "free_mb"),
    "total_usable_disk_gb": ("DISK_GB", "total"),
    "vcpus_total": ("VCPU", "total"),
    "vcpus_used": ("VCPU", "used"),
}
_COLUMN_VARS = ("num_instances", "num_io_ops")
_STRING_VARS = ("host", "nodename", "uuid", "availability_zone",
                "cell_uuid")
_DICT_VARS = ("capabilities", "stats", "metrics")


def query_of(request):
    """The parsed ``query`` hint, or None.

    :raises: InvalidRequest for a query that is not JSON or uses an
        unknown operator
    """
    def parse():
        hint = request.hints.get("query")
        if not hint:
            return None
        text = hint[0] if isinstance(hint, list) else hint
        try:
            query = json.loads(text)
        except ValueError as exc:
            raise exception.InvalidRequest(
                reason="scheduler hint query is not JSON: %s" % exc) from None
        _validate(query)
        return query
    return request.memo("json_query", parse)


def _validate(query):
    if not isinstance(query, list):
        raise exception.InvalidRequest(
            reason="scheduler hint query must be a JSON list")
    if not query:
        return
    if query[0] not in _COMMANDS:
        raise exception.InvalidRequest(
            reason="unknown query operator %r" % (query[0],))
    for arg in query[1:]:
        if isinstance(arg, list):
            _validate(arg)


# -- one host -----------------------------------------------------------------


def _resource(host, rc, what):
    slot = host.resources.get(rc)
    if slot is None:
        return None
    if what == "total":
        return slot.total
    if what == "used":
        return slot.used
    free = slot.total - slot.reserved - slot.used
    return free * 1024 if what == "free_mb" else free


def host_attribute(host, path):
    name = path[0]
    if name in _RESOURCE_VARS:
        value = _resource(host, *_RESOURCE_VARS[name])
    elif name in _COLUMN_VARS or name in _STRING_VARS:
        value = getattr(host, name)
    elif name in _DICT_VARS:
        value = getattr(host, name)
    else:
        value = host.capabilities.get(name)
    for item in path[1:]:
        if not isinstance(value, dict):
            return None
        value = value.get(item)
    return value


def _compare(op, args):
    if len(args) < 2:
        return False
    try:
        if op == "in":
            return args[0] in args[1:]
        return all(_COMPARE[op](args[0], a) for a in args[1:])
    except TypeError:
        return False


def evaluate(query, host):
    """Nova's ``_process_filter`` on one host."""
    if not query:
        return True
    op = query[0]
    args = []
    for arg in query[1:]:
        if isinstance(arg, list):
            arg = evaluate(arg, host)
        elif isinstance(arg, str):
            if not arg:
                arg = None
            elif arg.startswith("$"):
                arg = host_attribute(host, arg[1:].split("."))
        if arg is not None:
            args.append(arg)
    if op == "not":
        return [not a for a in args]
    if op == "or":
        return any(args)
    if op == "and":
        return all(args)
    return _compare(op, args)


def _truthy(result):
    if isinstance(result, list):
        return any(result)
    return bool(result)


# -- all hosts ----------------------------------------------------------------


class _NotVectorisable(Exception):
    pass


def _column(view, name):
    if name in _COLUMN_VARS:
        return view.column(name)
    rc, what = _RESOURCE_VARS[name]
    col = view.rc_column(rc)
    if col is None or not view.inventory("has_inventory", col).all():
        # some hosts would drop the argument: only host by host is exact
        raise _NotVectorisable(name)
    if what == "total":
        return view.inventory("total", col)
    used = view.used(col)
    if what == "used":
        return used
    free = view.inventory("total", col) - view.inventory("reserved", col) - (
        used)
    return free * 1024 if what == "free_mb" else free


def _number_arg(view, arg):
    if isinstance(arg, bool) or not isinstance(arg, (int, float, str)):
        raise _NotVectorisable(arg)
    if isinstance(arg, str):
        name = arg[1:]
        if not arg.startswith("$") or (name not in _RESOURCE_VARS
                                       and name not in _COLUMN_VARS):
            raise _NotVectorisable(arg)
        return _column(view, name)
    return arg


def _evaluate_columns(view, query):
    """A boolean array (or a bool) for a numeric query; raises
    _NotVectorisable for anything else."""
    if not query:
        return True
    op = query[0]
    if op in ("and", "or"):
        parts = [_evaluate_columns(view, a) if isinstance(a, list)
                 else _literal_truth(a) for a in query[1:]]
        combine = np.logical_and if op == "and" else np.logical_or
        result = op == "and"
        for part in parts:
            result = combine(result, part)
        return result
    if op == "not" or any(isinstance(a, list) for a in query[1:]):
        raise _NotVectorisable(op)
    args = [_number_arg(view, a) for a in query[1:]]
    if len(args) < 2:
        return False
    if op == "in":
        result = False
        for other in args[1:]:
            result = np.logical_or(result, args[0] == other)
        return result
    result = True
    for other in args[1:]:
        result = np.logical_and(result, _COMPARE[op](args[0], other))
    return result


def _literal_truth(arg):
    if isinstance(arg, str) or arg is None:
        # "$x" and "" may be dropped per host: not a constant
        raise _NotVectorisable(arg)
    return bool(arg)


class JsonFilter(filters.BaseFilter):
    name = "JsonFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return query_of(request) is not None

    def host_passes(self, host, request):
        return _truthy(evaluate(query_of(request), host))

    def passes_columns(self, view, request):
        try:
            result = _evaluate_columns(view, query_of(request))
        except _NotVectorisable:
            return None
        return np.broadcast_to(np.asarray(result, dtype=bool),
                               (view.n,)).copy()
