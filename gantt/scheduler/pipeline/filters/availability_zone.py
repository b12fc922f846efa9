"""AvailabilityZoneFilter: the host is in the requested availability zone.

The zone rule itself is :mod:`gantt.zones` (the CLI applies it too); the
same filter functions serve the ``query_placement_for_availability_zone``
pre-filter.
"""

from gantt import zones
from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

KEY = zones.KEY
zones_of = zones.zones_of


def host_in_zone(host, zone):
    """Whether one host (a HostRecord) is in ``zone``."""
    return zone in zones_of(aggregates.values(host, KEY),
                            host.availability_zone)


def rows_in_zone(view, zone):
    """The rows of ``view`` in ``zone``."""
    reported = view.column("zone") == view.zone_code(zone)
    if not view.aggregates.with_key(KEY):
        return reported
    by_aggregate = aggregates.rows_with_key(view, KEY)
    return aggregates.rows_where(view, KEY, lambda v: v == zone) | (
        reported & ~by_aggregate)


class AvailabilityZoneFilter(filters.BaseFilter):
    name = "AvailabilityZoneFilter"

    def applies(self, request):
        return bool(request.availability_zone)

    def host_passes(self, host, request):
        return host_in_zone(host, request.availability_zone)

    def passes_columns(self, view, request):
        return rows_in_zone(view, request.availability_zone)
