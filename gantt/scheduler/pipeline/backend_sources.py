"""Backend functions over columns: what the capabilities decide.

For :mod:`.backend_columns`, once per version of the host table's
capability columns (:func:`static`, kept in :data:`_KEPT`): which rows
report which function text (parsed once), and, for each variable a text
reads and each of its rows, where the value comes from (:class:`Var`):

``VALUE``
    a reported capability, or the default of a stat the backend does not
    report (``driver_version`` 0...), or nothing (a missing variable, an
    error when read); coerced as :func:`.expressions._coerce` reads it,
    once per distinct value (the capability columns are factorised)
``NUMBER``
    a :class:`.pools.Pools` number (``DISK_GB`` usage and inventory),
    read again on every request
``HOST``
    the row's host name

The rules are :class:`.backend_functions`' (``variables``), row by row.
"""

import typing
import weakref

import numpy as np

from gantt.scheduler.pipeline import backend_functions as functions
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import expressions_vec as vec
from gantt.scheduler.pipeline import pools

BACKEND = frozenset(("stats", "capabilities"))
#: the numbers of both families: the Pools field each comes from
NUMBERS = {"total_capacity_gb": "total", "free_capacity_gb": "free",
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
E = KINDS.index("e")
#: where a variable's value comes from, per row
VALUE, NUMBER, HOST = 0, 1, 2
#: capability versions whose static parts are kept
_KEPT = weakref.WeakKeyDictionary()


class Var(typing.NamedTuple):
    """One variable over a text's rows, as the capabilities decide it."""

    source: np.ndarray      # VALUE, NUMBER or HOST per row
    kinds: np.ndarray       # kind codes of the VALUE rows
    numbers: np.ndarray     # their numbers (b, i, f)
    strings: np.ndarray     # their strings (object)
    codes: np.ndarray       # their distinct-value code (int64)
    field: str | None       # the Pools field of the NUMBER rows
    boolean: bool           # that field is read as a bool
    # every row a VALUE, or every row a NUMBER (no mix to resolve)
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


def coerced(raw):
    """``(kind code, number, string)`` of one reported value."""
    try:
        value = expressions._coerce(raw)
    except expressions.ExpressionError:
        return E, 0.0, None
    kind = KINDS.index(vec.kind_of(value))
    if kind in (0, 1, 2):
        return kind, float(value), None
    return kind, 0.0, value if kind == 3 else None


class _Static:
    """What the capabilities decide, for one version of them."""

    def __init__(self, table, n):
        # NOTE: a proxy: the kept parts must not keep their key alive
        self.columns = weakref.proxy(table.capability_columns)
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
                        any(f in BACKEND for f, _k in reads))

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
        """The :class:`Var` of backend variable ``name`` over ``rows``."""
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
            return _var_of(np.full(len(rows), VALUE, dtype=np.uint8),
                           mine, [coerced(spelling)], None, False)
        codes, values = self.codes(key)
        mine = codes[rows]
        special = np.zeros(len(values) + 1, dtype=bool)
        if key in _SPECIAL:
            special[1:] = [pools.special(v) for v in values]
        source, field, boolean = _sources(family, key, mine, special)
        # only the values some row of these reads
        lut = [(E, 0.0, None)] * (len(values) + 1)
        for code in np.unique(mine[source == VALUE]).tolist():
            lut[code] = coerced(values[code - 1] if code else _default(
                family, key))
        return _var_of(source, mine, lut, field, boolean)


def _var_of(source, mine, lut, field, boolean):
    table = np.array([(k, x) for k, x, _s in lut], dtype=float)
    strings = np.empty(len(lut), dtype=object)
    strings[:] = [s for *_kx, s in lut]
    return Var(source, table[mine, 0].astype(np.uint8), table[mine, 1],
                strings[mine], mine.astype(np.int64), field, boolean,
                bool((source == VALUE).all()),
                bool((source == NUMBER).all()))


def _default(family, key):
    """The value of a row not reporting ``key`` (where it is a value)."""
    if family == "stats" and key in _STATS and key != "updated":
        return _STATS[key]
    return None


def _sources(family, key, mine, special):
    """``(source per row, Pools field, read as bool)``; zeroes ``mine``
    where a row reads the default rather than what it reports."""
    source = np.full(len(mine), VALUE, dtype=np.uint8)
    if family == "stats":
        if key == "host":
            return np.full(len(mine), HOST, dtype=np.uint8), None, False
        if key in NUMBERS:
            keep = special[mine] if key in _SPECIAL else np.zeros(
                len(mine), dtype=bool)
            source[~keep] = NUMBER
            return source, NUMBERS[key], False
        if key not in _STATS or key == "updated":
            mine[:] = 0                     # missing, or never a number
        return source, None, False
    if key in NUMBERS:
        field, boolean = NUMBERS[key], False
    elif key in _EXTRA_CAPABILITIES:
        field, boolean = _EXTRA_CAPABILITIES[key]
    else:
        return source, None, False          # missing where not reported
    source[mine == 0] = NUMBER
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
