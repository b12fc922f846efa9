"""NumInstancesFilter and AggregateNumInstancesFilter: hosts not too full.

A host passes while its ``num_instances`` is below ``[filter_scheduler]
max_instances_per_host``; the aggregate variant reads
``max_instances_per_host`` from the host's aggregates (the smallest value
wins; the option when none or one does not parse).
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

KEY = "max_instances_per_host"


class NumInstancesFilter(filters.BaseFilter):
    name = "NumInstancesFilter"
    provider_kinds = filters.COMPUTE

    def _limit(self):
        return self.conf.filter_scheduler.max_instances_per_host

    def host_passes(self, host, request):
        return host.num_instances < self._limit()

    def passes_columns(self, view, request):
        return view.column("num_instances") < self._limit()


class AggregateNumInstancesFilter(NumInstancesFilter):
    name = "AggregateNumInstancesFilter"

    def host_passes(self, host, request):
        limit = aggregates.min_number(aggregates.values(host, KEY),
                                      self._limit(), cast=int)
        return host.num_instances < limit

    def passes_columns(self, view, request):
        limit = aggregates.min_number_rows(view, KEY, self._limit(),
                                           cast=int)
        return view.column("num_instances") < limit
