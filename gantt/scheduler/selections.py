"""Selections: the claimed host and its alternates, as wire objects."""

import numpy as np

from gantt.objects import selection as selection_obj


def allocation_request(provider_uuid, resources):
    """Everything from one provider (single-provider hosts)."""
    return selection_obj.AllocationRequest(allocations=[
        selection_obj.AllocationItem(resource_provider_uuid=provider_uuid,
                                     resources=dict(resources))])


def build(view, row, consumer_uuid, resources, weight, claimed):
    """A Selection for ``row`` of ``view``."""
    limits = {}
    for rc in resources:
        col = view.rc_column(rc)
        if col is not None:
            limits[rc] = int(view.capacity(col)[row])
    return selection_obj.Selection(
        service_host=view.hosts[row], nodename=view.nodenames[row],
        compute_node_uuid=view.uuids[row], cell_uuid=view.cell_uuid(row),
        weight=float(weight), limits=limits,
        allocation_request=allocation_request(view.uuids[row], resources),
        consumer_uuid=consumer_uuid, claimed=claimed)


def alternates(view, ranked_rows, weights, claimed_row, count):
    """Up to ``count`` next-best rows in the claimed row's cell.

    :returns: list of (row, weight)
    """
    if count <= 0:
        return []
    cells = view.column("cell")
    same_cell = cells[ranked_rows] == cells[claimed_row]
    keep = same_cell & (ranked_rows != claimed_row)
    picked = np.flatnonzero(keep)[:count]
    return [(int(ranked_rows[i]), float(weights[i])) for i in picked]
