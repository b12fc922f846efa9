"""[topology]: the levels of the datacenter (failure domains)."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "topology", title="Topology",
    help="""
The levels of the datacenter that server groups may name in policies per
level (anti-affinity at rack, affinity at row…), outermost first. See
doc/source/admin/topology.rst.
""")

OPTS = [
    cfg.ListOpt("levels", default=["datacenter", "room", "row", "rack"],
                item_type=cfg.types.String(max_length=64),
                help="""
The levels, outermost first; ``host`` is always the last level and need
not be listed. A provider's location (``room=r1/row=b/rack=b07``, from its
report or from aggregates whose metadata says ``topology_level=<level>``)
names some of them, in this order. Reports naming another level are
refused (InvalidLocation). ``zone`` is the availability zone: listed, it
has its place for soft policies' distance; listed or not, hard policies
may name it, a host's domain there being its reported availability
zone, and no location may name it. Changing the list is an operator
action: every worker records the levels it starts with in the database
and logs a change (old -> new, with the number of hosts whose location
names a level no longer listed), then those hosts;
``gantt-status upgrade check`` warns of both.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
