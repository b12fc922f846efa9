"""SchedulerWorker: one worker process, from start-up to graceful stop.

Start-up order matters: the worker listens (so no stats cast is missed)
before it loads its cache from the database, and it answers calls only
once that load is done; reports cast in between are applied as they come
and the newer of a stored and a cast report wins.

Each bus (the top-level one and each ``[cells] stats_transport_urls``) gets
two servers, each with its own connection and listener thread:

* the **scheduler topic** serves calls (in a worker pool) and the
  ``update_resource_stats`` casts of older agents, which its listener hands
  to the stats intake without deserializing them (the intake's thread
  applies them);
* the **stats topic** (``[scheduler] stats_topic``) takes reports in
  batches on its listener thread, which also applies them: a flood of
  reports never puts a call behind it.
"""

import gc
import logging
import os
import queue
import socket
import threading

import oslo_messaging as messaging
from oslo_service import service

from gantt import notifier as gantt_notifier
from gantt import rejections
from gantt import reports
from gantt import rpc
from gantt import rpcapi
from gantt import scheduler as scheduler_mod
from gantt.db import api as db_api
from gantt.nova import server as nova_server
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import server as rpc_server
from gantt.rpcapi import validate
from gantt.scheduler.intake import batching

LOG = logging.getLogger(__name__)

#: the stats listener hands over up to this many reports at once, waiting
#: at most STATS_BATCH_WAIT seconds for them (coalescing happens within and
#: across batches)
STATS_BATCH = 256
STATS_BATCH_WAIT = 0.05
#: worker threads of a stats server: only calls and odd casts use them
STATS_POOL = 4
#: how long a stopping worker waits for queued notifications to be sent
NOTIFY_FLUSH_TIMEOUT = 5


def settle_heap():
    """Free what loading left behind, then freeze the rest (modules, the
    host cache): full garbage collections no longer walk them, only what
    requests allocate since (a full collection walked the whole heap and
    could take a third of a large group's reservation)."""
    gc.collect()
    gc.freeze()


class SchedulerWorker(service.ServiceBase):
    """:param transport: the top-level bus; None (``gantt-scheduler``):
        one from ``[DEFAULT] transport_url``. An in-process caller passes
        its own (``gantt.fixture`` passes a ``fake:`` one, which only its
        own clients reach); the worker does not clean it up.
    :param notification_transport: where notifications go; None: as
        ``[oslo_messaging_notifications]`` says. An in-process caller on
        ``fake:`` passes one on its transport's bus (see
        ``gantt.rpc.notification_transport``), or its listeners would
        hear nothing.
    """

    def __init__(self, conf, transport=None, notification_transport=None):
        self.conf = conf
        self._transport = transport
        self._notification_transport = notification_transport
        self.name = None
        self.notifier = None
        self.scheduler = None
        self.intake = None
        self.servers = []
        self._stopping = threading.Event()
        self._sync_thread = None
        self._sweep_thread = None
        # claims are broadcast from a thread of their own, off the path of
        # the request that made them
        self._outbox = queue.Queue()
        self._sender = None

    def start(self):
        conf = self.conf
        self.name = name = "%s:%d" % (socket.gethostname(), os.getpid())
        # a report file watcher, if configured, for this process too
        reports.setup(conf, "gantt-scheduler", worker=True)
        self.db = db_api.Database.from_conf(conf)
        transport = self._transport or rpc.get_transport(conf)
        self.client = rpc_client.SchedulerClient.from_conf(conf, transport)
        # before the engine: vacancies are announced through it
        self.notifier = gantt_notifier.SchedulingNotifier.from_conf(
            conf, transport=self._notification_transport)
        self.scheduler = scheduler_mod.build(
            conf, self.db, worker_name=name, broadcast=self._broadcast,
            on_vacant=self.notifier.provider_vacant)
        self.limits = validate.Limits.from_conf(conf)
        self.rejection_log = rejections.RejectionLog.from_conf(
            conf, logging.getLogger(rpc.__name__))
        self.intake = batching.StatsIntake(
            self.scheduler.stats, rejection_log=self.rejection_log)
        topic = conf.scheduler.topic
        stats_topic = rpcapi.stats_topic(topic, conf.scheduler.stats_topic)
        buses = [transport] + [rpc.get_transport(conf, url=url)
                               for url in conf.cells.stats_transport_urls]
        # stats servers start first: a worker that answers anything (even
        # get_statistics, before its cache is loaded) has its stats queues
        # bound already
        self.servers = []
        if stats_topic != topic:
            self.servers += [(self._stats_server(bus, stats_topic),
                              STATS_POOL) for bus in buses]
        self.servers += [(self._call_server(bus, topic), None)
                         for bus in buses]
        if conf.nova.enabled:
            self.servers.append((self._nova_server(transport), None))
        self._sender = threading.Thread(target=self._send_broadcasts,
                                        daemon=True, name="broadcast")
        self._sender.start()
        self.intake.start()
        for server, pool in self.servers:
            server.start(override_pool_size=pool)
        self.scheduler.stats.load_cache()
        settle_heap()
        pipeline = self.scheduler.placer.pipeline
        LOG.info("Worker %s serving topic %s, stats on %s, with %d "
                 "host(s); filters: %s; weighers: %s", name, topic,
                 stats_topic, len(self.scheduler.stats.cache),
                 ", ".join(pipeline.filter_names),
                 ", ".join(pipeline.weigher_names))
        interval = conf.scheduler.usage_sync_interval
        if interval:
            self._sync_thread = threading.Thread(
                target=self._sync_loop, args=(interval,), daemon=True,
                name="usage-sync")
            self._sync_thread.start()
        sweep = conf.group_scheduling.sweep_interval
        if sweep:
            # every worker sweeps: each expired slot is freed by one
            self._sweep_thread = threading.Thread(
                target=self._sweep_loop, args=(sweep,), daemon=True,
                name="group-sweep")
            self._sweep_thread.start()

    def _stats_server(self, bus, stats_topic):
        """Reports in batches, taken and applied on its listener thread."""
        target = messaging.Target(exchange=rpcapi.EXCHANGE,
                                  topic=stats_topic,
                                  server=socket.gethostname())
        return rpc.get_server(
            bus, target, [rpc_server.StatsEndpoint(self.scheduler)],
            on_reject=self._rejected, limits=self.limits,
            rejection_log=self.rejection_log,
            inline={batching.METHOD: self.intake.take},
            batch=(STATS_BATCH, STATS_BATCH_WAIT),
            after_batch=self.intake.drain)

    def _call_server(self, bus, topic):
        """Calls in a worker pool; older agents' reports to the intake."""
        target = messaging.Target(exchange=rpcapi.EXCHANGE, topic=topic,
                                  server=socket.gethostname())
        return rpc.get_server(
            bus, target, [rpc_server.SchedulerEndpoint(
                self.scheduler, notifier=self.notifier,
                tell_peers=self._providers_changed)],
            on_reject=self._rejected, limits=self.limits,
            rejection_log=self.rejection_log,
            inline={batching.METHOD: self.intake.offer},
            skip={"provider_usage_changed": self._sent_here})

    def _nova_server(self, transport):
        """Nova's scheduler topic (``[nova] enabled``), on Nova's bus."""
        url = self.conf.nova.transport_url
        bus = rpc.get_transport(self.conf, url=url) if url else transport
        LOG.info("Serving Nova's scheduler RPC API on topic %s of exchange "
                 "%s", self.conf.nova.topic, self.conf.nova.control_exchange)
        return nova_server.build(self.conf, bus, self.scheduler)

    def _sent_here(self, ctxt):
        """A usage cast this worker sent (its cache has it already)."""
        return ctxt.get(rpcapi.SENDER_CONTEXT_KEY) == self.name

    def _broadcast(self, usages):
        """Queue a claim's usage for the peers; the caller does not wait."""
        self._outbox.put(usages)

    def _send_broadcasts(self):
        """Publish queued usages, merging what piled up into one cast."""
        while True:
            usages = self._outbox.get()
            if usages is None:
                return
            while not self._outbox.empty():
                more = self._outbox.get_nowait()
                if more is None:
                    self._outbox.put(None)
                    break
                usages = usages + more
            try:
                self.client.provider_usage_changed(None, usages,
                                                   sender=self.name)
            except messaging.MessagingException as exc:
                # peers catch up at the next usage sync; the claim stands
                LOG.warning("Could not broadcast usage of %d provider(s): "
                            "%s", len(usages), exc)

    def _providers_changed(self):
        """Tell every worker (this one too) to re-read the standalone
        providers: a provider stored, deleted or retired here."""
        try:
            self.client.providers_changed(None)
        except messaging.MessagingException as exc:
            # peers catch up at the next usage sync; the change stands
            LOG.warning("Could not tell the other workers that the "
                        "providers changed: %s", exc)

    def _rejected(self, method, reason):
        self.scheduler.counters.add("messages_rejected")

    def _sync_loop(self, interval):
        while not self._stopping.wait(interval):
            try:
                # lost aggregates_changed / providers_changed casts are
                # repaired here too, and lost vacancy announcements
                self.scheduler.stats.resync()
                self.scheduler.vacancy.reannounce()
            except Exception:
                LOG.exception("Usage sync failed; will retry in %ds",
                              interval)

    def _sweep_loop(self, interval):
        while not self._stopping.wait(interval):
            try:
                self.scheduler.groups.sweep()
            except Exception:
                LOG.exception("Sweeping expired group reservations failed; "
                              "will retry in %ds", interval)

    def stop(self, graceful=True):
        """Stop taking messages and let in-flight ones finish."""
        LOG.info("Worker stopping: finishing in-flight requests")
        self._stopping.set()
        for server, _pool in self.servers:
            server.stop()
        for server, _pool in self.servers:
            server.wait()
        if self.intake is not None:
            # reports taken but not applied yet go into the cache
            self.intake.stop()
        if self._sender is not None:
            self._outbox.put(None)
            self._sender.join(10)
        if self.notifier is not None and not self.notifier.flush(
                NOTIFY_FLUSH_TIMEOUT):
            LOG.warning("Notifications not sent within %ds of stopping "
                        "were dropped", NOTIFY_FLUSH_TIMEOUT)
        LOG.info("Worker stopped")

    def wait(self):
        self._stopping.wait()

    def reset(self):
        """SIGHUP: nothing to reload; options apply at the next start."""
