"""[group_scheduling]: holistic groups (reserve_group and its kin)."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "group_scheduling", title="Holistic group scheduling",
    help="Groups decided whole (reserve_group, extend_group, plan_group) "
         "and their reservations; see doc/source/admin/groups.rst.")

OPTS = [
    cfg.FloatOpt("max_time_budget", default=5.0, min=0.01,
                 help="""
Most seconds the joint solver may spend on one group, whatever the request
asks (its ``time_budget`` is cut to this). The solver starts from the
sequential answer; when the budget runs out its best answer so far is used
if it beats the sequential one, else the sequential one, and the plan says
which (and its gap, when the solver proved a bound).
"""),
    cfg.IntOpt("max_reservation_ttl", default=86400, min=1,
               help="""
Most seconds a member slot may stay reserved before a member takes it over
(a request's ``reservation_ttl`` is cut to this).
"""),
    cfg.IntOpt("max_members", default=1000, min=1,
               help="""
Most members one reserve_group, extend_group or plan_group may ask for.
"""),
    cfg.IntOpt("sweep_interval", default=30, min=0,
               help="""
Seconds between two sweeps of the expired reservations by each worker (0:
this worker never sweeps). Sweepers on several workers at once are safe:
each slot is released by exactly one of them.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
