"""CapacityWeigher and AllocatedCapacityWeigher: room on volume backends.

As Cinder's ``cinder/scheduler/weights/capacity.py``, over the numbers of
:mod:`gantt.scheduler.pipeline.pools`:

* CapacityWeigher weighs the virtual free capacity: ``(total - reserved)
  * ratio - provisioned`` for a thin request on a thin-capable pool, else
  the smaller of the reported free space and ``total - reserved -
  provisioned``. A pool reporting ``infinite`` or ``unknown`` capacity is
  weighed last: -1 under a positive multiplier; under another, above the
  largest known value by 100 times the candidates' spread (10000 when they
  are all equal), so the others keep Cinder's normalised values. That
  needs the candidates, so those requests are weighed on the candidate
  rows; host by host (the reference path) such a pool weighs the largest
  float, which keeps the order but not the other values.
* AllocatedCapacityWeigher weighs the capacity allocated on the pool
  (Gantt's ``DISK_GB`` allocations); its default multiplier, -1.0,
  prefers the least allocated.

Both normalise over the observed values, as Cinder does.
"""

import sys

import numpy as np

from gantt.scheduler.pipeline import pools
from gantt.scheduler.pipeline import weighers

GROUP = "volume_scheduler"
OFFSET_MIN = 10000
OFFSET_MULT = 100


def _finite_top(values):
    """Cinder's stand-in for +inf among ``values`` (an array)."""
    infinite = np.isinf(values)
    if not infinite.any():
        return values
    finite = values[~infinite]
    if not finite.size:
        return np.zeros_like(values)
    offset = (finite.max() - finite.min()) * OFFSET_MULT
    top = finite.max() + (OFFSET_MIN if offset == 0.0 else offset)
    return np.where(infinite, top, values)


class VolumeWeigher(weighers.BaseWeigher):
    """A weigher of volume backends, its multiplier in ``[volume_scheduler]``.
    """

    multiplier_group = GROUP
    provider_kinds = frozenset({"volume"})


class CapacityWeigher(VolumeWeigher):
    name = "CapacityWeigher"
    multiplier_option = "capacity_weight_multiplier"

    def _raw(self, table, request, found=None):
        return pools.free_weights(table, pools.thin_requested(request),
                                  self.config_multiplier(), found)

    def weigh_host(self, host, request):
        value = float(self._raw(pools.of_host(host), request))
        return sys.float_info.max if np.isinf(value) else value

    def weigh_columns(self, view, request, rows):
        raw = self._raw(pools.columns(view), request, pools.view_factors(
            view, pools.thin_requested(request)))
        if isinstance(rows, slice):
            # an infinite pool's stand-in depends on the candidates: let
            # the runner ask again with their rows
            return None if np.isinf(raw).any() else raw
        return _finite_top(raw[rows])


class AllocatedCapacityWeigher(VolumeWeigher):
    name = "AllocatedCapacityWeigher"
    multiplier_option = "allocated_capacity_weight_multiplier"

    def weigh_host(self, host, request):
        return float(pools.of_host(host).provisioned)

    def weigh_columns(self, view, request, rows):
        return pools.columns(view).provisioned[rows]
