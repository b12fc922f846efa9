"""[filter_scheduler]: which filters and weighers run, and how they weigh."""

from oslo_config import cfg

GROUP = cfg.OptGroup(
    "filter_scheduler", title="Filter scheduler options",
    help="Filters, weighers and their knobs.")

DEFAULT_FILTERS = [
    "ComputeFilter",
    "ResourceFilter",
    "AvailabilityZoneFilter",
    "ComputeCapabilitiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
    "SameHostFilter",
    "DifferentHostFilter",
]

OPTS = [
    cfg.ListOpt("enabled_filters", default=DEFAULT_FILTERS,
                help="""
Filters applied to candidate hosts, in this order. Names are entry points in
the ``gantt.scheduler.filters`` group; an unknown name stops the service at
start-up. Put cheap, selective filters first.
"""),
    cfg.ListOpt("enabled_weighers",
                default=["RAMWeigher", "CPUWeigher", "DiskWeigher"],
                help="""
Weighers that rank the hosts that passed the filters. Names are entry points
in the ``gantt.scheduler.weighers`` group; an unknown name stops the service.
Each weigher's raw values are normalised to [0, 1] over the candidates and
multiplied by its multiplier; the sums rank the hosts.
"""),
    cfg.FloatOpt("ram_weight_multiplier", default=1.0,
                 help="""
Multiplier for free RAM. Positive spreads instances over the hosts with the
most free RAM; negative stacks (fills) hosts first.
"""),
    cfg.FloatOpt("cpu_weight_multiplier", default=1.0,
                 help="Multiplier for free VCPUs; negative stacks."),
    cfg.FloatOpt("disk_weight_multiplier", default=1.0,
                 help="Multiplier for free disk; negative stacks."),
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
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    return {GROUP: OPTS}
