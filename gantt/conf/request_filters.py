"""Request pre-filters' options, in ``[scheduler]`` as Nova names them.

The pre-filters narrow the candidates before any filter runs (see
``gantt/scheduler/pipeline/candidates.py``); each is off unless said otherwise.
"""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "scheduler", title="Scheduler service options",
    help="Options for the gantt-scheduler service as a whole.")

OPTS = [
    cfg.BoolOpt("limit_tenants_to_placement_aggregate", default=False,
                help="""
A project named in an aggregate's ``filter_tenant_id*`` metadata may only use
the hosts of such aggregates (other projects are not restricted).
"""),
    cfg.BoolOpt("placement_aggregate_required_for_tenants", default=False,
                help="""
With ``limit_tenants_to_placement_aggregate``: a project that no aggregate
names gets no host at all.
"""),
    cfg.BoolOpt("query_placement_for_availability_zone", default=False,
                help="""
Narrow to the requested availability zone before filtering (the same rule
as AvailabilityZoneFilter: a host's zone is its aggregates'
``availability_zone`` metadata, else the zone its agent reports).
"""),
    cfg.BoolOpt("query_placement_for_image_type_support", default=False,
                help="""
Require the trait ``COMPUTE_IMAGE_TYPE_<FORMAT>`` for the image's
``disk_format`` property (e.g. qcow2, raw).
"""),
    cfg.BoolOpt("enable_isolated_aggregate_filtering", default=False,
                help="""
Exclude aggregates whose metadata ``trait:<TRAIT>=required`` names a trait
the request does not require.
"""),
    cfg.BoolOpt("image_metadata_prefilter", default=False,
                help="""
Require the traits image properties imply: ``hw_disk_bus``/``hw_cdrom_bus``
-> COMPUTE_STORAGE_BUS_*, ``hw_video_model`` -> COMPUTE_GRAPHICS_MODEL_*,
``hw_vif_model`` -> COMPUTE_NET_VIF_MODEL_*, ``hw_architecture`` ->
HW_ARCH_*, ``hw_emulation_architecture`` -> COMPUTE_ARCH_*,
``hw_viommu_model`` -> COMPUTE_VIOMMU_*.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
