"""AvailabilityZoneFilter: the host is in the requested availability zone."""

from gantt.scheduler import filters


class AvailabilityZoneFilter(filters.BaseFilter):
    name = "AvailabilityZoneFilter"

    def applies(self, request):
        return bool(request.availability_zone)

    def host_passes(self, host, request):
        return host.availability_zone == request.availability_zone

    def passes_columns(self, view, request):
        return view.column("zone") == view.zone_code(
            request.availability_zone)
