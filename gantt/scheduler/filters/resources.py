"""ResourceFilter: the host has room for every requested resource class.

Placement's inventory rule, per class: the amount lies within
``[min_unit, max_unit]``, is a multiple of ``step_size``, and
``used + amount <= (total - reserved) * allocation_ratio``.

A host that is a provider tree is checked on its tree-wide sums, which no
fitting tree can fail; a host a sharing provider serves may get the class
from that provider, so it is left to the allocation-candidates solver.
"""

import numpy as np

from gantt.scheduler import filters


class ResourceFilter(filters.BaseFilter):
    name = "ResourceFilter"
    # forced hosts skip filters, never capacity: the claim would refuse them
    always_run = True

    def host_passes(self, host, request):
        if host.shared:
            return True
        for rc, amount in request.resources.items():
            slot = host.resources.get(rc)
            if slot is None or not slot.fits(amount):
                return False
        return True

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for rc, amount in request.resources.items():
            mask &= _fits(view, rc, amount)
        return mask | view.shared_rows()

    def explain(self, view, request, removed):
        """Charge each removed host to the first class it lacked."""
        left = removed & ~view.shared_rows()
        counts = {}
        for rc, amount in sorted(request.resources.items()):
            lacked = left & ~_fits(view, rc, amount)
            counts["lacked %s" % rc] = int(np.count_nonzero(lacked))
            left &= ~lacked
        return counts


def _fits(view, rc, amount):
    return view.memo(("fits", rc, amount), lambda: view.fits(rc, amount))
