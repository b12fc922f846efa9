"""[api]: the Placement-compatible REST API (``gantt-api``)."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "api", title="Placement REST API",
    help="The Placement-compatible REST API served by ``gantt-api`` (or "
         "by a WSGI server through ``gantt.api.wsgi``), on the scheduler's "
         "own database.")

OPTS = [
    cfg.StrOpt("auth_strategy", default="keystone",
               choices=[("keystone", "keystonemiddleware's auth_token "
                                     "checks every request but GET /"),
                        ("noauth2", "no authentication: the X-Auth-Token "
                                    "header names the user (and project "
                                    "after a colon); the user 'admin' has "
                                    "the admin role. For tests and trials "
                                    "only.")],
               help="""
How the API authenticates its callers, as Placement's option of the same
name: ``keystone`` reads ``[keystone_authtoken]``.
"""),
    cfg.HostAddressOpt("host", default="127.0.0.1",
                       help="""
Address ``gantt-api`` (the development server) listens on. A WSGI server
(uwsgi, mod_wsgi) running ``gantt.api.wsgi`` ignores it.
"""),
    cfg.PortOpt("port", default=8778,
                help="""
Port ``gantt-api`` (the development server) listens on; 8778 is
Placement's.
"""),
    cfg.BoolOpt("notify_workers", default=True,
                help="""
Tell the scheduler workers of every write the API commits (a fanout cast of
the providers' new usage, as a worker's claim does, and a reload cast for
a change of inventory, traits or aggregates), so that their caches see the
write before the next request. Off only for an API with no workers to tell
(tests without RabbitMQ).
"""),
    cfg.IntOpt("compute_node_down_time", default=300, min=0, help="""
Read by the scheduler workers. A compute node that no Gantt agent
reports, made a host by the API (a root provider with the
``COMPUTE_NODE`` trait, as nova-compute creates it), is up while its last
sign of life is younger than this many seconds; a sign of life is a REST
write to its provider tree, or one of Nova's instance-info casts naming
its host (``sync_instance_info``, sent every ``[DEFAULT]
scheduler_instance_sync_interval``, 120 s by default, with ``[nova]
enabled``). Keep it above that interval. 0: such a node is never down by
age; only its ``COMPUTE_STATUS_DISABLED`` trait (Nova's disabled compute
service) or the loss of ``COMPUTE_NODE`` stops it being chosen. Hosts
reported by agents keep ``[scheduler] service_down_time``.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
