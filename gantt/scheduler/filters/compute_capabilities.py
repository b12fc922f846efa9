"""ComputeCapabilitiesFilter: flavor ``capabilities:`` specs match the host.

A flavor extra spec ``capabilities:KEY`` names a key of the capabilities the
agent reports (``hypervisor_type``, ``cpu_arch``, ``cpu_info:features``…)
and an expression in the syntax of :mod:`extra_specs_ops`.
"""

from gantt.scheduler import filters
from gantt.scheduler.filters import extra_specs_ops

_PREFIX = "capabilities:"


def _wanted(request):
    return {key[len(_PREFIX):]: expr
            for key, expr in request.extra_specs.items()
            if key.startswith(_PREFIX)}


class ComputeCapabilitiesFilter(filters.BaseFilter):
    name = "ComputeCapabilitiesFilter"

    def applies(self, request):
        return any(k.startswith(_PREFIX) for k in request.extra_specs)

    def host_passes(self, host, request):
        caps = host.capabilities
        return all(extra_specs_ops.match(caps.get(key), expr)
                   for key, expr in _wanted(request).items())
