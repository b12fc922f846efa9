"""Layouts: which providers of a host give what (stage 4).

A host that is one provider gives everything itself. A host that is a
provider tree, or that a sharing provider serves, passes the columnar
filters on its tree's sums; whether a layout fits only the
allocation-candidates solver knows. :class:`TreeLayouts` turns a picked
row into a :class:`~.cycle.Decision`, walking the weighed hosts best first
when the picked tree has no fitting layout, and remembers misfits (see
:mod:`.misfits`) so that the same trees are not solved again for every
request of that shape.
"""

from gantt.scheduler.pipeline import allocation_candidates
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import misfits
from gantt.scheduler.pipeline import picking
from gantt.scheduler.pipeline import tree_source


def candidate_query(request):
    """The request as the allocation-candidates solver takes it."""
    return request.memo("candidate query", lambda: (
        allocation_candidates.CandidateQuery(
            groups=request.groups, group_policy=request.group_policy,
            same_subtree=request.same_subtree,
            root_required=request.root_required,
            root_forbidden=request.root_forbidden)))


class TreeLayouts:
    """Layouts of picked hosts, with the worker's misfit memo."""

    def __init__(self):
        self.misfits = misfits.MisfitMemo()

    def first_fitting(self, cycle, consumer_uuid, row, weight, weighing):
        """The :class:`Decision` for ``row``, or for the best weighed host
        after it that fits.

        If the host picked has no fitting layout (its columns only hold
        the tree's sums), the weighed hosts are walked best first, solving
        trees on the way, up to the first that fits: the solver runs on as
        few trees as the weighing allows. Misfits are marked in
        ``cycle.unfit``.

        :returns: a Decision, or None when no tree left fits
        """
        view, resources = cycle.view, cycle.request.resources
        trees = view.tree_rows()
        if not trees[row]:
            return cycle_mod.Decision(consumer_uuid, row, weight, weighing,
                                      {view.uuids[row]: resources})
        solve = self.solver(view, cycle.request)
        found = solve(row)
        if found is not None:
            return cycle_mod.Decision(consumer_uuid, row, weight, weighing,
                                      found.allocations)
        cycle.exclude_unfit(row)
        rows, totals = weighing.rows, weighing.totals
        for i in picking.best_first(totals):
            other = int(rows[i])
            if cycle.unfit[other]:
                continue
            allocations = ({view.uuids[other]: resources}
                           if not trees[other] else None)
            if allocations is None:
                found = solve(other)
                allocations = found.allocations if found else None
            if allocations is not None:
                return cycle_mod.Decision(consumer_uuid, other,
                                          float(totals[i]), weighing,
                                          allocations)
            cycle.exclude_unfit(other)
        return None

    def solver(self, view, request):
        """``solve(row)``: the first candidate on that row's tree, or None;
        trees that had none for this request shape and have not changed
        since are not solved again (see :mod:`misfits`)."""
        source = tree_source.HostProviders(view)
        query = candidate_query(request)
        shape = misfits.shape_of(query)
        index, membership = view.table.providers, view.table.aggregates
        memo = self.misfits

        def solve(row):
            root = view.uuids[row]
            # a host that is one provider, served by a pool, is not in the
            # index: its room is its row's (claims in flight included),
            # which the memo cannot see change; it is cheap to solve
            remembered = root in index
            if remembered and memo.known_unfit(
                    shape, root, lambda seen: misfits.unchanged(
                        seen, index, membership, source, root)):
                return None
            now = (misfits.inputs(index, membership, source, root)
                   if remembered else None)
            found = allocation_candidates.first_candidate(
                source, query, root)
            if found is None and remembered:
                memo.remember(shape, root, now)
            return found
        return solve
