"""PciPassthroughFilter: the host has free PCI devices for every alias the
flavor requests (``pci_passthrough:alias``); see :mod:`gantt.scheduler.pci`.
"""

from gantt.scheduler import filters
from gantt.scheduler import pci


def requests(aliases, request):
    """The request's PCI requests (parsed once per request).

    :raises: InvalidRequest for an unknown alias or count
    """
    return request.memo("pci_requests", lambda: pci.requests_from_flavor(
        request.extra_specs, aliases))


class PciPassthroughFilter(filters.BaseFilter):
    name = "PciPassthroughFilter"

    def __init__(self, conf):
        super().__init__(conf)
        # a bad [pci] alias stops the service at start-up, not a request
        self.aliases = pci.parse_aliases(conf.pci.alias)

    def applies(self, request):
        return bool(requests(self.aliases, request))

    def host_passes(self, host, request):
        return pci.host_supports(host.pci_pools,
                                 requests(self.aliases, request))

    def passes_columns(self, view, request):
        return view.table.pci.supports(view.n,
                                       requests(self.aliases, request))
