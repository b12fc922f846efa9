"""``[nova]``: serving Nova's scheduler RPC API (Gantt in nova-scheduler's
place; see doc/source/admin/nova.rst).

The names follow Nova's where Nova has one: ``control_exchange`` and
``default_availability_zone`` are Nova's ``[DEFAULT]`` options of those
names, which must have the same values here as in nova.conf.
"""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "nova", title="Nova's scheduler RPC API",
    help="Serve Nova's scheduler topic, so that Nova's conductor, API and "
         "computes use Gantt in place of nova-scheduler.")

OPTS = [
    cfg.BoolOpt("enabled", default=False,
                help="""
Each gantt-scheduler worker also serves Nova's scheduler RPC API (4.5, as
Nova 34 sends it) on ``topic`` of ``control_exchange``. Run no
nova-scheduler on the same topic: both would take Nova's calls.
"""),
    cfg.StrOpt("topic", default="scheduler",
               help="Nova's scheduler topic (Nova's ``RPC_TOPIC``)."),
    cfg.StrOpt("control_exchange", default="nova",
               help="""
The exchange Nova's services send on: Nova's ``[DEFAULT] control_exchange``.
"""),
    cfg.StrOpt("transport_url", secret=True,
               help="""
The message bus of Nova's API and super-conductor (Nova's ``[DEFAULT]
transport_url``); unset: Gantt's own ``[DEFAULT] transport_url``.
"""),
    cfg.StrOpt("default_availability_zone", default="nova",
               help="""
The zone a Selection names for a host that is in none (Nova's ``[DEFAULT]
default_availability_zone``).
"""),
    cfg.StrOpt("default_cell_uuid",
               regex=r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                     r"[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$",
               help="""
The cell a Selection names for a host whose agent reported none. Nova's
conductor looks a host's cell up by this uuid after a failed build; set it
to the uuid of cell1 (``nova-manage cell_v2 list_cells``) when Nova's
computes report through Placement and name no cell. gantt-api stores it as
the cell of the compute nodes Nova's computes make through the Placement
API, so that moves Nova keeps in the instance's cell find them.
"""),
    cfg.StrOpt("api_database_connection", secret=True,
               help="""
Nova's API database (Nova's ``[api_database] connection``), read only.
gantt-api reads there the cells' databases and, in their
``compute_nodes`` tables, the service host and the hypervisor's
capabilities (``supported_instances``, ``hypervisor_type``,
``hypervisor_version``) of each compute node nova-compute makes through
the Placement API, as nova-scheduler reads them. Unset: such a node is a
host named after the node, with no capabilities; set it when a compute
service's host name differs from its node's (the hypervisor's host name)
or when ImagePropertiesFilter or ComputeCapabilitiesFilter is enabled.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
