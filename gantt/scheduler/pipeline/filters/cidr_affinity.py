"""SimpleCIDRAffinityFilter: hosts on the network of a given address.

With the scheduler hint ``build_near_host_ip`` (an IP address) only hosts
whose address lies in that address's network pass; the hint ``cidr``
(``/24`` by default) gives the prefix length, as in Nova
(``nova/scheduler/filters/affinity_filter.py``). A host's address is its
``host_ip`` capability (Nova's ``ComputeNode.host_ip``); a host that does
not report one fails while the hint is given. Without the hint every host
passes. A hint that does not make a network is an InvalidRequest.
"""

import ipaddress

from gantt import exception
from gantt.scheduler.pipeline import filters

HOST_IP = "host_ip"
DEFAULT_CIDR = "/24"


def _hint(request, name):
    value = request.hints.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def network_of(request):
    """The network the hints name, or None without ``build_near_host_ip``.

    :raises: InvalidRequest for an address or prefix that is not one
    """
    def parse():
        address = _hint(request, "build_near_host_ip")
        if not address:
            return None
        cidr = _hint(request, "cidr") or DEFAULT_CIDR
        try:
            # strict=False: the address's host bits are allowed (Nova's
            # netaddr.IPNetwork keeps them too)
            return ipaddress.ip_network("%s%s" % (address, cidr),
                                        strict=False)
        except ValueError as exc:
            raise exception.InvalidRequest(
                reason="scheduler hints build_near_host_ip=%s cidr=%s do "
                       "not make a network: %s" % (address, cidr, exc)
            ) from None
    return request.memo("cidr affinity network", parse)


def _in(network, host_ip):
    try:
        return ipaddress.ip_address(str(host_ip)) in network
    except ValueError:
        return False


class SimpleCIDRAffinityFilter(filters.BaseFilter):
    name = "SimpleCIDRAffinityFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return network_of(request) is not None

    def host_passes(self, host, request):
        host_ip = host.capabilities.get(HOST_IP)
        return host_ip is not None and _in(network_of(request), host_ip)

    def passes_columns(self, view, request):
        network = network_of(request)
        return view.capability(HOST_IP, lambda v: _in(network, v), False,
                               meaning=("in network", str(network)))
