"""[filter_scheduler]: which filters and weighers run, and how they weigh."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "filter_scheduler", title="Filter scheduler options",
    help="Filters, weighers and their knobs.")

DEFAULT_FILTERS = [
    "ComputeFilter",
    "ResourceFilter",
    "AvailabilityZoneFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
    "ServerGroupTopologyFilter",
    "SameHostFilter",
    "DifferentHostFilter",
    "NUMATopologyFilter",
    "PciPassthroughFilter",
]

#: every built-in weigher, as Nova's ``weight_classes = all_weighers``
DEFAULT_WEIGHERS = [
    "RAMWeigher",
    "CPUWeigher",
    "DiskWeigher",
    "IoOpsWeigher",
    "NumInstancesWeigher",
    "PCIWeigher",
    "ServerGroupSoftAffinityWeigher",
    "ServerGroupSoftAntiAffinityWeigher",
    "ServerGroupDistanceWeigher",
    "BuildFailureWeigher",
    "CrossCellWeigher",
    "HypervisorVersionWeigher",
    "ImagePropertiesWeigher",
    "MetricsWeigher",
]

OPTS = [
    cfg.ListOpt("enabled_filters", default=DEFAULT_FILTERS,
                help="""
Filters applied to candidate hosts, in this order. Names are entry points in
the ``gantt.scheduler.filters`` group; an unknown name stops the service at
start-up. Put cheap, selective filters first.
"""),
    cfg.ListOpt("enabled_weighers",
                default=DEFAULT_WEIGHERS,
                help="""
Weighers that rank the hosts that passed the filters. Names are entry points
in the ``gantt.scheduler.weighers`` group; an unknown name stops the service.
Each weigher's raw values are normalised to [0, 1] over the candidates and
multiplied by its multiplier; the sums rank the hosts.
"""),
    cfg.FloatOpt("ram_weight_multiplier", default=1.0,
                 help="""
Multiplier for free RAM. Positive spreads instances over the hosts with the
most free RAM; negative stacks (fills) hosts first. The default ``packing``
policy, ``balanced+stack``, sets it and the CPU and disk multipliers to
-1.0 unless one of them or the weighers are set by hand.
"""),
    cfg.BoolOpt("free_capacity_weighing", default=False,
                help="""
What RAMWeigher, CPUWeigher and DiskWeigher weigh. False (the default):
what Nova's weighers weigh, the compute node's free RAM and disk
(``total - reserved - used``, allocation ratio ignored) and free VCPUs
(``total * allocation_ratio - used``). True: the free capacity Placement
computes for every class, ``(total - reserved) * allocation_ratio - used``,
so that overcommitted RAM counts as room. Either way a negative value
weighs as 0.
"""),
    cfg.FloatOpt("cpu_weight_multiplier", default=1.0,
                 help="Multiplier for free VCPUs; negative stacks (-1.0 "
                      "under the default ``packing``)."),
    cfg.FloatOpt("disk_weight_multiplier", default=1.0,
                 help="Multiplier for free disk; negative stacks (-1.0 "
                      "under the default ``packing``)."),
    cfg.FloatOpt("io_ops_weight_multiplier", default=-1.0,
                 help="""
Multiplier for the number of I/O-heavy operations (``num_io_ops``) a host
reports. The default, negative, prefers idle hosts; positive prefers busy
ones. Overridden per host by aggregate metadata of the same name.
"""),
    cfg.FloatOpt("num_instances_weight_multiplier", default=0.0,
                 help="""
Multiplier for the number of instances on a host. Positive prefers hosts
with more instances (packing), negative fewer (spreading); 0 disables.
"""),
    cfg.FloatOpt("least_routers_weight_multiplier", default=-1.0,
                 help="""
Multiplier for LeastRoutersWeigher: the routers an L3 agent hosts (its used
``CUSTOM_L3_ROUTER`` units). The default, negative, prefers the agent with
the fewest routers (Neutron's LeastRoutersScheduler).
"""),
    cfg.FloatOpt("least_networks_weight_multiplier", default=-1.0,
                 help="""
Multiplier for LeastNetworksWeigher: the networks a DHCP agent serves (its
used ``CUSTOM_DHCP_NETWORK`` units). The default, negative, prefers the
agent serving the fewest (Neutron's DHCP WeightScheduler).
"""),
    cfg.FloatOpt("hypervisor_version_weight_multiplier", default=1.0,
                 help="""
Multiplier for the ``hypervisor_version`` capability (an integer such as
libvirt's 8000000). Positive prefers newer hosts, negative older ones.
"""),
    cfg.FloatOpt("pci_weight_multiplier", default=1.0, min=0.0,
                 help="""
Multiplier for PCIWeigher: keeps hosts with free PCI devices for requests
that need them (a host weighs more the fewer free devices it has).
"""),
    cfg.FloatOpt("soft_affinity_weight_multiplier", default=1.0, min=0.0,
                 help="""
Multiplier for soft-affinity server groups: hosts with more members of the
group weigh more.
"""),
    cfg.FloatOpt("soft_anti_affinity_weight_multiplier", default=1.0,
                 min=0.0, help="""
Multiplier for soft-anti-affinity server groups: hosts with fewer members of
the group weigh more.
"""),
    cfg.FloatOpt("distance_weight_multiplier", default=1.0, min=0.0,
                 help="""
Multiplier for server groups' soft policies per level (soft-affinity and
soft-anti-affinity at rack, row…): hosts nearer to the group's members
weigh more under soft-affinity, farther ones under soft-anti-affinity,
distance counted in levels of ``[topology] levels``.
"""),
    cfg.FloatOpt("build_failure_weight_multiplier", default=1000000.0,
                 help="""
Multiplier for the ``failed_builds`` stat a host reports: hosts that failed
recent builds weigh less. The large default outweighs every other weigher,
so a failing host is used last, not disabled.
"""),
    cfg.FloatOpt("cross_cell_move_weight_multiplier", default=1000000.0,
                 help="""
Multiplier for CrossCellWeigher: when a request names a destination cell,
hosts of that cell weigh 1 and hosts of other cells -1.
"""),
    cfg.FloatOpt("image_props_weight_multiplier", default=0.0,
                 help="""
Multiplier for ImagePropertiesWeigher: positive prefers hosts already
running instances whose images share the requested image's properties
(packing), negative spreads them; 0 disables the weigher.
"""),
    cfg.FloatOpt("balanced_allocation_weight_multiplier", default=0.0,
                 help="""
Multiplier for BalancedAllocationWeigher (a Gantt weigher, not in the
``enabled_weighers`` list). Positive prefers hosts whose used fractions
of the resource classes would sit closest to each other after the
placement, so that no class runs out while others sit idle; 0 disables.
The default ``packing`` policy, ``balanced+stack``, adds the weigher with
a multiplier of 5.0 unless this option or the weighers are set by hand.
Overridden per host by aggregate metadata of the same name. See the
packing page of the admin guide for measured policies.
"""),
    cfg.ListOpt("balanced_allocation_resource_classes",
                default=["VCPU", "MEMORY_MB", "DISK_GB"],
                help="""
The resource classes BalancedAllocationWeigher compares, besides any other
class a request asks for. A host weighs only the classes it has capacity of.
"""),
    cfg.ListOpt("image_props_weight_setting", default=[],
                help="""
``property=ratio`` pairs weighing each image property in
ImagePropertiesWeigher (e.g. ``os_distro=10, hw_machine_type=1``). Empty:
every property weighs 1; otherwise unlisted properties weigh 0.
"""),
    cfg.IntOpt("max_io_ops_per_host", default=8, min=0,
               help="""
IoOpsFilter: hosts with this many I/O-heavy operations (``num_io_ops``) or
more are excluded. AggregateIoOpsFilter reads the same key from aggregate
metadata, the smallest value winning.
"""),
    cfg.IntOpt("max_instances_per_host", default=50, min=1,
               help="""
NumInstancesFilter: hosts with this many instances or more are excluded.
AggregateNumInstancesFilter reads the same key from aggregate metadata.
"""),
    cfg.StrOpt("image_properties_default_architecture", default=None,
               help="""
ImagePropertiesFilter: the architecture assumed for images that do not set
``hw_architecture`` (for example x86_64). Unset: such images match any.
"""),
    cfg.ListOpt("isolated_images", default=[],
                help="IsolatedHostsFilter: image ids that run only on "
                     "``isolated_hosts``."),
    cfg.ListOpt("isolated_hosts", default=[],
                help="IsolatedHostsFilter: hosts reserved for "
                     "``isolated_images``."),
    cfg.BoolOpt("restrict_isolated_hosts_to_isolated_images", default=True,
                help="""
IsolatedHostsFilter: isolated hosts run nothing but isolated images (True),
or also other images (False).
"""),
    cfg.StrOpt("aggregate_image_properties_isolation_namespace",
               default=None, help="""
AggregateImagePropertiesIsolation: only aggregate metadata keys starting
with this namespace (and the separator) are compared with image properties.
"""),
    cfg.StrOpt("aggregate_image_properties_isolation_separator",
               default=".",
               help="Separator between the namespace and the key."),
    cfg.ListOpt("provider_kinds", default=["compute"], help="""
The kinds of provider this profile's requests consider: ``compute``,
or any kind providers report (``volume``, ``network``, ``container``,
``pool`` for a standalone provider that names none...). Every enabled
filter and weigher must apply to each kind listed (Nova's compute
filters, such as NUMATopologyFilter, apply to ``compute`` only): a profile
that lists a kind one of its plugins does not apply to stops the service
at start-up.
"""),
    cfg.StrOpt("packing", default="balanced+stack", help="""
A packing policy laid over this profile's weighers: ``spread``,
``stack-ram``, ``stack``, ``balanced`` or ``balanced+stack`` (see the
packing page of the admin guide for what each sets and how each
measured). The policy's values replace the options it names (the RAM,
CPU, disk and balanced-allocation multipliers; BalancedAllocationWeigher
is added to ``enabled_weighers``). Empty: the weighers exactly as
configured, as Nova's. An unknown name stops the service at start-up.

The default, ``balanced+stack``, is Gantt's (Nova spreads): it applies
only where none of the options it replaces was set by hand. A
configuration that sets ``enabled_weighers`` or the RAM, CPU, disk or
balanced-allocation multiplier (here, or in the profile's group) keeps
exactly those weighers, with Nova's meaning, as if this were empty. Set
``packing`` explicitly to lay a policy over hand-set values anyway.
"""),
    cfg.BoolOpt("request_packing", default=False, help="""
Whether a request may name its own packing policy (``RequestSpec.packing``)
in this profile. When False, a request that names one is refused with
``InvalidRequest``.
"""),
    cfg.IntOpt("host_subset_size", default=1, min=1,
               help="""
The claimed host is picked at random among the best N weighed hosts. Values
above 1 reduce claim conflicts when many workers schedule at once, at the
cost of slightly less optimal packing.
"""),
    cfg.BoolOpt("shuffle_best_same_weighed_hosts", default=False,
                help="""
Shuffle hosts that share the best weight, so that identical hosts are used
evenly (useful for baremetal fleets).
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
