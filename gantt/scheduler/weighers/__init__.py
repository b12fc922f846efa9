"""Weighers: rank the hosts that passed the filters.

A weigher returns one raw value per candidate. The runner normalises each
weigher's values to [0, 1] over the candidates (so that weighers with
different units can be summed), multiplies them by the weigher's
multiplier, and adds them up: the highest total wins. A negative multiplier
turns "most free first" (spread) into "least free first" (stack).
"""

import numpy as np


class BaseWeigher:
    """The weigher contract.

    :attr name: entry-point name listed in ``enabled_weighers``
    :attr multiplier_option: the ``[filter_scheduler]`` option holding the
        multiplier
    """

    name = None
    multiplier_option = None

    def __init__(self, conf):
        self.conf = conf

    def multiplier(self, view, rows):
        """The multiplier for ``rows`` (a float, or an array per row)."""
        return getattr(self.conf.filter_scheduler, self.multiplier_option)

    def weigh_host(self, host, request):
        """The raw value for one host (a HostRecord)."""
        raise NotImplementedError(self.__class__.__name__)

    def weigh_columns(self, view, request, rows):
        """Raw values for ``rows`` (an index array), or None for per-host."""
        return None


def normalize(values):
    """Min-max scale to [0, 1]; all-equal values become all zeros."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values
    low, high = values.min(), values.max()
    if high == low:
        return np.zeros_like(values)
    return (values - low) / (high - low)


class WeigherRunner:
    def __init__(self, weighers):
        self.weighers = list(weighers)

    def run(self, view, request, rows):
        """Total weight of each row in ``rows``, and each weigher's part.

        :returns: (totals array, {weigher name: contribution array})
        """
        totals = np.zeros(len(rows))
        parts = {}
        for weigher in self.weighers:
            raw = weigher.weigh_columns(view, request, rows)
            if raw is None:
                raw = [weigher.weigh_host(view.record(r), request)
                       for r in rows]
            part = normalize(raw) * weigher.multiplier(view, rows)
            parts[weigher.name] = part
            totals += part
        return totals, parts
