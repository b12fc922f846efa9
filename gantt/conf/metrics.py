"""[metrics]: MetricsFilter and MetricsWeigher (as Nova's options)."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "metrics", title="Metrics weighing options",
    help="Which reported metrics weigh hosts, and how.")

OPTS = [
    cfg.FloatOpt("weight_multiplier", default=1.0,
                 help="""
Multiplier for MetricsWeigher. Overridden per host by the aggregate metadata
key ``metrics_weight_multiplier``.
"""),
    cfg.ListOpt("weight_setting", default=[],
                help="""
``name=ratio`` pairs: the weight of a host is the sum of each metric's value
times its ratio (e.g. ``cpu.percent=-1.0, memory.free=1.0``). MetricsFilter
removes hosts that do not report every metric listed here.
"""),
    cfg.BoolOpt("required", default=True,
                help="""
Whether every metric of ``weight_setting`` must be reported. Nova raises an
error when one is missing; Gantt weighs such a host as
``weight_of_unavailable`` either way, so that it is picked last (enable
MetricsFilter to remove it).
"""),
    cfg.FloatOpt("weight_of_unavailable", default=-10000.0,
                 help="The raw weight of a host missing a weighed metric."),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
