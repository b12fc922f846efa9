"""RAM, CPU and disk weighers: free capacity after allocation ratios."""

import numpy as np

from gantt.scheduler import weighers


class _FreeCapacityWeigher(weighers.BaseWeigher):
    resource_class = None

    def weigh_host(self, host, request):
        slot = host.resources.get(self.resource_class)
        return 0.0 if slot is None else float(slot.free)

    def weigh_columns(self, view, request, rows):
        col = view.rc_column(self.resource_class)
        if col is None:
            return np.zeros(view.n)[rows]
        free = view.free(col)
        has = view.inventory("has_inventory", col)
        if not has.all():
            free = np.where(has, free, 0.0)
        return free[rows]


class RAMWeigher(_FreeCapacityWeigher):
    name = "RAMWeigher"
    multiplier_option = "ram_weight_multiplier"
    resource_class = "MEMORY_MB"


class CPUWeigher(_FreeCapacityWeigher):
    name = "CPUWeigher"
    multiplier_option = "cpu_weight_multiplier"
    resource_class = "VCPU"


class DiskWeigher(_FreeCapacityWeigher):
    name = "DiskWeigher"
    multiplier_option = "disk_weight_multiplier"
    resource_class = "DISK_GB"
