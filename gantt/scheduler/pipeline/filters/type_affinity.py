"""AggregateTypeAffinityFilter: aggregates reserved for some flavors.

A host whose aggregates set ``instance_type`` (a comma-separated list of
flavor names) only takes those flavors; hosts without it take any.
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

KEY = "instance_type"


def _lists(value, flavor_name):
    return flavor_name in aggregates.split(value)


class AggregateTypeAffinityFilter(filters.BaseFilter):
    name = "AggregateTypeAffinityFilter"

    def host_passes(self, host, request):
        values = aggregates.values(host, KEY)
        name = request.spec.flavor.name
        return not values or any(_lists(v, name) for v in values)

    def passes_columns(self, view, request):
        name = request.spec.flavor.name
        return ~aggregates.rows_with_key(view, KEY) | aggregates.rows_where(
            view, KEY, lambda v: _lists(v, name))
