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
    provider_kinds = filters.COMPUTE

    def host_passes(self, host, request):
        values = aggregates.values(host, KEY)
        name = _flavor_name(request)
        return not values or any(_lists(v, name) for v in values)

    def passes_columns(self, view, request):
        name = _flavor_name(request)
        return ~aggregates.rows_with_key(view, KEY) | aggregates.rows_where(
            view, KEY, lambda v: _lists(v, name))


def _flavor_name(request):
    """The request's flavor's name; None without a flavor (a request of
    request groups only matches no ``instance_type`` list)."""
    flavor = request.spec.flavor
    return flavor.name if flavor is not None else None
