"""Several zone hints: candidates in any of them, replicas spread over them.

Neutron lets a router or network name several availability zones
(``availability_zone_hints``); an HA router's bindings are then spread
over those zones, as ``AZLeastRoutersScheduler`` does, so that losing one
zone leaves the router running in another. A Gantt request says the same
with the scheduler hint ``availability_zone_hints`` (several strings):

* **candidates**: only the hosts in one of the hinted zones (a
  candidates step that always runs, counted as "not in the hinted
  zones"); a host's zone is read as AvailabilityZoneFilter reads it;
* **spread**: each instance of the request goes to a zone where the
  request has placed the fewest instances so far, among the hinted zones
  that still have a candidate; within those zones the weighers and the
  picking rule choose as usual (the least loaded agent). With N
  instances over K zones, every zone with candidates gets N // K or
  N // K + 1 of them.

The hint and the request's ``availability_zone`` are exclusive (one zone
is the ``availability_zone``). The spread is per request: a binding
added later (an agent replaced) names the zone it needs in its own
request.
"""

import collections

import numpy as np

from gantt import exception
from gantt.scheduler.pipeline.filters import availability_zone as az
from gantt.scheduler.pipeline.weighers import runner

#: the scheduler hint naming the zones
HINT = "availability_zone_hints"
_MAX_ZONE = 255


class ZoneSpread:
    """The hinted zones of one request, and how many of its instances
    each holds so far."""

    def __init__(self, zones):
        self.zones = tuple(zones)
        self.placed = collections.Counter()

    def take(self, view, row):
        """One instance of the request went to ``row``."""
        for zone in self.zones:
            if az.rows_in_zone(view, zone)[row]:
                self.placed[zone] += 1

    def clear(self):
        """Forget the instances decided so far (a batch decided again)."""
        self.placed.clear()

    def in_any(self, view):
        """The rows of ``view`` in one of the zones."""
        rows = np.zeros(view.n, dtype=bool)
        for zone in self.zones:
            rows |= az.rows_in_zone(view, zone)
        return rows

    def least_placed(self, view, rows):
        """Which of ``rows`` (candidate row numbers) are in a zone the
        request placed fewest in, among the zones those rows cover."""
        by_zone = {zone: az.rows_in_zone(view, zone)[rows]
                   for zone in self.zones}
        covered = [zone for zone, inside in by_zone.items() if inside.any()]
        if not covered:
            return np.zeros(len(rows), dtype=bool)
        fewest = min(self.placed[zone] for zone in covered)
        keep = np.zeros(len(rows), dtype=bool)
        for zone in covered:
            if self.placed[zone] == fewest:
                keep |= by_zone[zone]
        return keep


def request_fields(hints, availability_zone):
    """``{"zone_spread": ZoneSpread or None}`` from the scheduler hints.

    :raises: InvalidRequest for a hint beside ``availability_zone``, or a
        zone that is not a non-empty string of at most 255 characters
    """
    values = hints.get(HINT)
    if not values:
        return {"zone_spread": None}
    if isinstance(values, str):
        values = [values]
    if availability_zone:
        raise exception.InvalidRequest(
            reason="scheduler hint %s and availability_zone are exclusive"
                   % HINT)
    for zone in values:
        if not isinstance(zone, str) or not 0 < len(zone) <= _MAX_ZONE:
            raise exception.InvalidRequest(
                reason="scheduler hint %s takes zone names (1 to %d "
                       "characters), got %r" % (HINT, _MAX_ZONE, zone))
    return {"zone_spread": ZoneSpread(dict.fromkeys(values))}


def zone_steps(view, request):
    """The candidates step of a request with zone hints."""
    spread = request.zone_spread
    if spread is not None:
        yield "not in the hinted zones", spread.in_any(view)


def narrowed(view, weighing, spread):
    """``weighing`` kept to the candidates in the zones the request
    placed fewest in (a Weighing of rows and totals)."""
    rows, totals = weighing.rows, weighing.totals
    keep = spread.least_placed(view, rows)
    mask = np.zeros_like(weighing.mask)
    mask[rows[keep]] = True
    return runner.Weighing(mask, rows=rows[keep], totals=totals[keep])
