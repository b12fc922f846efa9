"""Backend functions over many backends at once.

:func:`judge_rows` gives, for the backends sharing one function text, the
same outcomes as :func:`.backend_functions.run` one backend at a time,
already judged (DriverFilter's verdict, GoodnessWeigher's rating, or the
value itself): the text is parsed once, and each variable it reads
becomes a numpy column (:mod:`.expressions_vec`).

What the capabilities decide is found once per version of the host
table's capability columns (:class:`_Static`, kept in :data:`_KEPT`):
which rows report which text, and for each variable and row where its
value comes from: a reported value (coerced once per distinct value, as
the columns are factorised), a default, a Pools number (``DISK_GB``
usage and inventory: read from :func:`.pools.columns` on every
request), the host name, or nothing (missing). A request then only
gathers the Pools numbers and evaluates.

A backend whose value the columns cannot give exactly (an error such as
a division by zero or a missing variable, a mix of types, a tree the
columns do not handle) is evaluated with :mod:`.expressions`, once per
distinct set of values it reads (rows are told apart by the values'
codes, not by reading them again), so every result is the per-backend
one.
"""

import typing
import weakref

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
_EXTRA_CAPABILITIES = {"provisioned_capacity_gb": ("provisioned", False),
                       "max_over_subscription_ratio": ("ratio", False),
                       "thin_provisioning_support": ("thin", True)}
#: column kinds by code (see :mod:`.expressions_vec`)
KINDS = "bifse"
_E = KINDS.index("e")
#: where a variable's value comes from, per row
_VALUE, _NUMBER, _HOST = 0, 1, 2
#: capability versions whose static parts are kept
_KEPT = weakref.WeakKeyDictionary()


class _Var(typing.NamedTuple):
    """One variable over a text's rows, as the capabilities decide it."""

    source: np.ndarray      # _VALUE, _NUMBER or _HOST per row
    kinds: np.ndarray       # kind codes of the _VALUE rows
    numbers: np.ndarray     # their numbers (b, i, f)
    strings: np.ndarray     # their strings (object)
    codes: np.ndarray       # their distinct-value code (int64)
    field: str | None       # the Pools field of the _NUMBER rows
    boolean: bool           # that field is read as a bool
    # every row a _VALUE, or every row a _NUMBER (no mix to resolve)
    values_only: bool
    numbers_only: bool


class _Text(typing.NamedTuple):
    """The rows reporting one text, and their variables per spelling."""

    text: str
    parsed: tuple           # (tree, None) or (None, ExpressionError)
    rows: np.ndarray
    # per protocol spelling group: (its rows, spellings)
    variants: list
    reads: tuple            # ((family, key), ...) the tree reads
    backend: bool           # it reads some backend variable


def _coerced(raw):
    """``(kind code, number, string)`` of one reported value."""
    try:
        value = expressions._coerce(raw)
    except expressions.ExpressionError:
        return _E, 0.0, None
    kind = KINDS.index(vec.kind_of(value))
    if kind in (0, 1, 2):
        return kind, float(value), None
    return kind, 0.0, value if kind == 3 else None


class _Static:
    """What the capabilities decide, for one version of them."""

    def __init__(self, table, n):
        self.columns = table.capability_columns
        self.n = n
        self._texts, self._vars = {}, {}

    def codes(self, key):
        """``(codes, values)`` of capability ``key`` (codes 0: not
        reported; ``values[c - 1]`` the value of code ``c``)."""
        cols = self.columns
        col = cols.keys.get(key)
        if col is None or col >= cols.codes.shape[1]:
            return np.zeros(self.n, dtype=np.int32), []
        values = [v if type(v) is str else v[1]
                  for v in list(cols.values[col].names)]
        return np.minimum(cols.codes[:self.n, col], len(values)), values

    def texts(self, key):
        """[:class:`_Text`] of the rows reporting the function ``key``."""
        found = self._texts.get(key)
        if found is None:
            found = self._texts[key] = list(self._build_texts(key))
        return found

    def _build_texts(self, key):
        codes, values = self.codes(key)
        for code in np.unique(codes[codes > 0]):
            text = str(values[code - 1])
            rows = np.flatnonzero(codes == code)
            parsed = functions.parsed_text(text)
            reads = tuple(tuple(name.split(".")) for name in sorted(
                vec.variables_of(parsed[0]))) if parsed[0] else ()
            variants = self._variants(text if parsed[1] is None else "",
                                      rows)
            yield _Text(text, parsed, rows, variants, reads,
                        any(f in _BACKEND for f, _k in reads))

    def _variants(self, text, rows):
        if "storage_protocol" not in text:
            return [(rows, (None,))]
        codes, values = self.codes("storage_protocol")
        mine = codes[rows]
        out = {}
        for code in np.unique(mine):
            spellings = functions.protocol_variants(
                values[code - 1] if code else None) or (None,)
            out.setdefault(spellings, []).append(np.flatnonzero(
                mine == code))
        return [(rows[np.sort(np.concatenate(p))], s)
                for s, p in out.items()]

    def var(self, name, rows, spelling):
        """The :class:`_Var` of backend variable ``name`` over ``rows``."""
        key = (name, spelling, id(rows))
        found = self._vars.get(key)
        if found is None:
            found = self._vars[key] = (rows, self._var(name, rows,
                                                       spelling))
        return found[1]

    def _var(self, name, rows, spelling):
        family, key = name
        if key == "storage_protocol" and spelling is not None:
            mine = np.zeros(len(rows), dtype=np.int32)
            return _var_of(np.full(len(rows), _VALUE, dtype=np.uint8),
                           mine, [_coerced(spelling)], None, False)
        codes, values = self.codes(key)
        mine = codes[rows]
        special = np.zeros(len(values) + 1, dtype=bool)
        if key in _SPECIAL:
            special[1:] = [pools.special(v) for v in values]
        source, field, boolean = _sources(family, key, mine, special)
        # only the values some row of these reads
        lut = [(_E, 0.0, None)] * (len(values) + 1)
        for code in np.unique(mine[source == _VALUE]).tolist():
            lut[code] = _coerced(values[code - 1] if code else _default(
                family, key))
        return _var_of(source, mine, lut, field, boolean)


def _var_of(source, mine, lut, field, boolean):
    table = np.array([(k, x) for k, x, _s in lut], dtype=float)
    strings = np.empty(len(lut), dtype=object)
    strings[:] = [s for *_kx, s in lut]
    return _Var(source, table[mine, 0].astype(np.uint8), table[mine, 1],
                strings[mine], mine.astype(np.int64), field, boolean,
                bool((source == _VALUE).all()),
                bool((source == _NUMBER).all()))


def _default(family, key):
    """The value of a row not reporting ``key`` (where it is a value)."""
    if family == "stats" and key in _STATS and key != "updated":
        return _STATS[key]
    return None


def _sources(family, key, mine, special):
    """``(source per row, Pools field, read as bool)``; zeroes ``mine``
    where a row reads the default rather than what it reports."""
    source = np.full(len(mine), _VALUE, dtype=np.uint8)
    if family == "stats":
        if key == "host":
            return np.full(len(mine), _HOST, dtype=np.uint8), None, False
        if key in _NUMBERS:
            keep = special[mine] if key in _SPECIAL else np.zeros(
                len(mine), dtype=bool)
            source[~keep] = _NUMBER
            return source, _NUMBERS[key], False
        if key not in _STATS or key == "updated":
            mine[:] = 0                     # missing, or never a number
        return source, None, False
    if key in _NUMBERS:
        field, boolean = _NUMBERS[key], False
    elif key in _EXTRA_CAPABILITIES:
        field, boolean = _EXTRA_CAPABILITIES[key]
    else:
        return source, None, False          # missing where not reported
    source[mine == 0] = _NUMBER
    return source, field, boolean


def static(view):
    """The :class:`_Static` of ``view``'s capability version (kept)."""
    cols = view.table.capability_columns
    # NOTE: the version is read first: a report written meanwhile leaves
    # the parts under a version no later request accepts
    stamp = (cols.version, view.n)
    held = _KEPT.get(cols)
    if held is None or held[0] != stamp:
        held = _KEPT[cols] = (stamp, _Static(view.table, view.n))
    return held[1]


class _Data(typing.NamedTuple):
    """One variable over the rows being evaluated, for one request."""

    kinds: np.ndarray
    numbers: np.ndarray
    strings: np.ndarray
    source: np.ndarray
    ident: np.ndarray       # with source: tells distinct values apart


def coerce_numbers(x):
    """``(kind codes, numbers)`` of Python floats ``x`` read as
    :func:`.expressions._coerce` reads each: an int when finite (and
    within :data:`.expressions_vec.SAFE_INT`, else no column value), NaN
    a float, an infinity an error."""
    with np.errstate(invalid="ignore"):
        whole = np.trunc(x)
        nan = np.isnan(x)
        bad = np.isinf(x) | (np.abs(whole) >= vec.SAFE_INT)
    kinds = np.ones(len(x), dtype=np.uint8)
    kinds[nan] = 2
    kinds[bad] = _E
    return kinds, np.where(nan | bad, np.where(nan, x, 0.0), whole)


class Context:
    """One request's evaluation of one function key over a view."""

    def __init__(self, view, request, judge):
        self.view, self.judge = view, judge
        self.table = view.table
        self.pools = pools.columns(view)
        self.request = functions.request_families(request)
        self._constants, self._fields = {}, {}

    def field(self, name):
        found = self._fields.get(name)
        if found is None:
            found = self._fields[name] = np.asarray(
                getattr(self.pools, name), dtype=float)
        return found

    def constant(self, name, n):
        found = self._constants.get(name)
        if found is None:
            family, key = name
            try:
                raw = self.request[family][key]
            except (KeyError, TypeError):
                raw = None
            found = self._constants[name] = _coerced(raw)
        kind, number, string = found
        return _Data(np.full(n, kind, dtype=np.uint8), np.full(n, number),
                     np.full(n, string, dtype=object),
                     np.zeros(n, dtype=np.uint8), np.zeros(n, np.int64))

    def backend(self, var, rows, keep):
        """The :class:`_Data` of ``var`` at ``keep`` (its positions) of
        ``rows``."""
        whole = len(keep) == len(rows)
        source = var.source if whole else var.source[keep]
        rows = rows if whole else rows[keep]
        if var.values_only:             # read only: no copy needed
            if whole:
                return _Data(var.kinds, var.numbers, var.strings, source,
                             var.codes)
            return _Data(var.kinds[keep], var.numbers[keep],
                         var.strings[keep], source, var.codes[keep])
        if var.numbers_only:
            x = self._numbers(var, rows)
            kinds, numbers = coerce_numbers(x)
            return _Data(kinds, numbers, var.strings if whole else
                         var.strings[keep], source, x.view(np.int64))
        return self._mixed(var, rows, keep, source)

    def _numbers(self, var, rows):
        x = self.field(var.field)[rows]
        return (x != 0).astype(float) if var.boolean else x

    def _mixed(self, var, rows, keep, source):
        kinds, numbers = var.kinds[keep], var.numbers[keep]
        strings, ident = var.strings[keep], var.codes[keep]
        dyn = np.flatnonzero(source == _NUMBER)
        if len(dyn):
            x = self._numbers(var, rows[dyn])
            kinds[dyn], numbers[dyn] = coerce_numbers(x)
            ident[dyn] = x.view(np.int64)
        for i in np.flatnonzero(source == _HOST):
            kinds[i], numbers[i], strings[i] = _coerced(
                self.table.hosts[rows[i]])
            ident[i] = rows[i]
        return _Data(kinds, numbers, strings, source, ident)

    def scalar(self, tree, row, spelling):
        """The per-backend value (or ExpressionError) of ``row``."""
        caps = self.table.capabilities[row] or {}
        if spelling is not None:
            caps = dict(caps, storage_protocol=spelling)
        pool = pools.Pools(*(np.asarray(field)[row]
                             for field in self.pools))
        families = dict(functions.backend_families(
            self.table.hosts[row], caps, pool), **self.request)
        try:
            return expressions.evaluate(tree, families)
        except expressions.ExpressionError as exc:
            return exc


def judged(view, request, key, wanted, judge):
    """``(rows, [values per protocol spelling])`` of each group of the
    rows reporting the function ``key`` (and ``wanted``, a boolean mask
    over the view, unless None): ``judge``'s reading of each backend's
    outcome (see :class:`ValueJudge`)."""
    context = None
    for text in static(view).texts(key):
        for rows, spellings in text.variants:
            keep = (np.arange(len(rows)) if wanted is None
                    else np.flatnonzero(wanted[rows]))
            if not len(keep):
                continue
            context = context or Context(view, request, judge)
            yield rows[keep], [_values(context, text, rows, keep, s)
                               for s in spellings]


def _values(context, text, rows, keep, spelling):
    judge, n = context.judge, len(keep)
    tree, error = text.parsed
    if error is not None or not text.backend:
        value = error if error is not None else context.scalar(
            tree, rows[keep[0]], spelling)
        out = np.empty(n, dtype=judge.dtype)
        out[:] = [judge.scalar(value)] * n
        return out
    static_parts = static(context.view)
    data = [context.backend(static_parts.var(name, rows, spelling), rows,
                            keep)
            if name[0] in _BACKEND else context.constant(name, n)
            for name in text.reads]
    combo = np.zeros(n, dtype=np.int64)
    for one in data:
        combo = combo * len(KINDS) + one.kinds
    out = np.zeros(n, dtype=judge.dtype)
    at = rows[keep]
    for kinds in _kind_groups(combo, len(data)):
        index = (np.arange(n) if len(kinds[1]) == n else kinds[1])
        _evaluate(context, tree, text.reads, kinds[0], data, index, at,
                  spelling, out)
    return out


def _kind_groups(combo, width):
    """``[(kind codes per variable, positions)]`` of the rows by the kinds
    of their variables."""
    if combo.min() == combo.max():
        codes = [int(combo[0])]
    else:
        codes = [int(c) for c in np.unique(combo)]
    out = []
    for code in codes:
        kinds, rest = [], code
        for _ in range(width):
            kinds.append(rest % len(KINDS))
            rest //= len(KINDS)
        positions = (np.arange(len(combo)) if len(codes) == 1
                     else np.flatnonzero(combo == code))
        out.append((kinds[::-1], positions))
    return out


def _evaluate(context, tree, reads, kinds, data, index, rows, spelling,
              out):
    n = len(index)
    leaves = {"%s.%s" % name: _leaf(KINDS[kind], one, index)
              for name, kind, one in zip(reads, kinds, data, strict=True)}
    try:
        kind, array, unsure = vec.evaluate(tree, leaves, n)
    except vec.Unsupported:
        kind, array, unsure = "e", None, np.ones(n, dtype=bool)
    if kind != "e":
        out[index] = context.judge.column(kind, array)
    doubt = index[unsure] if kind != "e" else index
    if len(doubt):
        _fall_back(context, tree, data, doubt, rows, spelling, out)


def _leaf(kind, one, index):
    if kind == "e":
        return vec.column("e", [None] * len(index))
    if kind == "s":
        array = one.strings[index]
    elif kind == "i":
        array = one.numbers[index].astype(np.int64)
    elif kind == "b":
        array = one.numbers[index].astype(bool)
    else:
        array = one.numbers[index]
    return (kind, array, np.zeros(len(index), dtype=bool))


def _fall_back(context, tree, data, doubt, rows, spelling, out):
    """Per-backend evaluation of the rows ``doubt``, once per distinct
    set of values read."""
    keys = np.stack([column[doubt] for one in data
                     for column in (one.source.astype(np.int64),
                                    one.ident)], axis=1)
    _unique, first, inverse = np.unique(keys, axis=0, return_index=True,
                                        return_inverse=True)
    judge = context.judge
    values = np.empty(len(first), dtype=judge.dtype)
    values[:] = [judge.scalar(context.scalar(tree, rows[doubt[i]],
                                             spelling)) for i in first]
    out[doubt] = values[inverse.reshape(-1)]


class ValueJudge:
    """The outcome itself: the value, or the ExpressionError (for
    :func:`.backend_functions.run_rows`)."""

    dtype = object

    @staticmethod
    def column(kind, array):
        out = np.empty(len(array), dtype=object)
        out[:] = [vec.to_python(kind, array, i) for i in range(len(array))]
        return out

    @staticmethod
    def scalar(value):
        return value
