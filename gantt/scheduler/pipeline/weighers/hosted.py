"""LeastRoutersWeigher and LeastNetworksWeigher: agents hosting the fewest.

A network service models each L3 agent (or DHCP agent) as a provider with
an inventory of one custom resource class, and each router (or network's
DHCP service) placed there as a consumer claiming one unit of it. The raw
value of a host is then the number of routers (networks) it hosts: its
used units of that class, this request's earlier instances included. With
the default multiplier, -1.0, the agent hosting the fewest weighs most,
which is Neutron's ``LeastRoutersScheduler`` and DHCP ``WeightScheduler``
(see ``doc/source/admin/networks.rst``). As with IoOpsWeigher, 0 (not the
least loaded agent) is the low end of the normalisation, and a host
without the class weighs 0.

Agents report as providers of kind ``network`` (ProviderReport 1.2) and
a ``[profile:network]`` considers them; but the weighers read nothing
of the kind, only the used units of their class, which every provider
reports alike: they apply to every kind (``provider_kinds`` None), as
RAMWeigher does, so that a deployment naming its agents' kind otherwise
(``l3-agent``) needs no other plugin.
"""

import numpy as np

from gantt.scheduler.pipeline import weighers

ROUTER_CLASS = "CUSTOM_L3_ROUTER"
DHCP_CLASS = "CUSTOM_DHCP_NETWORK"


class _HostedUnitsWeigher(weighers.BaseWeigher):
    # every kind: the used units of a class mean the same on any provider
    provider_kinds = None
    resource_class = None
    minval = 0

    def weigh_host(self, host, request):
        slot = host.resources.get(self.resource_class)
        return 0.0 if slot is None else float(slot.used)

    def weigh_columns(self, view, request, rows):
        col = view.rc_column(self.resource_class)
        if col is None:
            return np.zeros(weighers.size(view, rows))
        return weighers.select(view.used(col), rows)

    def constant(self, view, request):
        # no agent offers the class: every host weighs 0
        return view.rc_column(self.resource_class) is None


class LeastRoutersWeigher(_HostedUnitsWeigher):
    name = "LeastRoutersWeigher"
    multiplier_option = "least_routers_weight_multiplier"
    resource_class = ROUTER_CLASS


class LeastNetworksWeigher(_HostedUnitsWeigher):
    name = "LeastNetworksWeigher"
    multiplier_option = "least_networks_weight_multiplier"
    resource_class = DHCP_CLASS
