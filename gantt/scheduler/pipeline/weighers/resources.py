"""RAM, CPU and disk weighers: how much room a host has left.

By default each weighs what Nova's weigher of the same name weighs
(``nova/scheduler/weights/{ram,cpu,disk}.py`` over ``HostState``):

* RAMWeigher: the compute node's free RAM, ``total - reserved - used``
  (Nova's ``free_ram_mb``; the allocation ratio plays no part)
* DiskWeigher: likewise the free disk (Nova's ``free_disk_mb``, in GB here:
  the unit cancels out in the normalisation)
* CPUWeigher: ``total * allocation_ratio - used`` (Nova's ``vcpus_total *
  cpu_allocation_ratio - vcpus_used``; reserved VCPUs are not subtracted)

With ``[filter_scheduler] free_capacity_weighing`` all three weigh
Placement's free capacity instead, ``(total - reserved) *
allocation_ratio - used``, the room the ResourceFilter judges.

As in Nova (``minval = 0``), a negative value (an overcommitted host)
weighs as 0, and 0 rather than the smallest value is the low end of the
normalisation.
"""

import numpy as np

from gantt.scheduler.pipeline import weighers

#: Nova's free quantities, from a class's (total, reserved, ratio, used)
_NOVA_FREE = {
    "no ratio": lambda total, reserved, ratio, used: total - reserved - used,
    "no reserved": lambda total, reserved, ratio, used: total * ratio - used,
}
#: the table's kept column of each (HostView.kept_free)
_KEPT = {"no ratio": "free_unreserved", "no reserved": "free_overcommitted"}


class _FreeCapacityWeigher(weighers.BaseWeigher):
    resource_class = None
    #: which of :data:`_NOVA_FREE` Nova weighs
    nova_free = "no ratio"
    minval = 0

    def _capacity_aware(self):
        return self.options("filter_scheduler").free_capacity_weighing

    def weigh_host(self, host, request):
        slot = host.resources.get(self.resource_class)
        if slot is None:
            return 0.0
        if self._capacity_aware():
            return float(slot.free)
        return float(_NOVA_FREE[self.nova_free](
            slot.total, slot.reserved, slot.allocation_ratio, slot.used))

    def weigh_columns(self, view, request, rows):
        col = view.rc_column(self.resource_class)
        if col is None:
            return np.zeros(view.n)[rows]
        if self._capacity_aware():
            free = view.free(col)
        else:
            free = view.kept_free(_KEPT[self.nova_free], col)
        if free is None:
            free = _NOVA_FREE[self.nova_free](
                view.inventory("total", col), view.inventory("reserved", col),
                view.inventory("allocation_ratio", col), view.used(col))
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
    nova_free = "no reserved"


class DiskWeigher(_FreeCapacityWeigher):
    name = "DiskWeigher"
    multiplier_option = "disk_weight_multiplier"
    resource_class = "DISK_GB"
