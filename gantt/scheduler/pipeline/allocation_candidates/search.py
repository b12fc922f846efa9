"""The allocation-candidates solver: the providers each group may take
from, and a depth-first search over one option per group (see the
package docstring for Placement's rules it follows).
"""

import itertools

from gantt.scheduler.pipeline.allocation_candidates.query import (
    AllocationCandidate,
)

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


def candidates(index, query, root_uuid, extra_used, seen):
    """Every candidate anchored on this tree not in ``seen`` (allocations
    seen are added to it)."""
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


def first(index, query, root_uuid, extra_used):
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
