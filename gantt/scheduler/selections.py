"""Selections: the claimed host and its alternates, as wire objects."""

import numpy as np

from gantt.objects import selection as selection_obj


def allocation_request(provider_uuid, resources):
    """Everything from one provider (single-provider hosts)."""
    return selection_obj.AllocationRequest(allocations=[
        selection_obj.AllocationItem(resource_provider_uuid=provider_uuid,
                                     resources=dict(resources))])


def tree_allocation_request(allocations):
    """``{provider uuid: {class: amount}}`` as an AllocationRequest."""
    return selection_obj.AllocationRequest(allocations=[
        selection_obj.AllocationItem(resource_provider_uuid=uuid,
                                     resources=dict(amounts))
        for uuid, amounts in sorted(allocations.items())])


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
    return selection_obj.Selection(
        service_host=view.hosts[row], nodename=view.nodenames[row],
        compute_node_uuid=view.uuids[row], cell_uuid=view.cell_uuid(row),
        weight=float(weight), limits=limits,
        allocation_request=(
            tree_allocation_request(allocations) if allocations is not None
            else allocation_request(view.uuids[row], resources)),
        consumer_uuid=consumer_uuid, claimed=claimed)


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
