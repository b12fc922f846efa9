"""AvailabilityZoneFilter: the host is in the requested availability zone.

A host's zone is the ``availability_zone`` metadata of the aggregates it is
in (Nova's only source of zones), and otherwise the zone its agent reports.
The same rule serves the ``query_placement_for_availability_zone``
pre-filter.
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates

KEY = "availability_zone"


def zones_of(aggregate_zones, reported):
    """The zones a host is in (a frozenset, empty for none): the
    ``availability_zone`` values of its aggregates, else the zone its agent
    reports. ``gantt host list`` shows this too."""
    if aggregate_zones:
        return frozenset(aggregate_zones)
    return frozenset([reported]) if reported else frozenset()


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
