"""Gantt's side: the same world and request through Gantt's solver.

The world becomes a :class:`gantt.scheduler.state.provider_tree.ProviderIndex`
(one ``set_tree`` per root, usage summed over the world's consumers) and the
request a
:class:`gantt.scheduler.pipeline.allocation_candidates.CandidateQuery` of
:class:`gantt.scheduler.pipeline.request.ResourceGroup`; then
``allocation_candidates`` answers, and each candidate is put in the same
canonical form as Placement's (placement_side.canonical).
"""

from gantt.scheduler.pipeline import allocation_candidates as ac
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.state import provider_tree


def build_index(world):
    index = provider_tree.ProviderIndex()
    used = world.usage()
    for root in world.roots():
        providers = []
        for p in world.tree(root.uuid):
            inventories = {
                rc: (inv.total, inv.reserved, inv.min_unit, inv.max,
                     inv.step_size, inv.allocation_ratio)
                for rc, inv in p.inventories.items()}
            providers.append(provider_tree.Provider(
                uuid=p.uuid, name=p.name, parent_uuid=p.parent,
                root_uuid=root.uuid, generation=1, inventories=inventories,
                usage=dict(used.get(p.uuid, {})), traits=p.traits,
                aggregates=p.aggregates))
        index.set_tree(root.uuid, providers)
    return index


def resource_group(g):
    """A worlds.Group as Gantt's ResourceGroup: one-trait sets become
    required traits, larger ones any-of sets."""
    return request_mod.ResourceGroup(
        suffix=g.suffix,
        resources=dict(g.resources),
        required_traits=frozenset(
            t for anyof in g.required if len(anyof) == 1 for t in anyof),
        forbidden_traits=frozenset(g.forbidden),
        any_traits=tuple(frozenset(s) for s in g.required if len(s) > 1),
        member_of=tuple(frozenset(s) for s in g.member_of),
        forbidden_aggregates=frozenset(g.forbidden_aggs),
        in_tree=g.in_tree)


def build_query(request):
    return ac.CandidateQuery(
        groups=tuple(resource_group(g) for g in request.groups),
        group_policy=request.group_policy,
        same_subtree=tuple(frozenset(s) for s in request.same_subtree),
        root_required=frozenset(request.root_required),
        root_forbidden=frozenset(request.root_forbidden))


def canonical(candidate):
    allocs = frozenset(
        (rp, rc, amount)
        for rp, amounts in candidate.allocations.items()
        for rc, amount in amounts.items())
    mappings = frozenset(
        (suffix, frozenset(rps))
        for suffix, rps in candidate.mappings.items())
    return allocs, mappings


def candidates(index, request):
    """Gantt's candidates, canonical, as a list (duplicates kept)."""
    query = build_query(request)
    return [canonical(c) for c in ac.allocation_candidates(index, query)]


def mutation_hazard(request):
    """Whether Placement's own answer may be corrupted by its in-place
    summing of shared AllocationRequestResource objects (see
    :func:`gantt.scheduler.pipeline.allocation_candidates.placement_mutation_hazard`
    and README.rst)."""
    return ac.placement_mutation_hazard(build_query(request))
