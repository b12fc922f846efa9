"""The scheduling pipeline: candidates -> filters -> weighers.

This is the one place the stage order is written. The placer ranks each
instance through it, ``explain`` records each step of it, and the
allocation-candidates API runs it with the resource rule as its only
filter. Picking a host among the ranked and finding a tree's layout come
after it (:mod:`.picking`, :mod:`.layouts`); claiming is not its business.

The pipeline reads a cycle's view and writes nothing but the cycle's
``candidates``.
"""

import typing

import numpy as np

from gantt.scheduler.pipeline import candidates
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import weighers as weighers_base


class Ranking(typing.NamedTuple):
    """What one pass of the pipeline found.

    :attr candidates: stage 1's outcome (its steps when recorded)
    :attr outcome: the hosts that passed the filters, and the tally of
        every stage (candidates' removals first)
    :attr weighing: the weighed hosts; None when no host passed
    :attr parts: each weigher's share of the weights (when recorded)
    """

    candidates: filters_base.FilterOutcome
    outcome: filters_base.FilterOutcome
    weighing: weighers_base.Weighing | None
    parts: object = None


class Pipeline:
    """candidates -> filters -> weighers, for one cycle at a time.

    :param conf: what its plugins read (a profile's, see :mod:`.profiles`)
    :param profile: the name of the scheduling profile it ranks for
    :param packing: the packing policy its weighers follow (None: as
        configured)
    """

    def __init__(self, filters, weighers, conf, *, profile="default",
                 packing=None):
        self.filters = filters
        self.weighers = weighers
        self.conf = conf
        self.profile = profile
        self.packing = packing

    @property
    def filter_names(self):
        return [f.name for f in self.filters.filters]

    @property
    def weigher_names(self):
        return [w.name for w in self.weighers.weighers]

    def rank(self, cycle, *, record=False):
        """Rank the hosts of ``cycle``'s view for one more instance.

        :param record: keep each step's removed rows, and each weigher's
            share of the weights (explain)
        :returns: a :class:`Ranking`
        """
        # 1. what the request may consider at all: Placement's part and
        #    the pre-filters; usage does not change it, so once per call
        cands = self.candidates(cycle, record=record)
        # 2. which of those can take one more instance now (the view
        #    counts this call's earlier instances)
        outcome = self._filter(cycle, cands, record)
        if not outcome.mask.any():
            return Ranking(cands, outcome, None)
        # 3. how good each is; the caller picks among the best
        weighing, parts = self._weigh(cycle, outcome.mask, record)
        return Ranking(cands, outcome, weighing, parts)

    def candidates(self, cycle, *, record=False):
        """Stage 1 of ``cycle``, run on its first pass only."""
        if cycle.candidates is None:
            cycle.candidates = candidates.for_request(
                cycle.view, cycle.request, self.conf, record=record)
        return cycle.candidates

    def _filter(self, cycle, cands, record):
        """The filters, on the candidates this instance may still use."""
        mask = cands.mask
        if cycle.excluding:
            mask = mask & ~cycle.failed & ~cycle.unfit
        request = cycle.request
        # the runner copies the mask it is given
        outcome = self.filters.run(cycle.view, request, mask,
                                   skip_filters=request.forced,
                                   record=record)
        outcome.removed = list(cands.removed) + outcome.removed
        if cycle.excluding:
            outcome.removed.extend(
                _excluded(cands.mask, cycle.failed, cycle.unfit))
        return outcome

    def _weigh(self, cycle, mask, record):
        """(the Weighing of ``mask``, each weigher's share or None)."""
        view, request = cycle.view, cycle.request
        if not record:
            return self.weighers.weigh(view, request, mask), None
        rows = np.flatnonzero(mask)
        totals, parts = self.weighers.run(view, request, rows, mask=mask)
        return weighers_base.Weighing(mask, rows=rows, totals=totals), parts


def _excluded(candidates_mask, failed, unfit):
    """The removals this call's own exclusions made."""
    if unfit.any():
        yield filters_base.Removal(
            "no allocation candidate in its provider tree",
            int(np.count_nonzero(candidates_mask & unfit & ~failed)))
    if failed.any():
        yield filters_base.Removal(
            "failed to claim",
            int(np.count_nonzero(candidates_mask & failed)))
