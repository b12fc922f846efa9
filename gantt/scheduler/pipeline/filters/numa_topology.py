"""NUMATopologyFilter: the guest's NUMA topology fits the host's cells.

Only requests with a NUMA topology are checked (see
:mod:`gantt.scheduler.state.numa` for how one is derived and what fits); a host
that reports no NUMA cells cannot take such a request. Shared vCPUs use the
host's VCPU allocation ratio and memory its MEMORY_MB ratio, as Nova's
NUMA limits do.

A host sees what the earlier instances of the same request took of its
cells (``ResourceRequest.ledger``), as Nova's ``HostState`` does once it
consumed an instance: both paths read the host's cells through it.
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import numa


class NUMATopologyFilter(filters.BaseFilter):
    name = "NUMATopologyFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return request.numa is not None

    def host_passes(self, host, request):
        cells = request.ledger.numa_cells(host.row, host.uuid,
                                          host.numa_cells)
        return numa.host_fits(cells, request.numa, host.ratio("VCPU"),
                              host.ratio("MEMORY_MB"))

    def passes_columns(self, view, request):
        cpu_ratio = view.ratio("VCPU")
        ram_ratio = view.ratio("MEMORY_MB")
        fits = numa.fits_columns(view.table.numa, view.n, request.numa,
                                 cpu_ratio, ram_ratio)
        # the few rows earlier instances took from, host by host
        for row, cells in request.ledger.numa_rows(view):
            fits[row] = numa.host_fits(cells, request.numa,
                                       float(cpu_ratio[row]),
                                       float(ram_ratio[row]))
        return fits
