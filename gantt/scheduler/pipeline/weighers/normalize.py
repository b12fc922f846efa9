"""The normalisation math of the weighers, and what it keeps between
requests.

Each weigher's raw values are scaled to [0, 1] over the candidates (so
that weighers with different units can be summed) and multiplied by the
weigher's multiplier. As in Nova (``nova/weights.py``), a weigher's
``minval``/``maxval`` clip its raw values and replace the observed minimum
or maximum.

:func:`add_scaled` is the scheduler's fast form of that sum: a weigher's
part ``m * (raw - low) / (high - low)`` is added as ``a * raw`` (``a = m /
(high - low)``) with ``a * low`` left in an offset, and a multiplier that
aggregates override on some rows is its default everywhere plus a
correction on those rows only (a :class:`Split`). :class:`ColumnFacts`
keeps what that needs of the shared read-only columns (their extremes and
splits) for as long as they live.
"""

import functools
import threading
import typing

import numpy as np

# ``a * raw - a * low`` stays within 1e-10 of the normalised value while
# ``|low|`` is at most this many times ``high - low``
CANCELLATION = 1e6

_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_DELTAS = np.zeros(0)


def normalize(values, minval=None, maxval=None, multiplier=1.0):
    """Scale to [0, 1] between ``minval`` and ``maxval`` (the observed
    minimum and maximum when None); all-equal values become all zeros.
    The result is multiplied by ``multiplier`` (a float or an array)."""
    if not (isinstance(values, np.ndarray) and values.dtype == np.float64):
        values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values
    low = values.min() if minval is None else float(minval)
    high = values.max() if maxval is None else float(maxval)
    if high == low:
        return np.zeros_like(values)
    if not isinstance(multiplier, np.ndarray):
        out = values - low
        out *= multiplier / (high - low)
        return out
    out = values - low
    out /= high - low
    out *= multiplier
    return out


def nonzero(multiplier):
    """Whether a multiplier (a float or an array) weighs any row."""
    if isinstance(multiplier, np.ndarray):
        return bool(multiplier.any())
    return multiplier != 0


def clip(weigher, raw):
    """The raw values as a numeric array within the weigher's bounds."""
    if not (isinstance(raw, np.ndarray) and raw.dtype.kind in "fi"):
        raw = np.asarray(raw, dtype=float)
    # a bound no value passes leaves the values as they are (a pass to
    # find the extreme costs a fraction of a pass that copies them; NaN
    # fails the test, and is clipped as before)
    if weigher.minval is not None and not (raw.size
                                           and raw.min() >= weigher.minval):
        raw = np.maximum(raw, weigher.minval)
    if weigher.maxval is not None and not (raw.size
                                           and raw.max() <= weigher.maxval):
        raw = np.minimum(raw, weigher.maxval)
    return raw


def extreme(raw, mask, lowest, at=None):
    """The minimum (or maximum) of ``raw`` over the ``mask`` rows (at
    least one), as a float.

    The extreme of every row is found first (cheap, or given as ``at``);
    it is the candidates' one when a candidate holds it, the common case.
    """
    if at is None:
        at = raw.argmin() if lowest else raw.argmax()
    if mask[at]:
        return float(raw[at])
    held = raw[mask]
    return float(held.min() if lowest else held.max())


class Extremes(typing.NamedTuple):
    """Where a column's minimum and maximum are (over all its rows)."""

    argmin: int
    argmax: int


class Split(typing.NamedTuple):
    """A multiplier as ``default`` everywhere plus ``deltas`` on ``rows``."""

    default: float
    rows: np.ndarray
    deltas: np.ndarray


class _Held(typing.NamedTuple):
    column: np.ndarray      # held so that its id stays its own
    value: object


def _extremes(column):
    return Extremes(column.argmin(), column.argmax())


def _split(multiplier):
    values, counts = np.unique(multiplier, return_counts=True)
    default = float(values[counts.argmax()])
    rows = np.flatnonzero(multiplier != default)
    return Split(default, rows, multiplier[rows] - default)


class ColumnFacts:
    """What a runner keeps of shared read-only columns (a weigher's
    evaluated capability or stat, an aggregate multiplier column) while
    they live: their :class:`Extremes` and :class:`Split`.

    Keyed by the column's id, the column itself held (and checked on
    read) so that the id stays its own; at most ``kept`` of each, cleared
    when full.

    NOTE: one runner serves every request thread of its worker at once;
    the lock makes each read and each clear-and-add one step. It is held
    for a dict operation only: a fact is computed outside it (two threads
    may both compute one, and keep equal values).
    """

    def __init__(self, kept=16):
        self._kept = kept
        self._lock = threading.Lock()
        self._extremes = {}
        self._splits = {}

    def extremes(self, column):
        """The :class:`Extremes` of a read-only ``column``."""
        return self._get(self._extremes, column, _extremes)

    def split(self, multiplier):
        """The :class:`Split` of a multiplier; None for an array that is
        not a shared read-only column (splitting it afresh would cost more
        than it saves)."""
        if not isinstance(multiplier, np.ndarray):
            return _uniform_split(float(multiplier))
        if multiplier.flags.writeable:
            return None
        return self._get(self._splits, multiplier, _split)

    def _get(self, memo, column, build):
        key = id(column)
        with self._lock:
            held = memo.get(key)
        if held is not None and held.column is column:
            return held.value
        value = build(column)
        with self._lock:
            if len(memo) >= self._kept:
                memo.clear()
            memo[key] = _Held(column, value)
        return value


@functools.lru_cache(maxsize=64)
def _uniform_split(default):
    """The :class:`Split` of one multiplier for every row. Cached (and
    lru_cache locks itself): most multipliers are a few config values, and
    building a NamedTuple per weigher per request was a measurable part of
    a 1k-host decision."""
    return Split(default, _NO_ROWS, _NO_DELTAS)


def bounds(weigher, raw, mask, facts):
    """``(low, high)`` of the normalisation over the ``mask`` rows.

    :param facts: the runner's :class:`ColumnFacts`: a shared column's
        extremes over all rows are found once for as long as it lives
    """
    if weigher.minval is not None and weigher.maxval is not None:
        return float(weigher.minval), float(weigher.maxval)
    found = None if raw.flags.writeable else facts.extremes(raw)
    low = (extreme(raw, mask, lowest=True, at=found and found.argmin)
           if weigher.minval is None else float(weigher.minval))
    high = (extreme(raw, mask, lowest=False, at=found and found.argmax)
            if weigher.maxval is None else float(weigher.maxval))
    return low, high


def weighs(multiplier, split):
    """Whether ``multiplier`` (split as :meth:`ColumnFacts.split` says)
    weighs any row."""
    if split is None:
        return nonzero(multiplier)
    return bool(split.default or len(split.rows))


def add_scaled(totals, scratch, raw, low, high, multiplier, split):
    """Add a weigher's part ``multiplier * (raw - low) / (high - low)``
    into ``totals``, less the offset returned (to add to every row).

    :param scratch: a buffer as long as ``totals``
    :param split: ``multiplier`` as a :class:`Split`, or None
    """
    if high == low:
        return 0.0
    scale = 1.0 / (high - low)
    if split is None or abs(low) * scale > CANCELLATION:
        # per-row multipliers computed afresh (or raw values far from zero
        # next to their spread, where ``a * raw - a * low`` would lose
        # digits): Nova's arithmetic as it is
        np.subtract(raw, low, out=scratch)
        scratch *= scale
        scratch *= multiplier
        totals += scratch
        return 0.0
    offset = 0.0
    if split.default:
        a = split.default * scale
        np.multiply(raw, a, out=scratch)
        totals += scratch
        offset = -(a * low)
    if len(split.rows):
        fix = raw.take(split.rows).astype(float)
        fix -= low
        fix *= split.deltas
        fix *= scale
        np.add.at(totals, split.rows, fix)
    return offset
