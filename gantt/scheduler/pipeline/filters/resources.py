"""ResourceFilter: the host has room for every requested resource class.

Placement's inventory rule, per class: the amount lies within
``[min_unit, max_unit]``, is a multiple of ``step_size``, and
``used + amount <= (total - reserved) * allocation_ratio``.

A host that is a provider tree is checked on its tree-wide sums, which no
fitting tree can fail: its usage counts only up to each provider's own
capacity, since a provider over its (shrunk) inventory takes no room from
its siblings, as Placement judges each provider on its own. The solver
decides the exact fit. A host a sharing provider serves may get the class
from that provider, so it is left to the allocation-candidates solver.
"""

import dataclasses

import numpy as np

from gantt.scheduler.pipeline import filters

_NO_ROWS = np.zeros(0, dtype=np.int64)


class ResourceFilter(filters.BaseFilter):
    name = "ResourceFilter"
    # forced hosts skip filters, never capacity: the claim would refuse them
    always_run = True

    def host_passes(self, host, request):
        if host.shared:
            return True
        for rc, amount in request.resources.items():
            slot = host.resources.get(rc)
            if slot is None or not _within(slot, host, rc).fits(amount):
                return False
        return True

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for rc, amount in request.resources.items():
            mask &= _fits(view, rc, amount)
        return mask | view.shared_rows()

    def explain(self, view, request, removed):
        """Charge each removed host to the first class it lacked."""
        left = removed & ~view.shared_rows()
        counts = {}
        for rc, amount in sorted(request.resources.items()):
            lacked = left & ~_fits(view, rc, amount)
            counts["lacked %s" % rc] = int(np.count_nonzero(lacked))
            left &= ~lacked
        return counts


def _within(slot, host, rc):
    """``slot`` with a tree's usage above its providers' capacity left
    out (see HostView.tree_excess)."""
    over = host.tree_excess.get(rc, 0)
    return dataclasses.replace(slot, used=slot.used - over) if over else slot


def _fits(view, rc, amount):
    return view.memo(("fits", rc, amount), lambda: _fit_rows(view, rc, amount))


def _fit_rows(view, rc, amount):
    """``view.fits``, with the trees it refused judged again on their
    usage within capacity (rare: a tree with an over-full provider)."""
    mask = view.fits(rc, amount)
    col = view.rc_column(rc)
    if col is None:
        return mask
    trees = view.memo(("tree hosts",), lambda: _tree_hosts(view))
    if not len(trees):
        return mask         # the common cloud: no host is a tree
    free = view.free(col)
    for row in trees[~mask[trees]].tolist():
        over = view.tree_excess(row).get(rc, 0)
        if over and free[row] + over >= amount and _units_fit(
                view, row, col, amount):
            mask[row] = True
    return mask


def _tree_hosts(view):
    tree = view.column("tree")
    # most clouds have no tree: one quick test, no list of rows
    return np.flatnonzero(tree) if tree.any() else _NO_ROWS


def _units_fit(view, row, col, amount):
    t = view.table
    return (bool(t.has_inventory[row, col])
            and t.min_unit[row, col] <= amount <= t.max_unit[row, col]
            and amount % max(int(t.step_size[row, col]), 1) == 0)
