"""MetricsWeigher: a weighted sum of the metrics hosts report.

``[metrics] weight_setting`` lists ``name=ratio`` pairs; a host weighs the
sum of each metric times its ratio. A host that misses one of them weighs
``[metrics] weight_of_unavailable`` (unless that metric's ratio or the
host's multiplier is 0), so it comes last; MetricsFilter removes such hosts
altogether. The multiplier is ``[metrics] weight_multiplier``, overridden
per host by the aggregate key ``metrics_weight_multiplier``.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.pipeline.filters import metrics as metrics_filter


class MetricsWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "MetricsWeigher"
    multiplier_option = "weight_multiplier"
    multiplier_group = "metrics"
    multiplier_key = "metrics_weight_multiplier"

    def _unavailable(self):
        return self.conf.metrics.weight_of_unavailable

    def constant(self, view, request):
        return not metrics_filter.weight_setting(self.conf)

    def weigh_host(self, host, request):
        value = 0.0
        multiplier = self.host_multiplier(host)
        for name, ratio in metrics_filter.weight_setting(self.conf):
            metric = host.metrics.get(name)
            if metric is None:
                if ratio * multiplier != 0:
                    return self._unavailable()
                continue
            value += metric * ratio
        return value

    def weigh_columns(self, view, request, rows):
        count = weighers.size(view, rows)
        multiplier = np.broadcast_to(self.multiplier(view, rows), count)
        value = np.zeros(count)
        missing = np.zeros(count, dtype=bool)
        for name, ratio in metrics_filter.weight_setting(self.conf):
            metric = view.metric(name)[rows]
            absent = np.isnan(metric)
            missing |= absent & (ratio * multiplier != 0)
            value += np.where(absent, 0.0, metric * ratio)
        return np.where(missing, self._unavailable(), value)
