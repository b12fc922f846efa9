"""Hard server-group policies per level of the datacenter (anti-affinity
at rack, affinity at row, max-per, spread): the hosts where the next
member may go, given where the members are. The claim checks the same
rules (:mod:`gantt.db.domains`); see doc/source/admin/topology.rst."""

import numpy as np

from gantt.scheduler.pipeline import domains
from gantt.scheduler.pipeline import filters


class ServerGroupTopologyFilter(filters.BaseFilter):
    """Every hard level policy of the request's server group holds."""

    name = "ServerGroupTopologyFilter"

    def applies(self, request):
        group = request.instance_group
        return group is not None and bool(group.hard_levels)

    def passes_columns(self, view, request):
        group = request.instance_group
        ok = np.ones(view.n, dtype=bool)
        for policy in group.hard_levels:
            ok &= domains.allowed(policy, domains.census(
                view, group, policy.level))
        return ok

    def host_passes(self, host, request):
        group = request.instance_group
        return all(bool(domains.allowed(policy, domains.census(
            group.places, group, policy.level), [host.row])[0])
            for policy in group.hard_levels)

    def explain(self, view, request, removed):
        group = request.instance_group
        reasons, left = {}, removed.copy()
        for policy in group.hard_levels:
            found = domains.census(view, group, policy.level)
            out = left & ~domains.allowed(policy, found)
            reasons.update(domains.why(policy, found, out, policy.level))
            left &= ~out
        return reasons
