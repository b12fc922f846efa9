"""The weigher runner: every enabled weigher over the candidate rows.

The runner normalises each weigher's raw values to [0, 1] over the
candidates (``normalize.py``), multiplies them by the weigher's multiplier,
and adds them up: the highest total wins. A negative multiplier turns
"most free first" (spread) into "least free first" (stack).
"""

import collections.abc

import numpy as np

from gantt.scheduler.pipeline.weighers import base
from gantt.scheduler.pipeline.weighers import normalize


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
        # what the dense path keeps of shared columns between requests
        self._facts = normalize.ColumnFacts()

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

        The same sum as :meth:`_dense`, in fewer passes over the columns
        (:func:`normalize.add_scaled`).
        """
        totals = np.zeros(view.n)
        scratch = np.empty(view.n)
        offset = 0.0
        rows = None
        for weigher in self.weighers:
            if weigher.constant(view, request):
                continue
            multiplier = weigher.multiplier(view, base.ALL)
            split = self._facts.split(multiplier)
            if not normalize.weighs(multiplier, split):
                continue
            raw = weigher.weigh_columns(view, request, base.ALL)
            if raw is None:
                # a per-host weigher: weigh the candidates only
                if rows is None:
                    rows = np.flatnonzero(mask)
                totals[rows] += self._sparse(view, request, rows,
                                             [weigher])[0]
                continue
            raw = normalize.clip(weigher, raw)
            low, high = normalize.bounds(weigher, raw, mask, self._facts)
            offset += normalize.add_scaled(totals, scratch, raw, low, high,
                                           multiplier, split)
        if not mask.all():
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
            multiplier = weigher.multiplier(view, base.ALL)
            weighs = normalize.nonzero(multiplier)
            raw = None
            if weighs:
                raw = weigher.weigh_columns(view, request, base.ALL)
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
            raw = normalize.clip(weigher, raw)
            low = (normalize.extreme(raw, mask, lowest=True)
                   if weigher.minval is None else float(weigher.minval))
            high = (normalize.extreme(raw, mask, lowest=False)
                    if weigher.maxval is None else float(weigher.maxval))
            if keep:
                part = normalize.normalize(raw, low, high, multiplier)
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
            part = normalize.normalize(normalize.clip(weigher, raw),
                                       weigher.minval, weigher.maxval,
                                       multiplier)
            parts._full[weigher.name] = part
            totals += part
        return totals, parts
