"""One world through both sides, the checks, and the known deviations.

For each request of a world:

* every filter alone over every host (Nova's ``filter_all`` against
  Gantt's ``FilterRunner`` of that one filter): the same pass set;
  Gantt's ``AvailabilityZoneFilter`` is held against Nova 34's
  ``map_az_to_placement_aggregate`` request filter (Nova has no such
  filter any more) and ``ResourceFilter`` against Placement's rule;
* the default chain (Gantt's ``enabled_filters`` default): Gantt's
  candidates step and filters against Nova's filters of the same names
  over the hosts Placement would return (capacity, not disabled, zone);
* each weigher's part (multiplier x normalised value) per host, over the
  hosts both chains passed (every host when fewer than two did), then
  the totals, the best hosts and the order of the weights.

A difference is *expected* only when one entry of :data:`deviations.DEVIATIONS`
covers it; every entry must cover a difference of the run, or the test
says it is stale.
"""

import dataclasses
import functools
import os

from gantt import exception
from gantt.conf import filter_scheduler
from gantt.tests.nova_diff import deviations
from gantt.tests.nova_diff import gantt_side
from gantt.tests.nova_diff import nova_side
from gantt.tests.nova_diff import requests
from gantt.tests.nova_diff import worlds

#: filters that are the same Nova class on both sides
NOVA_FILTERS = (
    "AllHostsFilter", "ComputeFilter", "ServerGroupAffinityFilter",
    "ServerGroupAntiAffinityFilter", "SameHostFilter", "DifferentHostFilter",
    "SimpleCIDRAffinityFilter", "ComputeCapabilitiesFilter",
    "AggregateImagePropertiesIsolation",
    "AggregateInstanceExtraSpecsFilter", "AggregateIoOpsFilter",
    "AggregateMultiTenancyIsolation", "AggregateNumInstancesFilter",
    "AggregateTypeAffinityFilter", "ImagePropertiesFilter", "IoOpsFilter",
    "IsolatedHostsFilter", "JsonFilter", "MetricsFilter",
    "NUMATopologyFilter", "NumInstancesFilter", "PciPassthroughFilter")
#: Gantt filters held against what Nova has instead of a filter
ZONE, RESOURCES = "AvailabilityZoneFilter", "ResourceFilter"
#: Gantt filters Nova has no counterpart of, which Nova's requests never
#: make apply (policies per level of the datacenter)
GANTT_ONLY = ("ServerGroupTopologyFilter",)
CHAIN = tuple(filter_scheduler.DEFAULT_FILTERS)
REQUESTS = int(os.environ.get("GANTT_NOVA_DIFF_REQUESTS", "4"))
#: relative tolerance of weights (both sides use doubles; the order of
#: the operations differs)
TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class Difference:
    kind: str           # filter, chain, weigher, total, best, order
    name: str           # the filter or weigher; "default chain"...
    host: str | None
    nova: object
    gantt: object

    def __str__(self):
        where = " on %s" % self.host if self.host else ""
        return "%s %s%s: nova=%s gantt=%s" % (self.kind, self.name, where,
                                              self.nova, self.gantt)


@dataclasses.dataclass
class CaseOutcome:
    seed: int
    index: int
    world: object
    request: object
    differences: list
    expected: list
    unexpected: list
    covered: set            # indexes into deviations.DEVIATIONS
    passed: dict            # filter -> hosts Nova passed (for coverage)
    weighed: dict           # weigher -> some host's part was non-zero
    chain_left: int         # hosts both default chains passed

    @property
    def label(self):
        return "w%d-r%d" % (self.seed, self.index)

    def report(self):
        lines = ["%s: %d unexpected difference(s)" % (
            self.label, len(self.unexpected))]
        lines += ["  " + str(d) for d in self.unexpected]
        lines.append(worlds.describe(self.world, self.request))
        return "\n".join(lines)


def _sets(kind, name, nova, gantt, hosts):
    return [Difference(kind, name, h, h in nova, h in gantt)
            for h in hosts if (h in nova) != (h in gantt)]


def _close(a, b):
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def _ranks(totals):
    """The hosts grouped by equal weight, best first."""
    groups = []
    for host, weight in sorted(totals.items(), key=lambda kv: -kv[1]):
        if groups and _close(groups[-1][0], weight):
            groups[-1][1].add(host)
        else:
            groups.append((weight, {host}))
    return [sorted(hosts) for _w, hosts in groups]


class Sides:
    """One world loaded on both sides."""

    def __init__(self, world):
        self.world = world
        self.hosts = [h.name for h in world.hosts]
        self.nova = nova_side.NovaWorld(
            world, [f for f in NOVA_FILTERS if f in nova_side.FILTERS])
        self.gantt_filters = [f for f in NOVA_FILTERS + (ZONE, RESOURCES)
                              if f in gantt_side.FILTERS]
        self.gantt = gantt_side.GanttWorld(world, self.gantt_filters)
        self.states = self.nova.host_states()

    def close(self):
        self.nova.close()

    def nova_passes(self, name, spec, req):
        if name == ZONE:
            return self.nova.zone(self.states, spec)
        if name == RESOURCES:
            wanted, _required, _forbidden = nova_side.placement_query(spec)
            return {h.name for h in self.world.hosts
                    if nova_side.placement_fits(h, wanted)}
        return self.nova.passes(name, self.states, spec)

    def filters(self, spec, req, request, view, out):
        diffs = []
        for name in NOVA_FILTERS + (ZONE, RESOURCES):
            if name not in self.gantt_filters:
                diffs.append(Difference("filter", name, None, "a filter",
                                        "no such plugin"))
                continue
            nova = self.nova_passes(name, spec, req)
            out[name] = nova
            diffs += _sets("filter", name, nova,
                           self.gantt.passes(name, request, view),
                           self.hosts)
        return diffs

    def chain(self, spec, req, request, view):
        placed = self.nova_passes(RESOURCES, spec, req) & (
            self.nova_passes(ZONE, spec, req)) & self.nova.members(
                self.states, spec.requested_destination)
        if req.dest_cell is not None and not req.cross_cell:
            # Nova reads the hosts of the requested cell only
            placed &= {h.name for h in self.world.hosts
                       if h.cell == req.dest_cell}
        _wanted, required, forbidden = nova_side.placement_query(spec)
        placed &= {h.name for h in self.world.hosts
                   if nova_side.placement_traits(h, required, forbidden)}
        names = [n for n in CHAIN if n not in (ZONE, RESOURCES) + GANTT_ONLY]
        nova = self.nova.chain(
            names, [s for s in self.states if s.host in placed], spec)
        gantt = self.gantt.chain(CHAIN, request, view)
        return nova, gantt, _sets("chain", "default chain", nova, gantt,
                                  self.hosts)

    def weighers(self, spec, request, view, hosts, weighed):
        states = [s for s in self.states if s.host in hosts]
        nova_parts, nova_totals = self.nova.parts(states, spec)
        gantt_parts, gantt_totals = self.gantt.parts(request, view, hosts)
        diffs = []
        for name, parts in nova_parts.items():
            weighed[name] = any(v != 0 for v in parts.values())
            theirs = gantt_parts.get(name)
            if theirs is None:
                diffs.append(Difference("weigher", name, None, "a weigher",
                                        "no such plugin"))
                continue
            diffs += [Difference("weigher", name, h, parts[h], theirs[h])
                      for h in sorted(hosts)
                      if not _close(parts[h], theirs[h])]
        diffs += [Difference("total", "weight", h, nova_totals[h],
                             gantt_totals[h]) for h in sorted(hosts)
                  if not _close(nova_totals[h], gantt_totals[h])]
        nova_ranks, gantt_ranks = _ranks(nova_totals), _ranks(gantt_totals)
        if nova_ranks[0] != gantt_ranks[0]:
            diffs.append(Difference("best", "best hosts", None,
                                    nova_ranks[0], gantt_ranks[0]))
        if nova_ranks != gantt_ranks:
            diffs.append(Difference("order", "weighed order", None,
                                    nova_ranks, gantt_ranks))
        return diffs

    def validate(self, req):
        """``(spec, request, view, differences)``: both sides' request
        objects, or a difference when only one side refuses it (both
        refusing: Nones and no difference)."""
        spec = request = view = None
        try:
            spec = self.nova.spec(req)
        except nova_side.REFUSED as exc:
            nova = "refused (%s)" % type(exc).__name__
        else:
            nova = "accepted"
        try:
            request, view = self.gantt.request(req)
        except exception.InvalidRequest as exc:
            gantt = "refused (%s)" % exc
        else:
            gantt = "accepted"
        diffs = []
        if (spec is None) != (request is None):
            diffs.append(Difference("request", "validation", None, nova,
                                    gantt))
        if spec is None or request is None:
            return None, None, None, diffs
        return spec, request, view, diffs

    def case(self, seed, index, req):
        spec, request, view, diffs = self.validate(req)
        if spec is None:
            return classify(CaseOutcome(
                seed=seed, index=index, world=self.world, request=req,
                differences=diffs, expected=[], unexpected=[],
                covered=set(), passed={}, weighed={}, chain_left=0))
        passed, weighed = {}, {}
        diffs += self.filters(spec, req, request, view, passed)
        nova_chain, gantt_chain, chain_diffs = self.chain(
            spec, req, request, view)
        diffs += chain_diffs
        both = nova_chain & gantt_chain
        # weighers weigh any hosts: when the chain leaves fewer than two
        # (the generated requests are picky), all of them
        diffs += self.weighers(spec, request, view,
                               both if len(both) >= 2 else set(self.hosts),
                               weighed)
        return classify(CaseOutcome(
            seed=seed, index=index, world=self.world, request=req,
            differences=diffs, expected=[], unexpected=[], covered=set(),
            passed=passed, weighed=weighed, chain_left=len(both)))


#: kinds of difference an entry of deviations.DEVIATIONS may cover; the others
#: (chain, total, best, order) follow from them
PRIMARY = ("request", "filter", "weigher")


def classify(outcome):
    """Split the differences into expected (a deviation covers them, or
    they follow from one that does) and unexpected."""
    explained_hosts, explained_weights = set(), False
    for diff in outcome.differences:
        if diff.kind not in PRIMARY:
            continue
        if not _cover(outcome, diff):
            outcome.unexpected.append(diff)
            continue
        outcome.expected.append(diff)
        if diff.kind == "filter":
            explained_hosts.add(diff.host)
        elif diff.kind == "weigher":
            explained_weights = True
    for diff in outcome.differences:
        if diff.kind in PRIMARY:
            continue
        follows = (diff.host in explained_hosts if diff.kind == "chain"
                   else explained_weights)
        if not follows and diff.kind == "chain":
            follows = _cover(outcome, diff)
        (outcome.expected if follows else outcome.unexpected).append(diff)
    return outcome


def _cover(outcome, diff):
    """Whether a known deviation covers ``diff`` itself (noted in
    ``outcome.covered``)."""
    for k, dev in enumerate(deviations.DEVIATIONS):
        if dev.covers(outcome.world, outcome.request, diff):
            outcome.covered.add(k)
            return True
    return False


@functools.lru_cache(maxsize=None)
def run_world(seed, count=REQUESTS):
    """Every request of world ``seed`` through both sides (kept: the
    per-world tests and the stale-deviation check share them)."""
    world, reqs = requests.case(seed, count)
    sides = Sides(world)
    try:
        return tuple(sides.case(seed, k, req)
                     for k, req in enumerate(reqs))
    finally:
        sides.close()


def stale(outcomes):
    """The deviations no difference of ``outcomes``, nor of their own
    examples' worlds, needed."""
    examples = {dev.example[0] for dev in deviations.DEVIATIONS}
    outcomes = list(outcomes) + [o for seed in sorted(examples)
                                 for o in run_world(seed)]
    used = set().union(*(o.covered for o in outcomes))
    return [dev for k, dev in enumerate(deviations.DEVIATIONS)
            if k not in used]

