"""HypervisorVersionWeigher: newer hypervisors first (by default).

The raw value is the ``hypervisor_version`` capability, an integer (0 when
the host does not report one or it is not a number).
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import columns

CAPABILITY = "hypervisor_version"


class HypervisorVersionWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "HypervisorVersionWeigher"
    multiplier_option = "hypervisor_version_weight_multiplier"

    def constant(self, view, request):
        return view.table.capability_columns.keys.get(CAPABILITY) is None

    def weigh_host(self, host, request):
        return columns.as_float(host.capabilities.get(CAPABILITY))

    def weigh_columns(self, view, request, rows):
        return weighers.select(view.capability(
            CAPABILITY, columns.as_float, 0.0, float, meaning="as_float"),
            rows)
