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
"""

import dataclasses
import itertools

_POLICIES = (None, "none", "isolate")


@dataclasses.dataclass(frozen=True)
class CandidateQuery:
    """One ``GET /allocation_candidates`` (validated groups)."""

    groups: tuple            # of request.ResourceGroup; suffix "" unsuffixed
    group_policy: str | None = None     # "none" | "isolate"
    same_subtree: tuple = ()            # of frozensets of suffixes
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    plan: object = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "plan", _compile(self))


@dataclasses.dataclass(frozen=True)
class AllocationCandidate:
    root_uuid: str          # the tree it is anchored on
    allocations: dict       # {provider uuid: {class: amount}}
    mappings: dict          # {suffix: tuple of provider uuids}


# --------------------------------------------------------------- compile


class _Group:
    """A request group as the solver reads it."""

    __slots__ = ("suffix", "items", "required", "forbidden", "member_of",
                 "forbidden_aggs", "in_tree", "key", "amounts", "filtered")

    def __init__(self, group):
        self.suffix = group.suffix or ""
        self.items = tuple(sorted(
            (rc, amount) for rc, amount in group.resources.items()
            if amount))
        # each a set of which at least one is needed (Placement's nested
        # required list: plain required traits are one-trait sets)
        self.required = tuple(
            [frozenset([t]) for t in sorted(group.required_traits)]
            + [frozenset(s) for s in group.any_traits if s])
        self.forbidden = frozenset(group.forbidden_traits)
        self.member_of = tuple(frozenset(m) for m in group.member_of if m)
        self.forbidden_aggs = frozenset(group.forbidden_aggregates)
        self.in_tree = group.in_tree or None
        self.key = None
        self.amounts = dict(self.items)
        # whether any trait or aggregate test applies to its providers
        self.filtered = bool(self.required or self.forbidden
                             or self.member_of or self.forbidden_aggs)

    @property
    def empty(self):
        return not (self.items or self.required or self.forbidden
                    or self.member_of or self.forbidden_aggs
                    or self.in_tree)


class _Plan:
    __slots__ = ("unsuffixed", "granular", "classes", "isolate",
                 "subtrees", "root_required", "root_forbidden", "lone")


def _check_subtrees(query, suffixes):
    subtrees = tuple(frozenset(s) for s in query.same_subtree)
    for names in subtrees:
        if "" in names:
            raise ValueError("same_subtree cannot name the unsuffixed group")
        unknown = names - suffixes
        if unknown:
            raise ValueError("same_subtree names unknown groups: %s"
                             % ", ".join(sorted(unknown)))
    return subtrees


def _check_groups(unsuffixed, granular, subtrees):
    if unsuffixed is not None and not unsuffixed.items:
        raise ValueError("the unsuffixed group has no resources")
    named = frozenset().union(*subtrees)
    for g in granular:
        if not g.items and g.suffix not in named:
            raise ValueError("group %r has no resources and is in no "
                             "same_subtree" % g.suffix)
    if not (unsuffixed or any(g.items for g in granular)):
        raise ValueError("the query asks for no resources")
    for g in ([unsuffixed] if unsuffixed else []) + granular:
        for any_of in g.required:
            if any_of <= g.forbidden:
                raise ValueError("group %r requires and forbids %s"
                                 % (g.suffix, ", ".join(sorted(any_of))))


def _compile(query):
    if query.group_policy not in _POLICIES:
        raise ValueError("group_policy must be 'none' or 'isolate', not %r"
                         % (query.group_policy,))
    unsuffixed, granular, suffixes = None, [], set()
    for raw in query.groups:
        g = _Group(raw)
        if g.suffix in suffixes:
            raise ValueError("two groups have the suffix %r" % g.suffix)
        suffixes.add(g.suffix)
        if g.suffix:
            granular.append(g)
        elif not g.empty:
            unsuffixed = g
    subtrees = _check_subtrees(query, suffixes)
    _check_groups(unsuffixed, granular, subtrees)
    if query.group_policy is None and len(granular) > 1:
        raise ValueError("group_policy is needed with more than one "
                         "suffixed group")
    if query.root_required & query.root_forbidden:
        raise ValueError("root traits both required and forbidden")
    # suffixed groups alike in everything but their suffix (and named by
    # the same same_subtree sets) are interchangeable: only one order of
    # their providers needs trying
    for g in granular:
        g.key = (g.items, frozenset(g.required), g.forbidden,
                 frozenset(g.member_of), g.forbidden_aggs, g.in_tree,
                 tuple(g.suffix in names for names in subtrees))
    by_key = {}
    for g in granular:
        by_key.setdefault(g.key, []).append(g)
    plan = _Plan()
    plan.unsuffixed = unsuffixed
    plan.granular = tuple(granular)
    plan.classes = tuple(tuple(members) for members in by_key.values())
    plan.lone = unsuffixed is not None and not granular
    plan.isolate = query.group_policy == "isolate"
    plan.subtrees = subtrees
    plan.root_required = frozenset(query.root_required)
    plan.root_forbidden = frozenset(query.root_forbidden)
    return plan


def placement_mutation_hazard(query):
    """Whether Placement's own answer to ``query`` may be corrupted by its
    in-place summing (see the module docstring): group_policy isolate or
    absent, and a class asked by the unsuffixed group and a suffixed one.
    """
    plan = query.plan
    if query.group_policy == "none" or plan.unsuffixed is None:
        return False
    classes = {rc for rc, _ in plan.unsuffixed.items}
    return any(rc in classes for g in plan.granular for rc, _ in g.items)


# ------------------------------------------------------------ predicates


def _has_traits(traits, required, forbidden):
    if forbidden and not forbidden.isdisjoint(traits):
        return False
    for any_of in required:
        if any_of.isdisjoint(traits):
            return False
    return True


def _member(member_of, aggregates):
    for any_of in member_of:
        if any_of.isdisjoint(aggregates):
            return False
    return True


def _provider_ok(g, p):
    """Traits and aggregates of a group that one provider must meet."""
    if not _has_traits(p.traits, g.required, g.forbidden):
        return False
    aggs = p.aggregates
    if g.forbidden_aggs and not g.forbidden_aggs.isdisjoint(aggs):
        return False
    return not g.member_of or _member(g.member_of, aggs)


def _root_ok(plan, root):
    traits = root.traits
    return (plan.root_required <= traits
            and plan.root_forbidden.isdisjoint(traits))


def _items_on(p, items, extra):
    """``((uuid, rc), amount, free, max_unit)`` per item, or None when one
    does not fit on ``p``: min_unit, max_unit and step_size on the amount,
    capacity on usage (plus ``extra``) + amount."""
    limits = p.limits
    usage = p.usage
    mine = extra.get(p.uuid) if extra else None
    out = []
    for rc, amount in items:
        lim = limits.get(rc)
        if lim is None:
            return None
        cap, min_unit, max_unit, step = lim
        free = cap - usage.get(rc, 0)
        if mine:
            free -= mine.get(rc, 0)
        if not (min_unit <= amount <= max_unit and amount % step == 0
                and amount <= free):
            return None
        out.append(((p.uuid, rc), amount, free, max_unit))
    return out


# ------------------------------------------------------------ lone root


def _lone(plan, root, extra, index):
    """The one candidate of a lone root asked only an unsuffixed group."""
    g = plan.unsuffixed
    if g.in_tree is not None:
        target = index.get(g.in_tree)
        if target is None or target.root_uuid != root.uuid:
            return None
    if g.filtered and not _provider_ok(g, root):
        return None
    limits = root.limits
    usage = root.usage
    mine = extra.get(root.uuid) if extra else None
    for rc, amount in g.items:
        lim = limits.get(rc)
        if lim is None:
            return None
        cap, min_unit, max_unit, step = lim
        used = usage.get(rc, 0)
        if mine:
            used += mine.get(rc, 0)
        if not (min_unit <= amount <= max_unit and amount % step == 0
                and used + amount <= cap):
            return None
    return AllocationCandidate(root.uuid, {root.uuid: g.amounts.copy()},
                               {"": (root.uuid,)})


def _lone_case(plan, index, root_uuid):
    return plan.lone and index.is_simple(root_uuid)


# ---------------------------------------------------------- group options


def _unsuffixed_pool(index, g, root, tree, sharing):
    """The providers the unsuffixed group may take from for this anchor:
    traits it forbids, aggregates (member_of, forbidden) and in_tree as in
    1. of the module docstring; resources and required traits are the
    caller's."""
    if g.in_tree is not None:
        target = index.get(g.in_tree)
        if target is None or target.root_uuid != root.uuid:
            return []
        sharing = ()
    if g.forbidden_aggs and not g.forbidden_aggs.isdisjoint(
            root.aggregates):
        return []
    root_member = not g.member_of or _member(g.member_of, root.aggregates)
    pool = []
    for p, outside in itertools.chain(
            ((p, False) for p in tree), ((p, True) for p in sharing)):
        if g.forbidden and not g.forbidden.isdisjoint(p.traits):
            continue
        if g.forbidden_aggs and not g.forbidden_aggs.isdisjoint(
                p.aggregates):
            continue
        if g.member_of and not _member(g.member_of, p.aggregates) and (
                outside or not root_member):
            continue
        pool.append(p)
    return pool


def _unsuffixed_options(index, g, root, tree, sharing, extra):
    """Every way (one provider per class) the unsuffixed group fits:
    ``[(mapped uuids, items)]``."""
    pool = _unsuffixed_pool(index, g, root, tree, sharing)
    per_class = []
    for rc, amount in g.items:
        choices = []
        for p in pool:
            item = _items_on(p, ((rc, amount),), extra)
            if item is not None:
                choices.append((p, item[0]))
        if not choices:
            return []
        per_class.append(choices)
    options = []
    for combo in itertools.product(*per_class):
        providers = {}
        for p, _ in combo:
            providers.setdefault(p.uuid, p)
        if g.required:
            traits = frozenset().union(
                *(p.traits for p in providers.values()))
            if not _has_traits(traits, g.required, None):
                continue
        options.append((tuple(providers), tuple(i for _, i in combo)))
    return options


def _granular_options(index, g, tree, sharing, extra):
    """Every provider the suffixed group fits on whole:
    ``[((uuid,), items)]``."""
    if not g.items and not (g.required or g.member_of):
        return []
    in_root = None
    if g.in_tree is not None:
        target = index.get(g.in_tree)
        if target is None:
            return []
        # a resourceless group's in_tree is not applied (module doc, 2.)
        in_root = target.root_uuid if g.items else None
    options = []
    filtered = g.filtered
    for p in itertools.chain(tree, sharing) if sharing else tree:
        if in_root is not None and p.root_uuid != in_root:
            continue
        if filtered and not _provider_ok(g, p):
            continue
        items = _items_on(p, g.items, extra)
        if items is not None:
            options.append(((p.uuid,), items))
    return options


# --------------------------------------------------------------- combine


class _Search:
    """Depth-first over one option per group, pruned as it goes."""

    def __init__(self, plan, root_uuid, steps, lookup):
        self.plan = plan
        self.root_uuid = root_uuid
        # (group, options, same class as the step before, granular)
        self.steps = steps
        self.lookup = lookup          # uuid -> Provider, for ancestry
        self.sums = {}                # (uuid, rc) -> amount so far
        self.chosen = [None] * len(steps)
        self.picked = [0] * len(steps)
        self.taken = set()            # providers of suffixed groups
        self.position = {g.suffix: i for i, (g, _, _, _) in enumerate(steps)}
        # same_subtree sets, checked once their last group is placed
        self.checks = [[] for _ in steps]
        for names in plan.subtrees:
            last = max(self.position[s] for s in names)
            self.checks[last].append(names)
        self.ancestry = {}

    def _place(self, items):
        sums = self.sums
        done = []
        for key, amount, free, max_unit in items:
            total = sums.get(key, 0) + amount
            if total > free or total > max_unit:
                self._unplace(done)
                return None
            sums[key] = total
            done.append((key, amount))
        return done

    def _unplace(self, done):
        sums = self.sums
        for key, amount in done:
            left = sums[key] - amount
            if left:
                sums[key] = left
            else:
                del sums[key]

    def _ancestors(self, uuid):
        chain = self.ancestry.get(uuid)
        if chain is None:
            found = []
            p = self.lookup(uuid)
            while p is not None:
                found.append(p.uuid)
                p = (self.lookup(p.parent_uuid)
                     if p.parent_uuid is not None else None)
            chain = self.ancestry[uuid] = frozenset(found)
        return chain

    def _same_subtree(self, names):
        uuids = set()
        for suffix in names:
            uuids.update(self.chosen[self.position[suffix]])
        if len(uuids) == 1:
            return True
        common = frozenset.intersection(*map(self._ancestors, uuids))
        return not common.isdisjoint(uuids)

    def _start(self, i):
        """The first option index step ``i`` may take."""
        if not self.steps[i][2]:
            return 0
        before = self.picked[i - 1]
        return before + 1 if self.plan.isolate else before

    def _enter(self, i, k):
        """Place option ``k`` of step ``i``: what to undo, or None when it
        does not fit with the steps before."""
        _, options, _, granular = self.steps[i]
        mapped, items = options[k]
        isolate = granular and self.plan.isolate
        if isolate and mapped[0] in self.taken:
            return None
        done = self._place(items)
        if done is None:
            return None
        self.chosen[i] = mapped
        self.picked[i] = k
        for names in self.checks[i]:
            if not self._same_subtree(names):
                self._unplace(done)
                return None
        if isolate:
            self.taken.add(mapped[0])
        return done

    def _leave(self, i, done):
        if self.steps[i][3] and self.plan.isolate:
            self.taken.discard(self.chosen[i][0])
        self._unplace(done)

    def run(self, i=0):
        """Yield ``self.sums`` at every complete placement."""
        if i == len(self.steps):
            yield self.sums
            return
        for k in range(self._start(i), len(self.steps[i][1])):
            done = self._enter(i, k)
            if done is not None:
                yield from self.run(i + 1)
                self._leave(i, done)

    def first(self, i=0):
        """Stop at the first complete placement (True), or False."""
        if i == len(self.steps):
            return True
        for k in range(self._start(i), len(self.steps[i][1])):
            done = self._enter(i, k)
            if done is not None:
                if self.first(i + 1):
                    return True
                self._leave(i, done)
        return False

    def candidate(self):
        allocations = {}
        for (uuid, rc), amount in self.sums.items():
            allocations.setdefault(uuid, {})[rc] = amount
        mappings = {g.suffix: self.chosen[i]
                    for i, (g, _, _, _) in enumerate(self.steps)}
        return AllocationCandidate(self.root_uuid, allocations, mappings)


def _steps(index, plan, tree, extra):
    """The search steps of one tree, or None when a group cannot fit."""
    root = tree[0]
    sharing = index.sharing_for(root.uuid)
    steps = []
    if plan.unsuffixed is not None:
        options = _unsuffixed_options(index, plan.unsuffixed, root, tree,
                                      sharing, extra)
        if not options:
            return None
        steps.append((plan.unsuffixed, options, False, False))
    classes = []
    for members in plan.classes:
        options = _granular_options(index, members[0], tree, sharing, extra)
        if not options:
            return None
        classes.append((len(options), members, options))
    # fewest choices first: a dead end shows sooner
    classes.sort(key=lambda c: c[0])
    for _, members, options in classes:
        for j, g in enumerate(members):
            steps.append((g, options, j > 0, True))
    return steps


def _solve(index, plan, tree, extra, seen):
    steps = _steps(index, plan, tree, extra)
    if steps is None:
        return
    root_uuid = tree[0].uuid
    search = _Search(plan, root_uuid, steps, index.get)
    for sums in search.run():
        key = frozenset(sums.items())
        if key not in seen:
            seen.add(key)
            yield search.candidate()


def _candidates(index, query, root_uuid, extra_used, seen):
    plan = query.plan
    tree = index.tree(root_uuid)
    if not tree or not _root_ok(plan, tree[0]):
        return
    if _lone_case(plan, index, root_uuid):
        cand = _lone(plan, tree[0], extra_used, index)
        if cand is not None:
            key = frozenset(((root_uuid, rc), a)
                            for rc, a in plan.unsuffixed.items)
            if key not in seen:
                seen.add(key)
                yield cand
        return
    yield from _solve(index, plan, tree, extra_used, seen)


# ---------------------------------------------------------------- public


def iter_candidates(index, query, root_uuid, extra_used=None):
    """Lazily yield every distinct candidate anchored on this tree.

    :param extra_used: optional ``{provider uuid: {class: amount}}``
        counted as used on top of ``Provider.usage`` (in-flight claims)
    """
    return _candidates(index, query, root_uuid, extra_used, set())


def first_candidate(index, query, root_uuid, extra_used=None):
    """The first candidate anchored on this tree, or None."""
    plan = query.plan
    tree = index.tree(root_uuid)
    if not tree or not _root_ok(plan, tree[0]):
        return None
    if _lone_case(plan, index, root_uuid):
        return _lone(plan, tree[0], extra_used, index)
    steps = _steps(index, plan, tree, extra_used)
    if steps is None:
        return None
    search = _Search(plan, root_uuid, steps, index.get)
    return search.candidate() if search.first() else None


def allocation_candidates(index, query, roots=None):
    """All candidates over all trees (default ``index.roots()``),
    distinct by allocations, sharing providers' own roots included."""
    seen = set()
    out = []
    for root_uuid in (index.roots() if roots is None else roots):
        out.extend(_candidates(index, query, root_uuid, None, seen))
    return out
