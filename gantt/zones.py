"""The availability zone rule, with nothing of the engine behind it.

A host's zone is the ``availability_zone`` metadata of the aggregates it
is in (Nova's only source of zones), and otherwise the zone its agent
reports. The AvailabilityZoneFilter, the zone pre-filter, Nova's front
door and the ``gantt`` CLI all apply it; it lives here, outside
``gantt.scheduler``, so that the CLI can show zones without importing the
scheduling engine (which costs a command a second of start-up).
"""

KEY = "availability_zone"


def zones_of(aggregate_zones, reported):
    """The zones a host is in (a frozenset, empty for none): the
    ``availability_zone`` values of its aggregates, else the zone its agent
    reports. ``gantt host list`` shows this too."""
    if aggregate_zones:
        return frozenset(aggregate_zones)
    return frozenset([reported]) if reported else frozenset()
