"""One case: the same world and request asked of Placement and of Gantt.

:func:`run_case` gives an :class:`Outcome` whose ``problems`` are empty when
both sides agree:

* on feasibility (some candidate or none);
* on the set of allocations (each candidate's {provider: {class: amount}},
  compared as a set: order and repeats do not count);
* on the mappings: every mapping Gantt returns for an allocation is one
  Placement returns for it. Placement may return one allocation several
  times with different group-to-provider mappings (its answer is a set of
  allocations *and* mappings); Gantt returns each allocation once, with
  one of them;
* Gantt returns no allocation twice.

Placement's in-place summing bug (README.rst, "Intentional differences"):
when the query is exposed to it (group_policy isolate or absent, and a
class asked by the unsuffixed group and a suffixed one), Placement's answer
is taken from the same query with group_policy=none, filtered to the
candidates whose suffixed groups use pairwise distinct providers when the
policy is isolate. The literal answer is fetched as well, and
``Outcome.placement_bug`` tells whether it differs.
"""

import dataclasses

from gantt.tests.placement_diff import gantt_side
from gantt.tests.placement_diff import worlds


@dataclasses.dataclass
class Outcome:
    world: object
    request: object
    url: str
    placement: list          # canonical (allocations, mappings), as used
    gantt: list
    workarounds: tuple = ()  # of Placement's bugs worked around
    placement_literal: list | None = None  # the answer as sent, if other
    problems: list = dataclasses.field(default_factory=list)

    @property
    def feasible(self):
        return bool(self.placement)

    @property
    def placement_bug(self):
        return (self.placement_literal is not None and
                _allocs(self.placement_literal) != _allocs(self.placement))

    def report(self, limit=20):
        names = self.world.names()
        lines = [self.world.describe(), "",
                 "request: " + self.request.describe(names),
                 "GET " + self.url, ""]
        for w in self.workarounds:
            lines.append("(Placement's answer worked around its %s bug: "
                         "see README.rst)" % w)
        lines += ["problems:"] + ["  - " + p for p in self.problems]
        p_allocs, g_allocs = _allocs(self.placement), _allocs(self.gantt)
        for title, only in (("only Placement", p_allocs - g_allocs),
                            ("only Gantt", g_allocs - p_allocs)):
            lines.append("%s (%d):" % (title, len(only)))
            for allocs in sorted(only, key=sorted)[:limit]:
                lines.append("  " + render(allocs, names))
        lines.append("Placement: %d candidates (%d distinct allocations); "
                     "Gantt: %d" % (len(self.placement), len(p_allocs),
                                    len(self.gantt)))
        return "\n".join(lines)


def _allocs(cands):
    return {a for a, _ in cands}


def render(allocs, names=None, mappings=None):
    names = names or {}
    text = ", ".join(sorted("%s:%s=%d" % (names.get(rp, rp), rc, amount)
                            for rp, rc, amount in allocs))
    if mappings:
        text += "  [%s]" % ", ".join(
            "%r->%s" % (s, "+".join(sorted(names.get(u, u) for u in rps)))
            for s, rps in sorted(mappings))
    return text


def _isolated(candidate):
    """Whether ``candidate`` (from group_policy=none) meets isolate."""
    _, mappings = candidate
    used = [rps for suffix, rps in mappings if suffix]
    providers = set().union(*used) if used else set()
    return len(providers) == len(used)


def sharing_anchor_hazard(world, request):
    """Whether Placement may lose candidates to its cross-anchor dedup:
    suffixed groups next to an unsuffixed group whose every class a
    sharing provider offers (README.rst, "Intentional differences")."""
    unsuffixed = [g for g in request.groups if not g.suffix]
    if not unsuffixed or len(unsuffixed) == len(request.groups):
        return False
    offered = {rc for p in world.providers
               if worlds.SHARES in p.traits and p.aggregates
               for rc in p.inventories}
    return all(rc in offered for rc, _ in unsuffixed[0].resources)


def _per_anchor(placement, request):
    """Placement's candidates asked one anchor root at a time (each root
    carries a trait of its own: root_required on it), put together."""
    out = []
    for trait in placement.root_traits.values():
        one = dataclasses.replace(
            request, root_required=request.root_required | {trait})
        out += placement.candidates(one)
    return out


def placement_answer(placement, world, request):
    """(answer used for the comparison, literal answer or None, names of
    the bugs worked around).

    The literal answer of Placement, except for its two bugs (README.rst):
    exposed to the in-place summing, it is asked with group_policy=none
    and filtered for isolate; exposed to the cross-anchor dedup, it is
    asked one anchor root at a time.
    """
    summing = gantt_side.mutation_hazard(request)
    anchors = sharing_anchor_hazard(world, request)
    if not (summing or anchors):
        return placement.candidates(request), None, ()
    literal = placement.candidates(request)
    safe = dataclasses.replace(request, group_policy="none") if summing \
        else request
    answer = _per_anchor(placement, safe) if anchors \
        else placement.candidates(safe)
    if summing and request.group_policy == "isolate":
        answer = [c for c in answer if _isolated(c)]
    workarounds = ("in-place summing",) * summing + (
        "cross-anchor dedup",) * anchors
    return answer, literal, workarounds


def check(outcome):
    p, g = outcome.placement, outcome.gantt
    problems = outcome.problems
    if bool(p) != bool(g):
        problems.append("feasibility: Placement %s, Gantt %s" % (
            "feasible" if p else "infeasible",
            "feasible" if g else "infeasible"))
    p_allocs, g_allocs = _allocs(p), _allocs(g)
    if p_allocs != g_allocs:
        problems.append("allocation sets differ: %d only in Placement, %d "
                        "only in Gantt" % (len(p_allocs - g_allocs),
                                           len(g_allocs - p_allocs)))
    if len(g) != len(g_allocs):
        problems.append("Gantt returned %d allocations more than once"
                        % (len(g) - len(g_allocs)))
    p_pairs = set(p)
    names = outcome.world.names()
    wrong = [c for c in g if c[0] in p_allocs and c not in p_pairs]
    for allocs, mappings in wrong[:5]:
        problems.append("mapping Placement never gives: %s" % render(
            allocs, names, mappings))
    return outcome


def run_case(placement, index, world, request):
    """Both answers for ``request`` on ``world`` (already loaded in
    ``placement``; ``index`` built from it)."""
    answer, literal, workarounds = placement_answer(
        placement, world, request)
    outcome = Outcome(world, request, placement.url(request), answer,
                      gantt_side.candidates(index, request),
                      workarounds=workarounds, placement_literal=literal)
    return check(outcome)
