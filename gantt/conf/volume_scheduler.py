"""[volume_scheduler]: the multipliers of the volume weighers.

Named and defaulted as Cinder's options of the same names (in Cinder's
``[DEFAULT]``), so a volume service's operators find what they know.
"""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "volume_scheduler", title="Volume weighing options",
    help="Multipliers of the weighers that apply to volume backends "
         "(CapacityWeigher, AllocatedCapacityWeigher, VolumeNumberWeigher, "
         "GoodnessWeigher).")

OPTS = [
    cfg.FloatOpt("capacity_weight_multiplier", default=1.0,
                 help="""
Multiplier for CapacityWeigher (free capacity, thin-aware). Positive spreads
volumes over the backends with the most room; negative stacks them. As in
Cinder, a backend reporting ``infinite`` or ``unknown`` capacity is weighed
last either way.
"""),
    cfg.FloatOpt("allocated_capacity_weight_multiplier", default=-1.0,
                 help="""
Multiplier for AllocatedCapacityWeigher (capacity allocated on the backend).
Negative prefers the backend with the least allocated; positive stacks.
"""),
    cfg.FloatOpt("volume_number_multiplier", default=-1.0,
                 help="""
Multiplier for VolumeNumberWeigher (the number of volumes the backend
holds). Negative spreads; positive stacks.
"""),
    cfg.FloatOpt("goodness_weight_multiplier", default=1.0,
                 help="""
Multiplier for GoodnessWeigher (the backend's goodness_function, 0 to 100).
Cinder has no option for it and uses 1.0.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
