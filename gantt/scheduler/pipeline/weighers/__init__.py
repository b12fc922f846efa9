"""Weighers: rank the hosts that passed the filters.

A weigher returns one raw value per candidate. The runner normalises each
weigher's values to [0, 1] over the candidates (so that weighers with
different units can be summed), multiplies them by the weigher's
multiplier, and adds them up: the highest total wins. A negative multiplier
turns "most free first" (spread) into "least free first" (stack).

As in Nova (``nova/weights.py``), a weigher may set ``minval``/``maxval``:
raw values are clipped to them and they replace the observed minimum or
maximum in the normalisation. And as in Nova, the multiplier of a host is
overridden by the metadata key named like the option (e.g.
``ram_weight_multiplier``) on the aggregates the host is in, the smallest
value winning (``nova.scheduler.utils.get_weight_multiplier``).
"""

import collections.abc

import numpy as np

from gantt.scheduler.state import aggregates


class BaseWeigher:
    """The weigher contract.

    :attr name: entry-point name listed in ``enabled_weighers``
    :attr multiplier_option: the option holding the multiplier (in
        ``multiplier_group``, ``[filter_scheduler]`` by default); it is also
        the aggregate metadata key that overrides it per host
    :attr minval, maxval: bounds of the raw values (None: observed)
    """

    name = None
    multiplier_option = None
    multiplier_group = "filter_scheduler"
    #: the aggregate metadata key; None: the option's name
    multiplier_key = None
    minval = None
    maxval = None

    def __init__(self, conf):
        self.conf = conf

    # -- multiplier -------------------------------------------------------

    def config_multiplier(self):
        return getattr(self.conf[self.multiplier_group],
                       self.multiplier_option)

    @property
    def _key(self):
        return self.multiplier_key or self.multiplier_option

    def multiplier(self, view, rows):
        """The multiplier for ``rows`` (a float, or an array per row)."""
        default = self.config_multiplier()
        if not view.aggregates.with_key(self._key):
            return default
        return select(aggregates.min_number_rows(view, self._key, default),
                      rows)

    def host_multiplier(self, host):
        """The multiplier of one host (a HostRecord)."""
        return aggregates.min_number(aggregates.values(host, self._key),
                                     self.config_multiplier())

    # -- raw values -------------------------------------------------------

    def weigh_host(self, host, request):
        """The raw value for one host (a HostRecord)."""
        raise NotImplementedError(self.__class__.__name__)

    def weigh_columns(self, view, request, rows):
        """Raw values for ``rows`` (an index array), or None for per-host."""
        return None

    def constant(self, view, request):
        """True when every host would get the same raw value (nothing in
        the request or the fleet for this weigher to tell hosts apart): the
        vectorised runner then skips it, as its normalised values are all
        zero anyway."""
        return False


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


def _nonzero(multiplier):
    if isinstance(multiplier, np.ndarray):
        return bool(multiplier.any())
    return multiplier != 0


def _clip(weigher, raw):
    if not (isinstance(raw, np.ndarray) and raw.dtype.kind in "fi"):
        raw = np.asarray(raw, dtype=float)
    if weigher.minval is not None:
        raw = np.maximum(raw, weigher.minval)
    if weigher.maxval is not None:
        raw = np.minimum(raw, weigher.maxval)
    return raw


def _extreme(raw, mask, lowest, at=None):
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


#: ``rows`` meaning "every row of the view" (the dense path)
ALL = slice(None)

# ``a * raw - a * low`` stays within 1e-10 of the normalised value while
# ``|low|`` is at most this many times ``high - low``
_CANCELLATION = 1e6

# what shared read-only columns give, kept while the column is (keyed by
# its id, the column itself held so that the id stays its own)
_KEPT = 16
_argextremes = {}
_splits = {}


def select(column, rows):
    """``column[rows]``; the column itself for :data:`ALL`, so that a
    shared read-only column keeps its identity (see :func:`_bounds`)."""
    return column if rows is ALL else column[rows]


def _keep(memo, column, value):
    if len(memo) >= _KEPT:
        memo.clear()
    memo[id(column)] = (column, value)
    return value


def _kept(memo, column):
    held = memo.get(id(column))
    return held[1] if held is not None and held[0] is column else None


def _bounds(weigher, raw, mask):
    """``(low, high)`` of the normalisation over the ``mask`` rows."""
    if weigher.minval is not None and weigher.maxval is not None:
        return float(weigher.minval), float(weigher.maxval)
    found = None
    if not raw.flags.writeable:
        # a shared column (a weigher's evaluated capability or stat): its
        # extremes over all rows are found once for as long as it lives
        found = _kept(_argextremes, raw)
        if found is None:
            found = _keep(_argextremes, raw, (raw.argmin(), raw.argmax()))
    low = (_extreme(raw, mask, lowest=True, at=found and found[0])
           if weigher.minval is None else float(weigher.minval))
    high = (_extreme(raw, mask, lowest=False, at=found and found[1])
            if weigher.maxval is None else float(weigher.maxval))
    return low, high


def _split(multiplier):
    """``(default, rows, deltas)``: a multiplier as a number everywhere
    plus ``deltas`` on ``rows``; None for an array that is not a shared
    read-only column (splitting it afresh would cost more than it saves).
    """
    if not isinstance(multiplier, np.ndarray):
        return float(multiplier), _NO_ROWS, _NO_DELTAS
    if multiplier.flags.writeable:
        return None
    split = _kept(_splits, multiplier)
    if split is None:
        values, counts = np.unique(multiplier, return_counts=True)
        default = float(values[counts.argmax()])
        rows = np.flatnonzero(multiplier != default)
        split = _keep(_splits, multiplier, (
            default, rows, multiplier[rows] - default))
    return split


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_DELTAS = np.zeros(0)


def size(view, rows):
    """How many values ``weigh_columns(view, request, rows)`` returns."""
    return view.n if isinstance(rows, slice) else len(rows)


class Weighing:
    """The total weights of one filter pass's candidates (``mask``).

    When every row of the view was weighed, ``full`` holds each row's
    total less ``offset`` (a constant the runner leaves out rather than
    subtract from every row) and -inf outside the candidates: the best
    host is then picked straight from it, with no list of candidate rows
    and no gathered copy (at 100k hosts each costs as much as a weigher).
    ``rows`` and ``totals`` (the candidates in row order, and their
    weights) are made when asked for.
    """

    def __init__(self, mask, rows=None, totals=None, full=None, offset=0.0):
        self.mask = mask
        self.full = full
        self.offset = offset
        self._rows = rows
        self._totals = totals

    @property
    def rows(self):
        if self._rows is None:
            self._rows = np.flatnonzero(self.mask)
        return self._rows

    @property
    def totals(self):
        if self._totals is None:
            self._totals = self.full[self.rows] + self.offset
        return self._totals

    def weight(self, row):
        """The total weight of candidate ``row`` (``full`` kept)."""
        return float(self.full[row] + self.offset)


class Parts(collections.abc.Mapping):
    """Each weigher's contribution per candidate row, gathered on access
    (the scheduler itself only needs the totals)."""

    def __init__(self, rows):
        self._rows = rows
        self._full = {}

    def __getitem__(self, name):
        value = self._full[name]
        return value if self._rows is None else value[self._rows]

    def __iter__(self):
        return iter(self._full)

    def __len__(self):
        return len(self._full)


class WeigherRunner:
    """Weighs candidate rows with every enabled weigher.

    When most rows are candidates the vectorised runner weighs every row of
    the view (contiguous columns, no gathers) and takes each weigher's
    minimum and maximum over the candidates only; otherwise it weighs the
    candidate rows. Both give the same numbers.

    :param vectorised: use ``weigh_columns`` and column multipliers where a
        weigher has them (the default); False weighs host by host
    """

    def __init__(self, weighers, vectorised=True):
        self.weighers = list(weighers)
        self.vectorised = vectorised

    def run(self, view, request, rows, mask=None, parts=True):
        """Total weight of each row in ``rows``, and each weigher's part.

        :param mask: the candidate rows as a boolean array (optional)
        :param parts: keep each weigher's part (explain needs them; the
            scheduler does not, and saves an array per weigher)
        :returns: (totals array, {weigher name: contribution array})
        """
        if self.vectorised and 2 * len(rows) > view.n:
            if mask is None:
                mask = np.zeros(view.n, dtype=bool)
                mask[rows] = True
            return self._dense(view, request, rows, mask, parts)
        return self._sparse(view, request, rows)

    def weigh(self, view, request, mask):
        """The :class:`Weighing` of the ``mask`` rows (what the scheduler
        needs: no parts)."""
        if self.vectorised and 2 * np.count_nonzero(mask) > view.n:
            full, offset = self._dense_totals(view, request, mask)
            return Weighing(mask, full=full, offset=offset)
        rows = np.flatnonzero(mask)
        totals, _parts = self._sparse(view, request, rows)
        return Weighing(mask, rows=rows, totals=totals)

    def _dense_totals(self, view, request, mask):
        """Every row's total less an offset, -inf outside ``mask``.

        The same sum as :meth:`_dense`, in fewer passes over the columns: a
        weigher's part ``m * (raw - low) / (high - low)`` is added as
        ``a * raw`` (``a = m / (high - low)``) with ``a * low`` gathered into
        one offset; a multiplier that aggregates override on some rows is
        its default everywhere plus a correction on those rows only.
        """
        n = view.n
        totals = np.zeros(n)
        scratch = np.empty(n)
        offset = 0.0
        rows = None
        for weigher in self.weighers:
            if weigher.constant(view, request):
                continue
            multiplier = weigher.multiplier(view, ALL)
            split = _split(multiplier)
            if not (_nonzero(multiplier) if split is None
                    else split[0] or len(split[1])):
                continue
            raw = weigher.weigh_columns(view, request, ALL)
            if raw is None:
                # a per-host weigher: weigh the candidates only
                if rows is None:
                    rows = np.flatnonzero(mask)
                totals[rows] += self._sparse(view, request, rows,
                                             [weigher])[0]
                continue
            raw = _clip(weigher, raw)
            low, high = _bounds(weigher, raw, mask)
            if high == low:
                continue
            scale = 1.0 / (high - low)
            if split is None or abs(low) * scale > _CANCELLATION:
                # per-row multipliers computed afresh (or raw values far
                # from zero next to their spread, where ``a * raw - a *
                # low`` would lose digits): Nova's arithmetic as it is
                np.subtract(raw, low, out=scratch)
                scratch *= scale
                scratch *= multiplier
                totals += scratch
                continue
            default, override_rows, deltas = split
            if default:
                a = default * scale
                np.multiply(raw, a, out=scratch)
                totals += scratch
                offset -= a * low
            if len(override_rows):
                fix = raw.take(override_rows).astype(float)
                fix -= low
                fix *= deltas
                fix *= scale
                np.add.at(totals, override_rows, fix)
        np.copyto(totals, -np.inf, where=~mask)
        return totals, offset

    def _dense(self, view, request, rows, mask, keep=True):
        totals = np.zeros(view.n)
        scratch = None if keep else np.empty(view.n)
        parts = Parts(rows)
        zeros = np.zeros(view.n)        # shared by weighers that add nothing
        zeros.flags.writeable = False
        for weigher in self.weighers:
            if weigher.constant(view, request):
                if keep:
                    parts._full[weigher.name] = zeros
                continue
            multiplier = weigher.multiplier(view, ALL)
            weighs = _nonzero(multiplier)
            raw = None
            if weighs:
                raw = weigher.weigh_columns(view, request, ALL)
            if raw is None:
                if weighs:
                    # a per-host weigher: weigh the candidates only
                    part = self._sparse(view, request, rows, [weigher])[0]
                    full = np.zeros(view.n)
                    full[rows] = part
                    if keep:
                        parts._full[weigher.name] = full
                    totals += full
                elif keep:
                    parts._full[weigher.name] = zeros
                continue
            raw = _clip(weigher, raw)
            low = (_extreme(raw, mask, lowest=True)
                   if weigher.minval is None else float(weigher.minval))
            high = (_extreme(raw, mask, lowest=False)
                    if weigher.maxval is None else float(weigher.maxval))
            if keep:
                part = normalize(raw, low, high, multiplier)
                parts._full[weigher.name] = part
                totals += part
            elif high != low:
                # the same arithmetic as normalize(), into one buffer
                np.subtract(raw, low, out=scratch)
                if isinstance(multiplier, np.ndarray):
                    scratch /= high - low
                    scratch *= multiplier
                else:
                    scratch *= multiplier / (high - low)
                totals += scratch
        return totals[rows], parts

    def _sparse(self, view, request, rows, weighers=None):
        totals = np.zeros(len(rows))
        parts = Parts(None)
        records = None
        for weigher in self.weighers if weighers is None else weighers:
            if self.vectorised:
                if weigher.constant(view, request):
                    parts._full[weigher.name] = np.zeros(len(rows))
                    continue
                multiplier = weigher.multiplier(view, rows)
                if not np.any(multiplier):
                    # a zero multiplier weighs nothing: skip the raw values
                    parts._full[weigher.name] = np.zeros(len(rows))
                    continue
                raw = weigher.weigh_columns(view, request, rows)
            else:
                raw = None
            if raw is None:
                if records is None:
                    records = [view.record(r) for r in rows]
                raw = [weigher.weigh_host(h, request) for h in records]
                if not self.vectorised:
                    multiplier = np.array(
                        [weigher.host_multiplier(h) for h in records])
            part = normalize(_clip(weigher, raw), weigher.minval,
                             weigher.maxval, multiplier)
            parts._full[weigher.name] = part
            totals += part
        return totals, parts
