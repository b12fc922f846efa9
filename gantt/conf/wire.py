"""[wire]: how much one message may carry, and how refusals are logged."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "wire", title="Wire limits",
    help="Bounds on what one RPC message may carry. A message beyond them "
         "is refused with InvalidRequest before it is read.")

OPTS = [
    cfg.IntOpt("max_message_bytes", default=1048576, min=1024,
               help="""
Largest RPC message a worker reads, in bytes as it arrived from the broker.
A larger one is refused with ``InvalidRequest`` (a cast: logged and counted
in ``messages_rejected``) before its arguments are decoded into objects. A
full report of a large host (a few hundred child providers) is well under
the default of 1 MiB. Keep it below the database's own limit on a statement
(MariaDB's ``max_allowed_packet``, 16 MiB by default).
"""),
    cfg.IntOpt("max_report_resource_classes", default=256, min=1,
               help="""
Most distinct resource classes one report (a ``ComputeNode`` with its
child providers, or a standalone provider) may carry.
"""),
    cfg.IntOpt("max_report_traits", default=256, min=1,
               help="""
Most distinct traits one report (a ``ComputeNode`` with its child
providers, or a standalone provider) may carry.
"""),
    cfg.IntOpt("max_report_children", default=256, min=0,
               help="""
Most child providers one ``ComputeNode`` report may carry.
"""),
    cfg.IntOpt("max_report_capabilities", default=64, min=0,
               help="""
Most capabilities one standalone provider's report (``ProviderReport``)
may carry. Each name is 1 to 255 characters; each value a string of at
most 255 characters, a 64-bit integer, a finite float or a boolean.
"""),
    cfg.IntOpt("max_instances_per_request", default=1000, min=1,
               help="""
Most instance uuids one ``select_destinations`` call may list.
"""),
    cfg.IntOpt("rejection_log_burst", default=10, min=1,
               help="""
Refused messages each worker logs (one WARNING line each, with the reason,
never the message) per ``rejection_log_interval``. Further refusals in
that interval are only counted, and summed up in one line with the first
refusal after it.
Every refusal is counted in ``messages_rejected`` (``gantt stats``).

Related options:

* ``rejection_log_interval``
"""),
    cfg.IntOpt("rejection_log_interval", default=60, min=1,
               help="""
Seconds over which ``rejection_log_burst`` applies.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
