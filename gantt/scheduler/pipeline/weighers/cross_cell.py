"""CrossCellWeigher: prefer the requested cell when a move may cross cells.

When the request names a destination cell *and* allows a cross-cell move
(scheduler hint ``allow_cross_cell_move``), hosts in that cell weigh 1 and
the others -1; otherwise every host weighs 0.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import prefilters
from gantt.scheduler.pipeline import weighers


def preferred_cell(request):
    dest = request.destination
    if (dest is not None and dest.cell_uuid
            and prefilters.cross_cell_allowed(request)):
        return dest.cell_uuid
    return None


class CrossCellWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "CrossCellWeigher"
    multiplier_option = "cross_cell_move_weight_multiplier"

    def constant(self, view, request):
        return preferred_cell(request) is None

    def weigh_host(self, host, request):
        cell = preferred_cell(request)
        if cell is None:
            return 0.0
        return 1.0 if host.cell_uuid == cell else -1.0

    def weigh_columns(self, view, request, rows):
        cell = preferred_cell(request)
        if cell is None:
            return np.zeros(view.n)[rows]
        same = view.column("cell")[rows] == view.cell_code(cell)
        return np.where(same, 1.0, -1.0)
