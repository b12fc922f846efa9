"""Selections: the claimed host and its alternates, as wire objects."""

import numpy as np

from gantt.objects import selection as selection_obj

# NOTE: every value below is the scheduler's own (uuids and names from the
# host table, amounts from a validated request), so the objects are built
# with GanttObject.trusted, without ovo's coercion of each field


def _item(provider_uuid, resources):
    return selection_obj.AllocationItem.trusted(
        resource_provider_uuid=provider_uuid,
        resources={rc: int(n) for rc, n in resources.items()})


def allocation_request(provider_uuid, resources):
    """Everything from one provider (single-provider hosts)."""
    return selection_obj.AllocationRequest.trusted(
        allocations=[_item(provider_uuid, resources)])


def tree_allocation_request(allocations):
    """``{provider uuid: {class: amount}}`` as an AllocationRequest."""
    return selection_obj.AllocationRequest.trusted(allocations=[
        _item(uuid, amounts) for uuid, amounts in sorted(allocations.items())])


def build(view, row, consumer_uuid, resources, weight, claimed,
          allocations=None):
    """A Selection for ``row`` of ``view``.

    :param allocations: which provider gives what, when the host is a tree
        or served by a sharing provider; None: the host gives everything
    """
    limits = {}
    for rc in resources:
        col = view.rc_column(rc)
        if col is not None:
            limits[rc] = int(view.capacity(col)[row])
    return selection_obj.Selection.trusted(
        service_host=str(view.hosts[row]), nodename=str(view.nodenames[row]),
        compute_node_uuid=str(view.uuids[row]),
        cell_uuid=view.cell_uuid(row), weight=float(weight), limits=limits,
        allocation_request=(
            tree_allocation_request(allocations) if allocations is not None
            else allocation_request(view.uuids[row], resources)),
        consumer_uuid=str(consumer_uuid), claimed=bool(claimed))


def alternates(view, rows, weights, claimed_row, count):
    """Up to ``count`` best rows other than the claimed one in its cell.

    :param rows: every candidate row, in any order
    :param weights: their weights
    :returns: list of (row, weight), best first
    """
    if count <= 0:
        return []
    cells = view.column("cell")
    same_cell = np.flatnonzero((cells[rows] == cells[claimed_row])
                               & (rows != claimed_row))
    if len(same_cell) > count:
        best = np.argpartition(-weights[same_cell], count - 1)[:count]
        same_cell = same_cell[best]
    same_cell = same_cell[np.argsort(-weights[same_cell], kind="stable")]
    return [(int(rows[i]), float(weights[i])) for i in same_cell]


def for_decision(cycle, decision, layouts, count, weighing=None):
    """``[claimed, alternates…]`` for one decision.

    :param layouts: the TreeLayouts that solve tree alternates
    :param count: how many alternates at most
    :param weighing: the Weighing to take alternates from; by default the
        one the decision was picked from
    """
    view, resources = cycle.view, cycle.request.resources
    chosen = build(view, decision.row, decision.consumer_uuid, resources,
                   decision.weight, claimed=True,
                   allocations=decision.allocations)
    if count <= 0:
        return [chosen]
    weighing = weighing if weighing is not None else decision.weighing
    return [chosen] + _alternates(cycle, decision, layouts, count, weighing)


def _alternates(cycle, decision, layouts, count, weighing):
    view, rows = cycle.view, weighing.rows
    trees = view.tree_rows()
    # a tree alternate needs its own allocation and may not fit: look a
    # little further down the list for those
    wanted = count * 3 if trees[rows].any() else count
    result = []
    solve = None
    for alt, alt_weight in alternates(view, rows, weighing.totals,
                                      decision.row, wanted):
        alt_allocation = None
        if trees[alt]:
            solve = solve or layouts.solver(view, cycle.request)
            found = solve(alt)
            if found is None:
                continue
            alt_allocation = found.allocations
        result.append(build(
            view, alt, decision.consumer_uuid, cycle.request.resources,
            alt_weight, claimed=False, allocations=alt_allocation))
        if len(result) >= count:
            break
    return result
