"""IoOpsWeigher and NumInstancesWeigher: what a host is already doing.

Raw values are the host's ``num_io_ops`` and ``num_instances``. With the
defaults IoOps prefers idle hosts (multiplier -1.0) and NumInstances is off
(0.0); a positive NumInstances multiplier packs, a negative one spreads.
IoOps, as Nova's, normalises from 0 (``minval = 0``).
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers


class _CountWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    column = None

    def weigh_host(self, host, request):
        return float(getattr(host, self.column))

    def weigh_columns(self, view, request, rows):
        # integers as they are: the runner's arithmetic casts them on the
        # way (a float copy first would cost as much as the weighing)
        return view.column(self.column)[rows]


class IoOpsWeigher(_CountWeigher):
    name = "IoOpsWeigher"
    multiplier_option = "io_ops_weight_multiplier"
    column = "num_io_ops"
    # as Nova's: 0, not the least busy host, is the low end
    minval = 0


class NumInstancesWeigher(_CountWeigher):
    name = "NumInstancesWeigher"
    multiplier_option = "num_instances_weight_multiplier"
    column = "num_instances"
