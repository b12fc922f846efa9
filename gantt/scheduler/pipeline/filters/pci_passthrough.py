"""PciPassthroughFilter: the host has free PCI devices for every alias the
flavor requests (``pci_passthrough:alias``); see
:mod:`gantt.scheduler.state.pci`.

A host sees the devices the earlier instances of the same request took
there (``ResourceRequest.ledger``), as Nova's ``HostState.pci_stats`` does
once it consumed an instance.
"""

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import pci


def requests(aliases, request):
    """The request's PCI requests (parsed once per request).

    :raises: InvalidRequest for an unknown alias or count
    """
    return request.memo(pci.REQUESTS_MEMO, lambda: pci.requests_from_flavor(
        request.extra_specs, aliases))


class PciPassthroughFilter(filters.BaseFilter):
    name = "PciPassthroughFilter"
    provider_kinds = filters.COMPUTE

    def __init__(self, conf):
        super().__init__(conf)
        # a bad [pci] alias stops the service at start-up, not a request
        self.aliases = pci.parse_aliases(conf.pci.alias)

    def applies(self, request):
        return bool(requests(self.aliases, request))

    def host_passes(self, host, request):
        pools = request.ledger.pci_pools(host.row, host.uuid,
                                         host.pci_pools)
        return pci.host_supports(pools, requests(self.aliases, request))

    def passes_columns(self, view, request):
        wanted = requests(self.aliases, request)
        fits = view.table.pci.supports(view.n, wanted)
        # the few rows earlier instances took from, host by host
        for row, pools in request.ledger.pci_rows(view):
            fits[row] = pci.host_supports(pools, wanted)
        return fits
