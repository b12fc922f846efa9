"""The in-memory resource provider model the allocation-candidates solver
reads: provider trees (a compute node root and its children) and sharing
providers, as Placement stores them.

A :class:`Provider` is immutable. :class:`ProviderIndex` holds every
provider a worker knows, its trees by root and its sharing providers by
aggregate.

Thread safety: one writer at a time (the caller holds a lock), readers
without any lock. Writers never change a published :class:`Provider` nor a
published tree tuple: they build new ones and swap the reference in with
one dict item assignment. The big lookup dicts (``uuid -> Provider``,
``root -> tree``) are only changed one key at a time, each change a single
atomic dict operation, and no reader ever runs a Python-level loop over
them: readers look keys up, or take a snapshot of the keys with one C-level
call (``list(d)``) that no other thread can interleave with. The small
containers readers do loop over (the sharing providers of an aggregate, the
aggregates holding a sharing provider) are frozensets, rebuilt and swapped.

Sharing (Placement's rules, see placement/objects/research_context.py):

* a provider shares its inventory when it has the
  ``MISC_SHARES_VIA_AGGREGATE`` trait (``get_sharing_providers``); a pool
  without that trait shares nothing, whatever its aggregates;
* a sharing provider serves every tree that has *any* provider (root or
  child) in one of the sharing provider's aggregates
  (``anchors_for_sharing_providers`` joins the sharing provider's
  aggregates to every provider in them and takes that provider's root);
  the provider-tree user doc says the same: "sharing providers are shared
  by the whole tree if one of the resource providers from the tree is
  connected to the sharing provider via an aggregate".
"""

import dataclasses
import threading

SHARES_VIA_AGGREGATE = "MISC_SHARES_VIA_AGGREGATE"

_EMPTY = frozenset()


class _InventoryLimits:
    """``inventories -> (the canonical inventories dict, its limits)``:
    equal inventories are held once however many providers report them (a
    bounded memo, cleared when full).

    NOTE: one for the process, on purpose: providers are built by the
    intake, the cold load and the request threads (trees read from the
    host table) alike, and equal inventories are held once across all of
    them. The lock makes each lookup and each clear-and-add one step; the
    limits are computed outside it.
    """

    def __init__(self, size=65536):
        self._size = size
        self._lock = threading.Lock()
        self._held = {}

    def __call__(self, inventories):
        """``(inventories, {class: (capacity, min, max, step)})``, shared
        by every provider with equal inventories.

        Capacity is Placement's ``int((total - reserved) * allocation_ratio)``
        (``_build_provider_summaries``); its SQL check ``used + amount <=
        (total - reserved) * ratio`` is the same test for integer amounts.
        """
        try:
            key = tuple(sorted(inventories.items()))
            with self._lock:
                hit = self._held.get(key)
        except TypeError:           # an unhashable inventory: not kept
            key, hit = None, None
        if hit is not None:
            return hit
        hit = (dict(inventories), _limits(inventories))
        if key is not None:
            with self._lock:
                if len(self._held) >= self._size:
                    self._held.clear()
                self._held[key] = hit
        return hit


def _limits(inventories):
    limits = {}
    for rc, (total, reserved, min_unit, max_unit, step, ratio) in (
            inventories.items()):
        limits[rc] = (int((total - reserved) * ratio), min_unit, max_unit,
                      step if step and step > 0 else 1)
    return limits


_limits_for = _InventoryLimits()


@dataclasses.dataclass(frozen=True, slots=True)
class Provider:
    """One resource provider, immutable.

    ``inventories``: resource class -> (total, reserved, min_unit,
    max_unit, step_size, allocation_ratio), an ``update.Inventory`` or
    the database's plain tuple of it. ``usage``: class -> amount
    allocated to all consumers. Neither dict may be changed once the
    provider is built (build a new provider with ``dataclasses.replace``).
    """

    uuid: str
    name: str
    parent_uuid: str | None
    root_uuid: str
    generation: int = -1
    inventories: dict = dataclasses.field(default_factory=dict)
    usage: dict = dataclasses.field(default_factory=dict)
    traits: frozenset = _EMPTY
    aggregates: frozenset = _EMPTY
    # class -> (capacity, min_unit, max_unit, step_size), derived
    limits: dict = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        inventories, limits = _limits_for(self.inventories)
        object.__setattr__(self, "inventories", inventories)
        object.__setattr__(self, "limits", limits)
        if not isinstance(self.traits, frozenset):
            object.__setattr__(self, "traits", frozenset(self.traits))
        if not isinstance(self.aggregates, frozenset):
            object.__setattr__(self, "aggregates",
                               frozenset(self.aggregates))

    @property
    def sharing(self):
        """Whether this provider shares its inventory via aggregates."""
        return SHARES_VIA_AGGREGATE in self.traits

    @property
    def is_root(self):
        return self.parent_uuid is None

    def capacity(self, rc):
        """``int((total - reserved) * allocation_ratio)``; 0 without
        inventory of ``rc``."""
        lim = self.limits.get(rc)
        return lim[0] if lim is not None else 0

    def used(self, rc):
        return self.usage.get(rc, 0)

    def free(self, rc):
        """Capacity less usage (may be negative after an overcommit)."""
        return self.capacity(rc) - self.usage.get(rc, 0)

    def max_unit(self, rc):
        lim = self.limits.get(rc)
        return lim[2] if lim is not None else 0

    def fits(self, rc, amount, already=0):
        """Whether Placement would take ``amount`` of ``rc`` here on top
        of its usage and ``already`` (more asked of it by the same
        request).

        As ``_capacity_check_clause`` (research_context.py): min_unit <=
        amount <= max_unit and amount % step_size == 0 apply to
        ``amount``; capacity applies to usage + already + amount.
        """
        lim = self.limits.get(rc)
        if lim is None:
            return False
        cap, min_unit, max_unit, step = lim
        return (min_unit <= amount <= max_unit and amount % step == 0
                and self.usage.get(rc, 0) + already + amount <= cap)


def _check_tree(root_uuid, providers):
    if not providers:
        raise ValueError("a tree needs at least its root")
    root = providers[0]
    if root.uuid != root_uuid or root.parent_uuid is not None:
        raise ValueError("the first provider must be the root %s"
                         % root_uuid)
    seen = set()
    for p in providers:
        if p.root_uuid != root_uuid:
            raise ValueError("provider %s has root %s, not %s"
                             % (p.uuid, p.root_uuid, root_uuid))
        if p.uuid in seen:
            raise ValueError("provider %s is listed twice" % p.uuid)
        if p is not root and p.parent_uuid not in seen:
            raise ValueError("provider %s comes before its parent %s"
                             % (p.uuid, p.parent_uuid))
        seen.add(p.uuid)


def _sharing_entries(providers):
    """``{(uuid, aggregate)}`` for the sharing providers given."""
    return {(p.uuid, agg) for p in providers if p.sharing
            for agg in p.aggregates}


class ProviderIndex:
    """Every provider this worker knows: trees by root, sharing providers
    by aggregate."""

    def __init__(self):
        self._providers = {}      # uuid -> Provider
        self._trees = {}          # root uuid -> tuple of Provider
        self._tree_aggs = {}      # root uuid -> aggregates of its providers
        # aggregate -> {root uuid: None}: trees with a provider in it
        self._agg_roots = {}
        # aggregate -> frozenset of the sharing providers in it
        self._agg_sharing = {}
        # the aggregates that hold at least one sharing provider
        self._sharing_aggs = _EMPTY
        self._interned = {}       # frozenset -> the same frozenset, once

    def __len__(self):
        return len(self._trees)

    def __contains__(self, root_uuid):
        return root_uuid in self._trees

    # -- reading ----------------------------------------------------------

    def get(self, uuid):
        return self._providers.get(uuid)

    def tree(self, root_uuid):
        """The tree of ``root_uuid``: root first, parents before children
        (empty when unknown)."""
        return self._trees.get(root_uuid, ())

    def roots(self):
        return list(self._trees)

    def sharing_for(self, root_uuid):
        """The sharing providers outside this tree that serve it: those
        with an aggregate that some provider of the tree is in."""
        aggs = self._tree_aggs.get(root_uuid)
        shared = self._sharing_aggs
        if not aggs or aggs.isdisjoint(shared):
            return ()
        found = {}
        agg_sharing = self._agg_sharing
        for agg in aggs & shared:
            for uuid in agg_sharing.get(agg, ()):
                if uuid not in found:
                    p = self._providers.get(uuid)
                    if p is not None and p.root_uuid != root_uuid:
                        found[uuid] = p
        return tuple(found[u] for u in sorted(found))

    def shares_any(self):
        """Whether some sharing provider is in an aggregate."""
        return bool(self._sharing_aggs)

    def is_simple(self, root_uuid):
        """A lone root: no children and no sharing provider serving it."""
        tree = self._trees.get(root_uuid)
        return (tree is not None and len(tree) == 1
                and not self.sharing_for(root_uuid))

    def trees_sharing(self, sharing_uuid):
        """The roots of the trees ``sharing_uuid`` serves (those whose
        ``sharing_for`` lists it): empty unless it is a sharing
        provider."""
        p = self._providers.get(sharing_uuid)
        if p is None or not p.sharing:
            return set()
        roots = set()
        for agg in p.aggregates:
            members = self._agg_roots.get(agg)
            if members:
                roots.update(list(members))
        roots.discard(p.root_uuid)
        return roots

    # -- writing (one writer at a time) ------------------------------------

    def set_tree(self, root_uuid, providers):
        """Replace the whole tree of ``root_uuid`` (root first, parents
        before children).

        A provider that stays keeps its usage and generation unless the
        new one carries a generation (>= 0). A provider that was in
        another tree leaves it.
        """
        providers = list(providers)
        _check_tree(root_uuid, providers)
        new = tuple(self._settled(p) for p in providers)
        new_uuids = {p.uuid for p in new}
        for p in new:
            held = self._providers.get(p.uuid)
            if held is not None and held.root_uuid != root_uuid:
                self._drop_from_tree(held.root_uuid, new_uuids)
        old = self._trees.get(root_uuid, ())
        gone = [p for p in old if p.uuid not in new_uuids]
        for p in new:
            self._providers[p.uuid] = p
        self._trees[root_uuid] = new
        for p in gone:
            if self._providers.get(p.uuid) is p:
                del self._providers[p.uuid]
        self._reindex(root_uuid, old, new)

    def remove_tree(self, root_uuid):
        old = self._trees.pop(root_uuid, None)
        if old is None:
            return False
        for p in old:
            if self._providers.get(p.uuid) is p:
                del self._providers[p.uuid]
        self._reindex(root_uuid, old, ())
        return True

    def apply_usage(self, uuid, generation, usage, force=False):
        """Set a provider's usage as of ``generation``: only news (a
        generation above the one held) is applied, or with ``force`` any
        state that differs from the one held (the database's, at a usage
        sync). Returns whether it was."""
        p = self._providers.get(uuid)
        if p is None:
            return False
        if force:
            if generation == p.generation and same_usage(p.usage, usage):
                return False
        elif generation <= p.generation:
            return False
        new = dataclasses.replace(p, generation=generation,
                                  usage=dict(usage))
        self._swap(p, new)
        return True

    # -- internals ----------------------------------------------------------

    def _intern(self, value):
        return self._interned.setdefault(value, value)

    def _settled(self, p):
        """``p`` as stored: usage kept from the provider held unless ``p``
        has a generation, equal trait and aggregate sets held once. A new
        object when anything changes (``p`` itself is never changed)."""
        changes = {}
        held = self._providers.get(p.uuid)
        if held is not None and p.generation < 0:
            changes.update(usage=held.usage, generation=held.generation)
        traits = self._intern(p.traits)
        if traits is not p.traits:
            changes["traits"] = traits
        aggregates = self._intern(p.aggregates)
        if aggregates is not p.aggregates:
            changes["aggregates"] = aggregates
        return dataclasses.replace(p, **changes) if changes else p

    def _swap(self, old, new):
        self._providers[new.uuid] = new
        tree = self._trees.get(new.root_uuid)
        if tree:
            self._trees[new.root_uuid] = tuple(
                new if q is old else q for q in tree)

    def _drop_from_tree(self, root_uuid, uuids):
        """Take ``uuids`` (moving to another tree) out of this one."""
        tree = self._trees.get(root_uuid, ())
        if not tree:
            return
        if tree[0].uuid in uuids:
            self.remove_tree(root_uuid)
            return
        kept = tuple(p for p in tree if p.uuid not in uuids)
        self._trees[root_uuid] = kept
        self._reindex(root_uuid, tree, kept)

    def _reindex(self, root_uuid, old, new):
        """Aggregate and sharing indexes after a tree changed."""
        old_aggs = self._tree_aggs.get(root_uuid, _EMPTY)
        new_aggs = self._intern(frozenset().union(
            *(p.aggregates for p in new)))
        if new:
            self._tree_aggs[root_uuid] = new_aggs
        else:
            self._tree_aggs.pop(root_uuid, None)
        for agg in old_aggs - new_aggs:
            members = self._agg_roots.get(agg)
            if members is not None:
                members.pop(root_uuid, None)
                if not members:
                    del self._agg_roots[agg]
        for agg in new_aggs - old_aggs:
            self._agg_roots.setdefault(agg, {})[root_uuid] = None
        self._reindex_sharing(_sharing_entries(old), _sharing_entries(new))

    def _reindex_sharing(self, old, new):
        if old == new:
            return
        changed = {}
        for uuid, agg in old - new:
            changed.setdefault(agg, [set(), set()])[0].add(uuid)
        for uuid, agg in new - old:
            changed.setdefault(agg, [set(), set()])[1].add(uuid)
        for agg, (removed, added) in changed.items():
            members = (self._agg_sharing.get(agg, _EMPTY) - removed) | added
            if members:
                self._agg_sharing[agg] = frozenset(members)
            else:
                self._agg_sharing.pop(agg, None)
        self._sharing_aggs = frozenset(self._agg_sharing)


def same_usage(held, usage):
    """Whether two ``{class: used}`` say the same (a class at 0 or absent
    alike)."""
    return ({rc: a for rc, a in held.items() if a}
            == {rc: a for rc, a in usage.items() if a})
