"""Soft server-group policies: members on a host, more (soft-affinity) or
fewer (soft-anti-affinity) preferred. Hard policies are filters."""

import numpy as np

from gantt.scheduler.pipeline import weighers


class _SoftAffinityWeigher(weighers.BaseWeigher):
    policy = None
    sign = 1.0

    def _group(self, request):
        group = request.instance_group
        return group if group is not None and group.policy == (
            self.policy) else None

    def constant(self, view, request):
        return self._group(request) is None

    def weigh_host(self, host, request):
        group = self._group(request)
        if group is None:
            return 0.0
        return self.sign * group.hosts.get(host.host, 0)

    def weigh_columns(self, view, request, rows):
        group = self._group(request)
        members = np.zeros(view.n)
        if group is not None:
            for host, count in group.hosts.items():
                members[view.rows_of_hosts([host])] = count
        return self.sign * members[rows]


class ServerGroupSoftAffinityWeigher(_SoftAffinityWeigher):
    name = "ServerGroupSoftAffinityWeigher"
    multiplier_option = "soft_affinity_weight_multiplier"
    policy = "soft-affinity"


class ServerGroupSoftAntiAffinityWeigher(_SoftAffinityWeigher):
    name = "ServerGroupSoftAntiAffinityWeigher"
    multiplier_option = "soft_anti_affinity_weight_multiplier"
    policy = "soft-anti-affinity"
    sign = -1.0
