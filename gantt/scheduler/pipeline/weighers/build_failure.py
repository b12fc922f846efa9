"""BuildFailureWeigher: hosts that failed recent builds weigh less.

The raw value is the ``failed_builds`` stat the agent reports (0 when it
does not; the agent resets it after a successful build); the multiplier is
``-build_failure_weight_multiplier`` (1e6 by default, which outweighs the
other weighers), so a failing host is used last rather than disabled.
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import columns

STAT = "failed_builds"


class BuildFailureWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "BuildFailureWeigher"
    multiplier_option = "build_failure_weight_multiplier"

    def multiplier(self, view, rows):
        return -1 * super().multiplier(view, rows)

    def host_multiplier(self, host):
        return -1 * super().host_multiplier(host)

    def constant(self, view, request):
        # no host reports the stat: every host weighs 0
        return view.table.stat_columns.keys.get(STAT) is None

    def weigh_host(self, host, request):
        return columns.as_float(host.stats.get(STAT))

    def weigh_columns(self, view, request, rows):
        return weighers.select(view.stat(STAT, columns.as_float, 0.0, float,
                                         meaning="as_float"), rows)
