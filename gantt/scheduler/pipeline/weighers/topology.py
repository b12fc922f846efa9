"""Soft server-group policies per level, by distance: a candidate near
the group's members (same host, else same rack, else same row…) weighs
more under ``soft-affinity``, a far one under ``soft-anti-affinity``.

The distance is the number of levels below the lowest level at which the
candidate's domain holds a member (0: a member's host; ``len(levels)``:
nothing in common), capped at the policy's level: under soft
anti-affinity at rack, any other rack is as good as another row.
"""

import numpy as np

from gantt.scheduler.pipeline import domains
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import topology as topology_mod


class ServerGroupDistanceWeigher(weighers.BaseWeigher):
    """Sum over the group's soft level policies of ``weight`` times the
    capped distance (negated for soft-affinity)."""

    name = "ServerGroupDistanceWeigher"
    multiplier_option = "distance_weight_multiplier"

    def constant(self, view, request):
        return _idle(request.instance_group)

    def weigh_columns(self, view, request, rows):
        group = request.instance_group
        total = np.zeros(weighers.size(view, rows))
        if _idle(group):
            return total
        levels = view.table.topology.levels
        found = domains.distances(view, group, levels, rows)
        for policy in group.soft_levels:
            cap = len(levels) - levels.index(policy.level)
            sign = -1.0 if policy.rule == topology_mod.SOFT_AFFINITY else 1.0
            total += sign * policy.weight * np.minimum(found, cap)
        return total

    def weigh_host(self, host, request):
        group = request.instance_group
        if _idle(group):
            return 0.0
        return float(self.weigh_columns(group.places, request,
                                        np.array([host.row]))[0])


def _idle(group):
    """Nothing to weigh: no group, no soft level policy or no member."""
    return group is None or not group.soft_levels or not group.hosts
