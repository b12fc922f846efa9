"""NUMATopologyFilter: the guest's NUMA topology fits the host's cells.

Only requests with a NUMA topology are checked (see
:mod:`gantt.scheduler.numa` for how one is derived and what fits); a host
that reports no NUMA cells cannot take such a request. Shared vCPUs use the
host's VCPU allocation ratio and memory its MEMORY_MB ratio, as Nova's
NUMA limits do.
"""

from gantt.scheduler import filters
from gantt.scheduler import numa


class NUMATopologyFilter(filters.BaseFilter):
    name = "NUMATopologyFilter"

    def applies(self, request):
        return request.numa is not None

    def host_passes(self, host, request):
        return numa.host_fits(host.numa_cells, request.numa,
                              host.ratio("VCPU"), host.ratio("MEMORY_MB"))

    def passes_columns(self, view, request):
        return numa.fits_columns(view.table.numa, view.n, request.numa,
                                 view.ratio("VCPU"), view.ratio("MEMORY_MB"))
