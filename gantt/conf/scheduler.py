"""[scheduler]: how the service talks, retries and decides what is alive."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "scheduler", title="Scheduler service options",
    help="Options for the gantt-scheduler service as a whole.")

OPTS = [
    cfg.StrOpt("topic", default="gantt-scheduler",
               help="""
The RPC topic the scheduler listens on for calls (and for the resource
stats casts of agents that do not use ``stats_topic`` yet). Every worker of
one scheduling domain must use the same topic.

Related options:

* ``[DEFAULT] transport_url``
* ``stats_topic``
"""),
    cfg.StrOpt("stats_topic",
               help="""
The RPC topic of agents' resource stats casts (``update_resource_stats``,
fanout). Workers take them on a connection and listener thread of their
own, so that calls never wait behind a flood of reports; agents (anything
using ``SchedulerClient``) cast their reports here. Unset, it is
``<topic>-stats``.

Workers also keep taking stats casts on ``topic``, where agents of older
releases send them. Upgrade the workers before the agents: an older worker
does not listen on this topic. Agents that must keep reporting to older
workers can set this option to the value of ``topic``; set so on the
workers, it makes them take stats on the connection that serves calls, as
older releases did.

Related options:

* ``topic``
* ``[cells] stats_transport_urls``
"""),
    cfg.IntOpt("workers", default=1, min=1,
               help="""
Number of scheduler worker processes to start. Each worker keeps its own
host-state cache, serves calls and receives every stats cast (fanout).
Claims are optimistic and checked in the database, so workers need no
coordination with each other.
"""),
    cfg.IntOpt("max_attempts", default=3, min=1,
               help="""
Maximum number of build attempts for one instance: the claimed host plus
``max_attempts - 1`` alternates returned with each selection, all from the
claimed host's cell.
"""),
    cfg.IntOpt("claim_retry_count", default=10, min=1,
               help="""
How many candidate hosts one instance's claim may try after a claim conflict
(another worker changed the host first) or a capacity miss caused by a stale
cache, before NoValidHost is raised.
"""),
    cfg.IntOpt("service_down_time", default=60, min=1,
               help="""
Seconds without a stats report after which a host is considered down and is
no longer a candidate. Set it to a few times the agents' report interval.
"""),
    cfg.IntOpt("report_persist_interval", default=30, min=0,
               help="""
Seconds during which a worker does not write again a host report whose
content (inventories, traits, aggregates, zone, stats…) is unchanged since
it last wrote it. Agents re-send full state every report interval; writing
each unchanged copy from every worker would cost a database transaction per
cast per worker. Keep it below ``service_down_time`` so that the stored
report time stays a valid liveness signal for workers that start later.
0 writes every report.

Related options:

* ``service_down_time``
"""),
    cfg.IntOpt("usage_sync_interval", default=60, min=0,
               help="""
Seconds between full re-reads of provider usage and generations from the
database into the worker's cache. Peer workers also broadcast their claims;
this bounds staleness when a broadcast is lost, and how long a forged or
corrupt broadcast can contradict the database. Each sync also announces
again (``provider.vacant``, once) the providers of ``vacancy_kinds`` that
stayed vacant since the previous one and are not retired, and re-reads the
provider trees written through the Placement API since the previous one
(a lost ``trees_changed`` cast). 0 disables it.
"""),
    cfg.BoolOpt("broadcast_claims", default=True,
                help="""
Broadcast every claim and release to the other workers (fanout cast) so their
caches see the new usage without waiting for the next usage sync.
"""),
    cfg.ListOpt("vacancy_kinds", default=["container"],
                help="""
Kinds of standalone provider whose vacancy matters to their owner. When the
last allocation leaves a provider of one of these kinds, the worker that
committed the change emits the versioned notification ``provider.vacant``
(with the provider's generation), and ``gantt host-list --vacant`` lists it;
a provider still vacant, and not retired, one ``usage_sync_interval`` later
is announced once more by every worker (an announcement lost with its worker
is so made again). The owner may then retire it with
``retire_provider(uuid, generation)``.
Empty: no provider is ever vacant.

Related options:

* ``[oslo_messaging_notifications] driver`` (no driver: nothing is sent)
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
