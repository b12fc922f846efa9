"""MetricsFilter: the host reports every metric MetricsWeigher weighs.

The metrics are the names of ``[metrics] weight_setting``
(``name=ratio`` pairs; malformed pairs are ignored, as in Nova).
"""

import numpy as np

from gantt.scheduler.pipeline import filters


def weight_setting(conf):
    """``[(name, ratio)]`` of ``[metrics] weight_setting``, bad pairs
    dropped."""
    good = []
    for item in conf.metrics.weight_setting:
        name, sep, ratio = item.partition("=")
        try:
            value = float(ratio)
        except ValueError:
            continue
        if name.strip() and sep:
            good.append((name.strip(), value))
    return good


class MetricsFilter(filters.BaseFilter):
    name = "MetricsFilter"
    provider_kinds = filters.COMPUTE

    def _names(self):
        return {name for name, _ratio in weight_setting(self.conf)}

    def applies(self, request):
        return bool(self._names())

    def host_passes(self, host, request):
        return self._names() <= set(host.metrics)

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for name in self._names():
            mask &= ~np.isnan(view.metric(name))
        return mask
