"""Backend functions over many backends at once.

:func:`outcomes` gives, for the backends sharing one function text, the
same outcomes as :func:`.backend_functions.run` one backend at a time:
the text is parsed once, the backends are grouped by the storage
protocol spellings they are evaluated with and by the type of each
variable the function reads, and each group is evaluated with numpy
columns (:mod:`.expressions_vec`). A backend whose value the columns
cannot give exactly (an error, a mix of types, a tree the columns do
not handle) is evaluated one by one with :mod:`.expressions`, so every
result is the per-backend one.
"""

import numpy as np

from gantt.scheduler.pipeline import backend_functions as functions
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import expressions_vec as vec
from gantt.scheduler.pipeline import pools

_BACKEND = frozenset(("stats", "capabilities"))
#: the numbers of both families: the Pools field each comes from
_NUMBERS = {"total_capacity_gb": "total", "free_capacity_gb": "free",
            "allocated_capacity_gb": "provisioned",
            "reserved_percentage": "reserved_percent"}
_SPECIAL = frozenset(("total_capacity_gb", "free_capacity_gb"))
#: the other stats, with their value when the backend does not report
#: them (``host`` is the row's host name)
_STATS = {"host": None, "updated": None, "volume_backend_name": None,
          "vendor_name": None, "driver_version": 0,
          "storage_protocol": None, "QoS_support": False}
#: capabilities given when the backend does not report them
_EXTRA_CAPABILITIES = {"provisioned_capacity_gb": ("provisioned", float),
                       "max_over_subscription_ratio": ("ratio", float),
                       "thin_provisioning_support": ("thin", bool)}


class Rows:
    """The rows of a view being evaluated for one request: their
    variables, read once each."""

    def __init__(self, table, numbers, request):
        self.table, self.numbers = table, numbers
        self.request = functions.request_families(request)
        self._backend, self._lists, self._alike = {}, {}, {}

    def caps(self, row):
        return self.table.capabilities[row] or {}

    def families(self, row, spelling):
        key = (row, spelling)
        found = self._backend.get(key)
        if found is None:
            caps = self.caps(row)
            if spelling is not None:
                caps = dict(caps, storage_protocol=spelling)
            pool = pools.Pools(*(np.asarray(field)[row]
                                 for field in self.numbers))
            found = self._backend[key] = dict(functions.backend_families(
                self.table.hosts[row], caps, pool), **self.request)
        return found

    def value(self, name, row, spelling):
        """The raw value of the variable ``name`` (as in
        :func:`.backend_functions.variables`); KeyError when missing."""
        family, key = name
        if family not in _BACKEND:
            return self.request[family][key]
        caps = self.caps(row)
        if key == "storage_protocol" and spelling is not None:
            caps = {"storage_protocol": spelling}
        if family == "capabilities" and key in caps:
            return caps[key]
        if key in _NUMBERS:
            return self._number(key, caps, row)
        if family == "stats":
            return self._stat(key, caps, row)
        return self._capability(key, row)

    def _number(self, key, caps, row):
        reported = caps.get(key)
        if key in _SPECIAL and pools.special(reported):
            return reported
        return float(self._column(_NUMBERS[key])[row])

    def _stat(self, key, caps, row):
        if key not in _STATS:
            raise KeyError(key)
        if key == "host":
            return self.table.hosts[row]
        if key == "updated":
            return None
        return caps.get(key, _STATS[key])

    def _capability(self, key, row):
        if key not in _EXTRA_CAPABILITIES:
            raise KeyError(key)
        field, convert = _EXTRA_CAPABILITIES[key]
        return convert(self._column(field)[row])

    def _column(self, field):
        found = self._lists.get(field)
        if found is None:
            found = self._lists[field] = np.asarray(
                getattr(self.numbers, field)).tolist()
        return found

    def alike(self, tree, row, spelling, raw):
        """:meth:`scalar`, once per tree, spelling and values read
        (``raw``, hashable)."""
        key = (id(tree), spelling, raw)
        found = self._alike.get(key, self._alike)
        if found is self._alike:
            found = self._alike[key] = self.scalar(tree, row, spelling)
        return found

    def scalar(self, tree, row, spelling):
        try:
            return expressions.evaluate(tree, self.families(row, spelling))
        except expressions.ExpressionError as exc:
            return exc


def outcomes(text, tree_or_error, rows, context):
    """``{row: outcomes}`` of the function ``text`` for ``rows`` (a
    :class:`Rows`)."""
    tree, error = tree_or_error
    if error is not None:
        return {row: [(True, error)] for row in rows}
    by_variants = {}
    for row in rows:
        variants = (functions.protocol_variants(
            context.caps(row).get("storage_protocol"))
            if "storage_protocol" in text else None)
        by_variants.setdefault(variants, []).append(row)
    out = {}
    for variants, group in by_variants.items():
        each = [_values(tree, group, spelling, context)
                for spelling in (variants or (None,))]
        for row in group:
            out[row] = [(True, values[row]) for values in each]
    return out


def _values(tree, rows, spelling, context):
    """``{row: value or ExpressionError}`` of ``tree``."""
    reads = sorted(vec.variables_of(tree))
    if not any(name.split(".")[0] in _BACKEND for name in reads):
        # the request's variables only: one value for every backend
        value = context.scalar(tree, rows[0], spelling)
        return dict.fromkeys(rows, value)
    groups, split = {}, [tuple(name.split(".")) for name in reads]
    for row in rows:
        read = [_read(context, name, row, spelling) for name in split]
        kinds = tuple(vec.kind_of(value) if ok else "e"
                      for ok, value, _raw in read)
        groups.setdefault(kinds, []).append(
            (row, [v for _, v, _raw in read], tuple(r for *_, r in read)))
    out = {}
    for kinds, members in groups.items():
        out.update(_group(tree, reads, kinds, members, spelling, context))
    return out


def _read(context, name, row, spelling):
    """``(ok, coerced value, raw)``: ``raw`` tells the value apart from
    any other (type and repr), so that backends reading the same values
    share one per-backend evaluation."""
    try:
        raw = context.value(name, row, spelling)
    except (KeyError, TypeError):
        return False, None, None
    try:
        return True, expressions._coerce(raw), (type(raw), repr(raw))
    except expressions.ExpressionError:
        return False, None, (type(raw), repr(raw))


def _group(tree, reads, kinds, members, spelling, context):
    n = len(members)
    leaves = {name: vec.column(kind, [member[1][i] for member in members])
              for i, (name, kind) in enumerate(zip(reads, kinds, strict=True))}
    try:
        kind, array, unsure = vec.evaluate(tree, leaves, n)
    except vec.Unsupported:
        kind, array, unsure = "e", None, np.ones(n, dtype=bool)
    out = {}
    for i, (row, _values, raw) in enumerate(members):
        if kind == "e" or unsure[i]:
            out[row] = context.alike(tree, row, spelling, raw)
        else:
            out[row] = vec.to_python(kind, array, i)
    return out
