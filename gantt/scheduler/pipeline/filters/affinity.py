"""Server-group and instance-hint placement rules (hard policies).

Soft policies are weighers. The hard ones are also enforced inside the
claim transaction, because the member list a filter sees can be stale when
several workers place members of one group at the same time.
"""

from gantt.scheduler.pipeline import filters


class ServerGroupAntiAffinityFilter(filters.BaseFilter):
    """At most ``max_server_per_host`` members of the group per host (1
    unless the group's rules say otherwise)."""

    name = "ServerGroupAntiAffinityFilter"

    def applies(self, request):
        group = request.instance_group
        return group is not None and group.policy == "anti-affinity"

    def host_passes(self, host, request):
        group = request.instance_group
        return group.hosts.get(host.host, 0) < group.max_per_host

    def passes_columns(self, view, request):
        group = request.instance_group
        full = [h for h, count in group.hosts.items()
                if count >= group.max_per_host]
        return ~view.rows_of_hosts(full)


class ServerGroupAffinityFilter(filters.BaseFilter):
    """Once a member is placed, every other member goes to the same host."""

    name = "ServerGroupAffinityFilter"

    def applies(self, request):
        group = request.instance_group
        return (group is not None and group.policy == "affinity"
                and bool(group.hosts))

    def host_passes(self, host, request):
        return host.host in request.instance_group.hosts

    def passes_columns(self, view, request):
        return view.rows_of_hosts(request.instance_group.hosts)


class SameHostFilter(filters.BaseFilter):
    """``same_host`` hint: only hosts running one of the given instances."""

    name = "SameHostFilter"

    def applies(self, request):
        return request.same_host is not None

    def host_passes(self, host, request):
        return host.host in request.same_host

    def passes_columns(self, view, request):
        return view.rows_of_hosts(request.same_host)


class DifferentHostFilter(filters.BaseFilter):
    """``different_host`` hint: no host running one of the instances."""

    name = "DifferentHostFilter"

    def applies(self, request):
        return request.different_host is not None

    def host_passes(self, host, request):
        return host.host not in request.different_host

    def passes_columns(self, view, request):
        return ~view.rows_of_hosts(request.different_host)
