"""IoOpsFilter and AggregateIoOpsFilter: hosts not too busy with I/O.

A host passes while its ``num_io_ops`` (builds, resizes, snapshots… in
progress) is below ``[filter_scheduler] max_io_ops_per_host``; the
aggregate variant reads ``max_io_ops_per_host`` from the host's aggregates
(the smallest value wins; the option when none or one does not parse).
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

KEY = "max_io_ops_per_host"


class IoOpsFilter(filters.BaseFilter):
    name = "IoOpsFilter"
    provider_kinds = filters.COMPUTE

    def _limit(self):
        return self.conf.filter_scheduler.max_io_ops_per_host

    def host_passes(self, host, request):
        return host.num_io_ops < self._limit()

    def passes_columns(self, view, request):
        return view.column("num_io_ops") < self._limit()


class AggregateIoOpsFilter(IoOpsFilter):
    name = "AggregateIoOpsFilter"

    def host_passes(self, host, request):
        limit = aggregates.min_number(aggregates.values(host, KEY),
                                      self._limit(), cast=int)
        return host.num_io_ops < limit

    def passes_columns(self, view, request):
        limit = aggregates.min_number_rows(view, KEY, self._limit(),
                                           cast=int)
        return view.column("num_io_ops") < limit
