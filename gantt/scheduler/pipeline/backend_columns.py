"""Backend functions over many backends at once.

:func:`judged` gives, for the backends sharing one function text, the
same outcomes as :func:`.backend_functions.run` one backend at a time,
already judged (DriverFilter's verdict, GoodnessWeigher's rating, or the
value itself, :class:`ValueJudge`): each variable the text reads becomes
a numpy column and the text is evaluated over them
(:mod:`.expressions_vec`).

What the capabilities decide (which rows report which text, and where
each variable's value comes from) is kept per version of the host
table's capability columns (:mod:`.backend_sources`); a request only
gathers the :func:`.pools.columns` numbers its texts read, which usage
changes, and evaluates.

A backend whose value the columns cannot give exactly (an error such as
a division by zero or a missing variable, a mix of types, a tree the
columns do not handle) is evaluated with :mod:`.expressions`, once per
distinct set of values it reads (rows are told apart by the values'
codes, not by reading them again), so every result is the per-backend
one.
"""

import typing

import numpy as np

from gantt.scheduler.pipeline import backend_functions as functions
from gantt.scheduler.pipeline import backend_sources as sources
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import expressions_vec as vec
from gantt.scheduler.pipeline import pools


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
    kinds[bad] = sources.E
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
            found = self._constants[name] = sources.coerced(raw)
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
        dyn = np.flatnonzero(source == sources.NUMBER)
        if len(dyn):
            x = self._numbers(var, rows[dyn])
            kinds[dyn], numbers[dyn] = coerce_numbers(x)
            ident[dyn] = x.view(np.int64)
        for i in np.flatnonzero(source == sources.HOST):
            kinds[i], numbers[i], strings[i] = sources.coerced(
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
    for text in sources.static(view).texts(key):
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
    static_parts = sources.static(context.view)
    data = [context.backend(static_parts.var(name, rows, spelling), rows,
                            keep)
            if name[0] in sources.BACKEND else context.constant(name, n)
            for name in text.reads]
    combo = np.zeros(n, dtype=np.int64)
    for one in data:
        combo = combo * len(sources.KINDS) + one.kinds
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
            kinds.append(rest % len(sources.KINDS))
            rest //= len(sources.KINDS)
        positions = (np.arange(len(combo)) if len(codes) == 1
                     else np.flatnonzero(combo == code))
        out.append((kinds[::-1], positions))
    return out


def _evaluate(context, tree, reads, kinds, data, index, rows, spelling,
              out):
    n = len(index)
    leaves = {"%s.%s" % name: _leaf(sources.KINDS[kind], one, index)
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
