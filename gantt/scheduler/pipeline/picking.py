"""Picking: the host to claim among the ranked ones.

Random among the best ``host_subset_size`` (Nova's rule), so that workers
deciding at once do not all race for the same host; and the walk of a
weighing best first, for the layouts and alternates that must look past
the host picked.
"""

import functools

import numpy as np

from gantt.scheduler.pipeline import containers
from gantt.scheduler.pipeline import zones


class Picker:
    """Picks among a Weighing's best, with the worker's random source."""

    def __init__(self, conf, rng):
        self.conf = conf
        self.rng = rng

    @functools.cached_property
    def _options(self):
        """``[filter_scheduler]``, looked up once (it reads each value
        live, overrides and reloads included)."""
        return self.conf.filter_scheduler

    def pick(self, weighing, cycle=None):
        """(row to claim, its weight): random among the best
        ``host_subset_size``; for a request that fills sequentially
        (``cycle``'s), the first candidate in the stable order
        (:mod:`.containers`). A request with several zone hints picks
        among the candidates of the zones it placed fewest in
        (:mod:`.zones`).

        Ties are broken at random, never by row order: identical hosts are
        common (a fresh rack, a cloud filled evenly), and if every worker
        broke ties the same way they would all race for the same host.
        Only the best few are looked at (one partition), whatever the size.
        """
        spread = None if cycle is None else cycle.request.zone_spread
        if spread is not None and spread.placed:
            weighing = zones.narrowed(cycle.view, weighing, spread)
        if cycle is not None and cycle.request.fill == containers.SEQUENTIAL:
            return containers.pick_sequential(cycle.view, weighing)
        if weighing.full is not None:
            # every row weighed: positions are rows (-inf off the mask)
            totals = weighing.full
            count = int(np.count_nonzero(weighing.mask))
            i = self._best(totals, count, lambda: weighing.rows)
            return i, weighing.weight(i)
        rows, totals = weighing.rows, weighing.totals
        i = self._best(totals, len(rows), lambda: np.arange(len(rows)))
        return int(rows[i]), float(totals[i])

    def _best(self, totals, count, everyone):
        """The position in ``totals`` to claim, among ``count`` finite
        values (``everyone()``: their positions)."""
        fs = self._options
        if fs.shuffle_best_same_weighed_hosts:
            best = np.flatnonzero(totals == totals.max())
            if len(best) >= fs.host_subset_size:
                return int(self.rng.choice(best))
        subset = min(fs.host_subset_size, count)
        if count <= subset:
            top = everyone()
            return int(top[self.rng.randrange(len(top))])
        if subset == 1:
            # the best weight: no weight is better, all it ties with are
            # the subset to sample from
            best = int(totals.argmax())
            ties = totals == totals[best]
            if np.count_nonzero(ties) == 1:
                # no tie (no list of one to build); the draw below is made
                # all the same, so the random source moves as it did
                self.rng.randrange(1)
                return best
            tied = np.flatnonzero(ties)
            if len(tied) > 1:
                tied = tied[self.rng.sample(range(len(tied)), 1)]
            return int(tied[self.rng.randrange(len(tied))])
        # the subset-th best weight
        kth = np.partition(totals, len(totals) - subset)[len(totals) - subset]
        better = np.flatnonzero(totals > kth)
        tied = np.flatnonzero(totals == kth)
        need = subset - len(better)
        if need < len(tied):
            # sampling a range costs O(need), not O(ties)
            tied = tied[self.rng.sample(range(len(tied)), need)]
        top = np.concatenate([better, tied])
        return int(top[self.rng.randrange(len(top))])


def best_first(totals, first=16):
    """Positions in ``totals``, best first (equal ones in position order),
    sorted a growing chunk at a time: a walk that usually stops within the
    first few hosts then never sorts them all."""
    seen = set()
    count = first
    while True:
        if count * 2 >= len(totals):
            chunk = np.argsort(-totals, kind="stable")
        else:
            chunk = np.argpartition(-totals, count)[:count]
            # best first; equal weights in position order
            chunk = chunk[np.lexsort((chunk, -totals[chunk]))]
        for i in chunk.tolist():
            # NOTE: equal weights across a chunk's edge may come in a
            # later chunk; none comes twice
            if i not in seen:
                seen.add(i)
                yield i
        if len(chunk) == len(totals):
            return
        count *= 4
