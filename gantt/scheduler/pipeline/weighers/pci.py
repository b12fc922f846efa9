"""PCIWeigher: keep hosts with free PCI devices for those who need them.

A host weighs ``100 - min(free devices, 99)``: hosts with fewer free
devices weigh more, so requests without PCI devices avoid PCI hosts and
requests with them stack onto the hosts that have fewest (Nova's rule).
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers

MAX_DEVS = 100


class PCIWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "PCIWeigher"
    multiplier_option = "pci_weight_multiplier"

    def constant(self, view, request):
        # no host reports a PCI pool: every host weighs MAX_DEVS
        return len(view.table.pci.keys) == 0

    def weigh_host(self, host, request):
        free = sum(pool.count for pool in host.pci_pools)
        return float(MAX_DEVS - min(free, MAX_DEVS - 1))

    def weigh_columns(self, view, request, rows):
        free = view.table.pci.free_total(view.n)[rows]
        return (MAX_DEVS - np.minimum(free, MAX_DEVS - 1)).astype(float)
