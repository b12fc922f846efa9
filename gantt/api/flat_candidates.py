"""``GET /allocation_candidates`` on a flat cloud, over numpy columns.

A *flat* index: every provider is a root without children and no
sharing provider (``MISC_SHARES_VIA_AGGREGATE``) is in an aggregate, the
cloud of plain compute nodes. A request of one unsuffixed group there
(resources; required, forbidden and any-of traits; member_of and
forbidden aggregates; in_tree; root_required and root_forbidden) has, per
provider, at most one candidate: the provider taking the whole group.
That is the solver's lone-root rule
(``allocation_candidates.search._lone`` and ``_root_ok``, Placement's
``_alloc_candidates_single_provider``), evaluated here for every provider
at once, one numpy operation per class, trait and aggregate asked:

* each class: the provider has inventory of it, ``min_unit <= amount <=
  max_unit``, ``amount % step_size == 0`` and ``used + amount <=
  int((total - reserved) * allocation_ratio)``;
* each any-of set of required traits (a plain required trait is a set
  of one) meets the provider's traits, no forbidden trait is among them,
  and the same for root_required / root_forbidden (the provider is its
  own root);
* each member_of any-of list meets the provider's aggregates (its root's
  are its own), no forbidden aggregate is among them;
* in_tree: the provider named, when it exists (else nothing).

Order: the index's (provider id, i.e. creation order, see
:mod:`gantt.scheduler.state.stored_index`), the general solver's order
too, so the two paths answer alike; ``limit`` keeps the first ones.
Placement has no order to keep: without
``randomize_allocation_candidates`` it lists the iteration order of a
Python ``set`` of its allocation requests, hashed on (provider id, class
name, amount) with per-process salted string hashes, and cuts it at
``limit`` (``RequestWideSearchContext.limit_results``).

The columns are built from the index once per load (classes, traits and
aggregates column by column, on the first request that asks for them)
and patched for the providers an incremental reload replaced
(:meth:`FlatColumns.patched`); a published :class:`FlatColumns` is never
changed, so request threads read it without a lock.
"""

import threading

import numpy as np


class FlatColumns:
    """The providers of a flat index, in its order, and columns over
    them, each built on first use."""

    def __init__(self, providers, position=None, built=None):
        self.providers = providers                # position -> Provider
        self.position = position if position is not None else {
            p.uuid: i for i, p in enumerate(providers)}
        self._built = dict(built or {})           # key -> column(s)
        self._lock = threading.Lock()

    def __len__(self):
        return len(self.providers)

    @classmethod
    def build(cls, index):
        """The columns of ``index``, or None when it is not flat."""
        if index.shares_any():
            return None
        providers = []
        for root in index.roots():
            tree = index.tree(root)
            if len(tree) != 1:
                return None
            providers.append(tree[0])
        return cls(providers)

    def patched(self, index, uuids):
        """The columns after the providers ``uuids`` were replaced in
        ``index`` (same providers, same order), or None when the index is
        no longer flat."""
        providers = list(self.providers)
        moved = []
        for uuid in uuids:
            i = self.position.get(uuid)
            tree = index.tree(uuid)
            if i is None or len(tree) != 1:
                return None
            providers[i] = tree[0]
            moved.append(i)
        if index.shares_any():
            return None
        with self._lock:
            built = dict(self._built)
        rows = np.array(sorted(moved), dtype=np.intp)
        changed = [providers[i] for i in rows]
        patched = {}
        for key, columns in built.items():
            try:
                fresh = _BUILDERS[key[0]](changed, key[1])
            except OverflowError:       # built again (and refused) on use
                continue
            patched[key] = tuple(_patch(c, rows, f)
                                 for c, f in zip(columns, fresh,
                                                 strict=True))
        return FlatColumns(providers, self.position, patched)

    def _column(self, kind, name):
        key = (kind, name)
        found = self._built.get(key)
        if found is None:
            found = _BUILDERS[kind](self.providers, name)
            with self._lock:
                found = self._built.setdefault(key, found)
        return found

    def resource(self, rc):
        """``(has, free, min_unit, max_unit, step)`` of class ``rc``."""
        return self._column("class", rc)

    def trait(self, name):
        return self._column("trait", name)[0]

    def aggregate(self, uuid):
        return self._column("aggregate", uuid)[0]


def _patch(column, rows, fresh):
    out = column.copy()
    out[rows] = fresh
    return out


def _class_columns(providers, rc):
    """Raises OverflowError when a capacity does not fit 64 bits."""
    n = len(providers)
    has = np.zeros(n, dtype=bool)
    free = np.zeros(n, dtype=np.int64)
    low = np.zeros(n, dtype=np.int64)
    high = np.zeros(n, dtype=np.int64)
    step = np.ones(n, dtype=np.int64)
    for i, p in enumerate(providers):
        lim = p.limits.get(rc)
        if lim is not None:
            has[i] = True
            free[i] = lim[0] - p.usage.get(rc, 0)
            low[i], high[i], step[i] = lim[1], lim[2], lim[3]
    return has, free, low, high, step


def _trait_column(providers, name):
    return (np.fromiter((name in p.traits for p in providers), dtype=bool,
                        count=len(providers)),)


def _aggregate_column(providers, uuid):
    return (np.fromiter((uuid in p.aggregates for p in providers),
                        dtype=bool, count=len(providers)),)


_BUILDERS = {"class": _class_columns, "trait": _trait_column,
             "aggregate": _aggregate_column}


def applies(query):
    """Whether ``query`` (a compiled CandidateQuery) is one unsuffixed
    group, the only shape this module answers."""
    plan = query.plan
    return plan.lone and not plan.subtrees


def select(columns, query, limit=None):
    """Positions (in ``columns``) of the providers that are candidates,
    in order, the first ``limit`` of them; None when a column cannot be
    built (an amount beyond 64 bits: the general solver answers)."""
    plan = query.plan
    g = plan.unsuffixed
    try:
        mask = _fits(columns, g.items)
    except OverflowError:
        return None
    if g.in_tree is not None:
        mask &= _only(columns, g.in_tree)
    for any_of in g.required:
        mask &= _any(columns.trait, any_of)
    for any_of in g.member_of:
        mask &= _any(columns.aggregate, any_of)
    for name in g.forbidden | plan.root_forbidden:
        mask &= ~columns.trait(name)
    for name in plan.root_required:
        mask &= columns.trait(name)
    for uuid in g.forbidden_aggs:
        mask &= ~columns.aggregate(uuid)
    found = np.flatnonzero(mask)
    return found if limit is None else found[:limit]


def _fits(columns, items):
    mask = np.ones(len(columns), dtype=bool)
    for rc, amount in items:
        has, free, low, high, step = columns.resource(rc)
        mask &= (has & (low <= amount) & (high >= amount)
                 & (amount % step == 0) & (free >= amount))
    return mask


def _only(columns, uuid):
    mask = np.zeros(len(columns), dtype=bool)
    i = columns.position.get(uuid)
    if i is not None:
        mask[i] = True
    return mask


def _any(column, names):
    names = iter(names)
    mask = column(next(names)).copy()
    for name in names:
        mask |= column(name)
    return mask
