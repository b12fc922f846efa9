"""AggregateMultiTenancyIsolation: aggregates reserved for some projects.

A host in aggregates with ``filter_tenant_id`` metadata (or any key that
starts with it, ``filter_tenant_id2``…; values may list several projects,
comma-separated) only takes those projects' instances. Hosts in no such
aggregate take every project. (Other projects are not kept off *other*
hosts: that is the ``limit_tenants_to_placement_aggregate`` pre-filter.)
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

PREFIX = "filter_tenant_id"


class AggregateMultiTenancyIsolation(filters.BaseFilter):
    name = "AggregateMultiTenancyIsolation"

    def host_passes(self, host, request):
        allowed = set()
        for key, values in aggregates.metadata(host).items():
            if key.startswith(PREFIX):
                allowed |= values
        return not allowed or request.project_id in allowed

    def passes_columns(self, view, request):
        restricted = aggregates.rows_with_key_prefix(view, PREFIX)
        allowed = aggregates.rows_with_key_prefix(
            view, PREFIX, lambda v: request.project_id in aggregates.split(v))
        return ~restricted | allowed
