"""One allocation-candidates query, compiled: the request groups as the
solver reads them (``search.py``), checked as Placement checks a query
string (see the package docstring for the rules), and the candidate
record the solver answers with.
"""

import dataclasses

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
