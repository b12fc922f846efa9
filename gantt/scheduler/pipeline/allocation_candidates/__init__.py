"""Allocation candidates, in memory, with Placement's semantics.

This answers what Placement answers with ``GET /allocation_candidates``
(microversion 1.39) over a :class:`provider_tree.ProviderIndex`: every
way to take a request's groups from one provider tree plus the sharing
providers that serve it. The feasible *set* of allocation requests is
Placement's; the order is not.

Each rule below is the one Placement implements; the references are to
openstack/placement: ``ac.py`` is placement/objects/allocation_candidate.py,
``rc.py`` placement/objects/research_context.py, ``rpc.py``
placement/objects/rp_candidates.py, ``lib.py`` placement/lib.py and
``tree doc`` doc/source/user/provider-tree.rst.

Anchors. Every candidate is anchored on the root of one tree; Placement
merges the groups' answers per anchor (``_merge_candidates`` in ac.py), so
all groups of a candidate share the anchor. The providers a group may use
for anchor R are R's tree plus the *sharing providers serving R*: those
with trait MISC_SHARES_VIA_AGGREGATE that are in an aggregate with *any*
provider of R's tree, root or child (``anchors_for_sharing_providers`` in
rc.py; tree doc: "shared by the whole tree if one of the resource
providers from the tree is connected"). A pool without the trait is never
shared. A sharing provider is a tree of its own too, so candidates anchored
on it are found when its root is solved (``allocation_candidates`` solves
every root).

1. Unsuffixed group (``use_same_provider=False``; ``get_trees_matching_all``
   in rc.py and ``_alloc_candidates_multiple_providers`` in ac.py):

   * each resource class comes whole from one provider (product over one
     provider per class), of R's tree or a sharing provider serving R;
     different classes may come from different providers;
   * required traits and any-of traits are met by the *union* of the
     traits of the providers that supply the group's resources, and no
     such provider may have a forbidden trait
     (``_check_traits_for_alloc_request``); providers supplying nothing
     (the root, when its children supply all) do not count;
   * member_of (each any-of list ANDed) holds for a provider of the tree
     when the provider itself *or the tree's root* is in an aggregate of
     every list (``filter_by_rp_or_tree`` in rpc.py: "aggregate on root
     spans the whole tree"), checking the provider and the root each on
     its own; a sharing provider from outside must be in them itself
     (``get_rps_with_shared_capacity``);
   * forbidden aggregates: neither the provider nor the anchor root may
     be in one (``filter_by_rp_nor_tree``): a root in a forbidden
     aggregate leaves its tree without candidates;
   * in_tree: only providers of that provider's tree, no sharing
     providers, so only that tree's root anchors (``tree_root_id`` skips
     the sharing step in ``get_trees_matching_all``); an unknown uuid
     means no candidates at all;
   * a group with no resources cannot be sent: since 1.36 a resourceless
     group must be named in same_subtree and the unsuffixed group cannot
     be (``RequestWideParams.from_request``, lib.py); such a query is a
     ValueError here (an unsuffixed group with nothing at all in it is
     just absent, as it is from Placement's query string).

2. Suffixed groups (``use_same_provider=True``; ``get_provider_ids_matching``
   and ``_alloc_candidates_single_provider``): one provider supplies all
   the group's resources and itself has the required and any-of traits,
   none of the forbidden ones, is in every member_of list and in no
   forbidden aggregate: its *own* aggregates only, the root's do not count
   (tree doc: "if member_of<N> is specified in granular requests, the API
   doesn't assume that an aggregate on a root provider spans the whole
   tree"). The provider anchors on its own root and, when it is a sharing
   provider, on every root it serves. in_tree<N> restricts the provider to
   that provider's tree; a sharing provider picked so still serves the
   other trees (tree doc, "in_tree1=<SS1 uuid>" example).

   Resourceless suffixed groups (1.36+, only inside same_subtree, lib.py)
   map to one provider chosen by the same trait/aggregate rules and
   allocate nothing (``_allocation_request_for_provider``: empty
   resource_requests, the provider in mappings). As Placement does, such a
   group matches nothing unless it has required (or any-of) traits or
   member_of (``get_provider_ids_for_traits_and_aggs`` filters nothing
   then, and ``get_provider_ids_matching`` keeps only the filtered set),
   and its in_tree is not applied (only the uuid must exist:
   ``get_providers_with_root`` takes no tree).

3. group_policy (``_satisfies_group_policy``): "isolate" makes the
   suffixed groups (resourceless ones included) use pairwise distinct
   providers; the unsuffixed group is not involved and may share a
   provider with any of them. "none" and no policy filter nothing.
   Placement refuses (400) more than one suffixed group without a policy:
   ValueError here.

4. same_subtree (``_satisfies_same_subtree``, ``_check_same_subtree``):
   for each listed set of suffixes, take the providers those groups map
   to; a lone provider passes; otherwise one of them must be an ancestor
   (or itself) of all the others. Every suffix must name a group and the
   unsuffixed group may not be named (lib.py): ValueError here.

5. root_required / root_forbidden (``_process_anchor_traits``,
   ``_get_roots_with_traits``, ``in_filtered_anchors``): the anchor root
   must have every required trait and none of the forbidden ones. For a
   sharing provider used by a tree, the anchor is the tree's root, not the
   sharing provider (tree doc: "applies only to the root of the
   non-sharing provider tree"); a candidate anchored on a sharing provider
   checks the sharing provider's own traits, being its root.

6. in_tree: see 1 and 2. An in_tree naming an unknown provider empties
   the answer (``RequestGroupSearchContext`` raises
   ResourceProviderNotFound).

7. Amounts (``_capacity_check_clause`` in rc.py per group,
   ``_consolidate_allocation_requests`` and ``exceeds_capacity`` on the
   merge): each group's amount of a class is checked alone against
   min_unit, max_unit, step_size and capacity (usage + amount <=
   int((total - reserved) * allocation_ratio)). When several groups land
   on one provider for one class the amounts are summed and the sum is
   checked again against capacity (usage + sum) and max_unit only;
   min_unit and step_size are not checked on the sum.

8. Placement collects merged requests in a set and, since its equality
   takes the mappings in, the same allocations reached through different
   group-to-provider mappings can come back more than once; the same
   allocations anchored on different roots (a sharing pool alone) come
   back once. Here candidates are distinct by allocations: within a tree
   (:func:`iter_candidates`) and across trees
   (:func:`allocation_candidates`), the first mapping found kept.
   Candidates made only of sharing providers are found both from the
   trees they serve and from the pool's own root.

Placement behaviour not reproduced (see :func:`placement_mutation_hazard`):
with group_policy "isolate" or absent, ``copy_arr_if_needed`` (rc.py) does
not copy the AllocationRequestResource it sums into, so when the
unsuffixed group and a suffixed group take the same class from the same
provider, Placement adds one group's amount into an object that its other
candidates share, and its answer reports inflated amounts that depend on
the order it walks its sets (which may vary with the hash seed). This
solver returns the correct sums instead.

Other differences: Placement answers 400 for a trait (required, forbidden
or root) or a resource class it does not know; here such a trait is only
one no provider has. ``limit``, provider summaries and the order of the
answer are not produced.

The package: ``query.py`` compiles and checks a :class:`CandidateQuery`,
``search.py`` solves it over one tree; the functions here are the API.
"""

from gantt.scheduler.pipeline.allocation_candidates import search
from gantt.scheduler.pipeline.allocation_candidates.query import (
    AllocationCandidate,
)
from gantt.scheduler.pipeline.allocation_candidates.query import CandidateQuery
from gantt.scheduler.pipeline.allocation_candidates.query import (
    placement_mutation_hazard,
)

__all__ = ["AllocationCandidate", "CandidateQuery", "allocation_candidates",
           "first_candidate", "iter_candidates", "placement_mutation_hazard"]


def iter_candidates(index, query, root_uuid, extra_used=None):
    """Lazily yield every distinct candidate anchored on this tree.

    :param extra_used: optional ``{provider uuid: {class: amount}}``
        counted as used on top of ``Provider.usage`` (in-flight claims)
    """
    return search.candidates(index, query, root_uuid, extra_used, set())


def first_candidate(index, query, root_uuid, extra_used=None):
    """The first candidate anchored on this tree, or None."""
    return search.first(index, query, root_uuid, extra_used)


def allocation_candidates(index, query, roots=None):
    """All candidates over all trees (default ``index.roots()``),
    distinct by allocations, sharing providers' own roots included."""
    seen = set()
    out = []
    for root_uuid in (index.roots() if roots is None else roots):
        out.extend(search.candidates(index, query, root_uuid, None, seen))
    return out
