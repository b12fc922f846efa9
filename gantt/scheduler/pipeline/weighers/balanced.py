"""BalancedAllocationWeigher: prefer hosts whose classes fill evenly.

A Gantt weigher, not one of Nova's (kube-scheduler's BalancedAllocation
idea). For each resource class it weighs, a host's used fraction after the
placement is ``(used + requested) / capacity``, capacity being Placement's
``(total - reserved) * allocation_ratio`` (the room the ResourceFilter
judges), capped at 1. The raw value is minus the standard deviation of
those fractions: 0 for a host whose classes would sit equally full, down
to -0.5. So a RAM-heavy flavor goes where RAM is the emptiest class, and a
host does not run out of one class while the others sit idle, which
strands them.

Unlike Nova's weighers the value is normalised on a fixed scale
(``minval = -0.5``, ``maxval = 0``: a host weighs ``1 - 2 * deviation``
times the multiplier), as kube-scheduler scores it: candidates that are
all nearly balanced differ by little, so that another weigher (a stacking
one, say) decides between them. Normalised over the candidates instead,
the smallest differences would swing the whole multiplier, and on a fleet
of identical hosts this cost stacking 5 % of the instances placed (see
``benchmarks/packing.py``).

The classes weighed are ``[filter_scheduler]
balanced_allocation_resource_classes`` plus any other class the request
asks for; a host weighs only those it has capacity of (a host with fewer
than two weighs 0). The multiplier is ``[filter_scheduler]
balanced_allocation_weight_multiplier`` (0, off, by default), overridden
per host by the aggregate key of the same name.
"""

import numpy as np

from gantt.scheduler.pipeline import weighers


def spread(fractions, present):
    """The standard deviation of each column's ``present`` fractions.

    :param fractions: a (classes, hosts) array, 0 where not present
    :param present: a boolean array of the same shape
    :returns: one value per host (0 where fewer than two are present)
    """
    count = present.sum(axis=0)
    mean = fractions.sum(axis=0) / np.maximum(count, 1)
    deviation = np.where(present, fractions - mean, 0.0)
    variance = (deviation * deviation).sum(axis=0) / np.maximum(count, 1)
    return np.where(count >= 2, np.sqrt(variance), 0.0)


class BalancedAllocationWeigher(weighers.BaseWeigher):
    name = "BalancedAllocationWeigher"
    multiplier_option = "balanced_allocation_weight_multiplier"
    # the fixed scale described above
    minval = -0.5
    maxval = 0.0

    def _classes(self, request):
        """The classes weighed for ``request``, in a fixed order."""
        configured = (
            self.conf.filter_scheduler.balanced_allocation_resource_classes)
        return tuple(dict.fromkeys([*configured, *sorted(request.resources)]))

    def constant(self, view, request):
        return len(self._classes(request)) < 2

    def weigh_host(self, host, request):
        fractions = []
        for rc in self._classes(request):
            slot = host.resources.get(rc)
            if slot is None or slot.capacity <= 0:
                continue
            used = slot.used + request.resources.get(rc, 0)
            fractions.append(min(used / slot.capacity, 1.0))
        column = np.array(fractions).reshape(-1, 1)
        return -float(spread(column, np.ones_like(column, dtype=bool))[0])

    def weigh_columns(self, view, request, rows):
        count = weighers.size(view, rows)
        fractions, present = [], []
        for rc in self._classes(request):
            col = view.rc_column(rc)
            if col is None:
                continue
            capacity = weighers.select(view.capacity(col), rows)
            has = capacity > 0
            has &= weighers.select(view.inventory("has_inventory", col), rows)
            used = weighers.select(view.used(col), rows)
            used = used + request.resources.get(rc, 0)
            fraction = used / np.where(has, capacity, 1.0)
            fractions.append(np.where(has, np.minimum(fraction, 1.0), 0.0))
            present.append(has)
        if not fractions:
            return np.zeros(count)
        return -spread(np.array(fractions), np.array(present))
