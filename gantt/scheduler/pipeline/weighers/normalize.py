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
correction on those rows only (a :class:`Split`). What that needs of the
shared read-only columns (their extremes and splits) is kept for as long
as they live.
"""

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
    if weigher.minval is not None:
        raw = np.maximum(raw, weigher.minval)
    if weigher.maxval is not None:
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


# what shared read-only columns give, kept while the column is (keyed by
# its id, the column itself held so that the id stays its own)
_KEPT = 16
_argextremes = {}
_splits = {}


def _keep(memo, column, value):
    if len(memo) >= _KEPT:
        memo.clear()
    memo[id(column)] = (column, value)
    return value


def _kept(memo, column):
    held = memo.get(id(column))
    return held[1] if held is not None and held[0] is column else None


def split(multiplier):
    """The :class:`Split` of a multiplier; None for an array that is not a
    shared read-only column (splitting it afresh would cost more than it
    saves)."""
    if not isinstance(multiplier, np.ndarray):
        return Split(float(multiplier), _NO_ROWS, _NO_DELTAS)
    if multiplier.flags.writeable:
        return None
    found = _kept(_splits, multiplier)
    if found is None:
        values, counts = np.unique(multiplier, return_counts=True)
        default = float(values[counts.argmax()])
        rows = np.flatnonzero(multiplier != default)
        found = _keep(_splits, multiplier, Split(
            default, rows, multiplier[rows] - default))
    return found


def bounds(weigher, raw, mask):
    """``(low, high)`` of the normalisation over the ``mask`` rows."""
    if weigher.minval is not None and weigher.maxval is not None:
        return float(weigher.minval), float(weigher.maxval)
    found = None
    if not raw.flags.writeable:
        # a shared column (a weigher's evaluated capability or stat): its
        # extremes over all rows are found once for as long as it lives
        found = _kept(_argextremes, raw)
        if found is None:
            found = _keep(_argextremes, raw, Extremes(raw.argmin(),
                                                      raw.argmax()))
    low = (extreme(raw, mask, lowest=True, at=found and found.argmin)
           if weigher.minval is None else float(weigher.minval))
    high = (extreme(raw, mask, lowest=False, at=found and found.argmax)
            if weigher.maxval is None else float(weigher.maxval))
    return low, high


def weighs(multiplier, split):
    """Whether ``multiplier`` (split as :func:`split` says) weighs any
    row."""
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
