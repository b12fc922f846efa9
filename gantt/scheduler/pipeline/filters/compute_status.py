"""ComputeFilter: only hosts that are enabled and reported recently."""

import numpy as np

from gantt.scheduler.pipeline import filters


class ComputeFilter(filters.BaseFilter):
    """A host is usable when it is not disabled and its last report is no
    older than ``[scheduler] service_down_time`` (a compute node the REST
    API made: its last sign of life no older than ``[api]
    compute_node_down_time``; see HostTable.lease)."""

    name = "ComputeFilter"
    provider_kinds = filters.COMPUTE

    def host_passes(self, host, request):
        return host.up and not host.disabled

    def passes_columns(self, view, request):
        return _up(view) & ~view.column("disabled")

    def explain(self, view, request, removed):
        down = removed & ~_up(view)
        disabled = removed & ~down
        return {"were down (no report within service_down_time)":
                int(np.count_nonzero(down)),
                "were disabled": int(np.count_nonzero(disabled))}


def _up(view):
    return view.memo("up", view.up)
