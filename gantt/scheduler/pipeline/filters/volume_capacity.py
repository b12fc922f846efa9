"""CapacityFilter: the volume fits the pool, thin or thick, as in Cinder.

Cinder's ``cinder/scheduler/filters/capacity_filter.py`` over the numbers
of :mod:`gantt.scheduler.pipeline.pools` (how a pool's ``DISK_GB``
inventory, allocations and capabilities map to Cinder's). The size is
the request's ``DISK_GB``; a size of 0 passes every pool (Cinder's
manage). A pool whose free capacity is ``infinite`` or ``unknown``
passes; one whose total is passes only without a reserved percentage. A
thin request on a thin-capable pool passes when ``(provisioned + size) /
((total - reserved) * ratio)`` stays within the ratio (which must be at
least 1) and the virtual free space ``(total - reserved) * ratio -
provisioned`` holds the volume; otherwise (thick, or the volume type's
``provisioning:type`` is ``thick``) the smaller of the reported free space
and ``total - reserved - provisioned`` must hold it.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import pools


class CapacityFilter(filters.BaseFilter):
    name = "CapacityFilter"
    provider_kinds = frozenset({"volume"})

    def applies(self, request):
        return pools.requested_size(request) > 0

    def host_passes(self, host, request):
        return bool(pools.capacity_passes(
            pools.of_host(host), pools.requested_size(request),
            pools.thin_requested(request)))

    def passes_columns(self, view, request):
        thin = pools.thin_requested(request)
        return pools.capacity_passes(
            pools.columns(view), pools.requested_size(request), thin,
            pools.view_factors(view, thin)).astype(bool)

    def explain(self, view, request, removed):
        table = pools.columns(view)
        thin = table.thin & pools.thin_requested(request)
        causes = {
            "reported an unknown total and a reserved percentage":
                table.total_special,
            "had no capacity": table.total <= 0,
            "had an over-subscription ratio below 1":
                thin & (table.ratio < 1),
            "lacked thin-provisioned room (Cinder's virtual free capacity)":
                thin,
            "lacked free capacity": np.ones(view.n, dtype=bool),
        }
        out, left = {}, removed.copy()
        for label, rows in causes.items():      # the first cause wins
            hit = left & rows
            out[label] = int(np.count_nonzero(hit))
            left &= ~hit
        return out
