"""SchedulerWorker: one worker process, from start-up to graceful stop.

Start-up order matters: the worker listens (so no stats cast is missed)
before it loads its cache from the database, and it answers calls only
once that load is done; reports cast in between are applied as they come
and the newer of a stored and a cast report wins.
"""

import logging
import os
import queue
import socket
import threading

import oslo_messaging as messaging
from oslo_service import service

from gantt import rpc
from gantt import rpcapi
from gantt.db import api as db_api
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import server as rpc_server
from gantt.scheduler import manager as manager_mod

LOG = logging.getLogger(__name__)


class SchedulerWorker(service.ServiceBase):
    def __init__(self, conf):
        self.conf = conf
        self.manager = None
        self.servers = []
        self._stopping = threading.Event()
        self._sync_thread = None
        # claims are broadcast from a thread of their own, off the path of
        # the request that made them
        self._outbox = queue.Queue()
        self._sender = None

    def start(self):
        conf = self.conf
        name = "%s:%d" % (socket.gethostname(), os.getpid())
        self.db = db_api.Database.from_conf(conf)
        transport = rpc.get_transport(conf)
        self.client = rpc_client.SchedulerClient.from_conf(conf, transport)
        self.manager = manager_mod.SchedulerManager(
            conf, self.db, worker_name=name,
            broadcast=self._broadcast)
        endpoint = rpc_server.SchedulerEndpoint(self.manager)
        target = messaging.Target(exchange=rpcapi.EXCHANGE,
                                  topic=conf.scheduler.topic,
                                  server=socket.gethostname())
        self.servers = [rpc.get_server(transport, target, [endpoint],
                                       on_reject=self._rejected)]
        for url in conf.cells.stats_transport_urls:
            cell_transport = rpc.get_transport(conf, url=url)
            self.servers.append(rpc.get_server(
                cell_transport, target, [endpoint],
                on_reject=self._rejected))
        self._sender = threading.Thread(target=self._send_broadcasts,
                                        daemon=True, name="broadcast")
        self._sender.start()
        for server in self.servers:
            server.start()
        self.manager.load_cache()
        LOG.info("Worker %s serving topic %s with %d host(s); filters: %s; "
                 "weighers: %s", name, conf.scheduler.topic,
                 len(self.manager.cache),
                 ", ".join(f.name for f in self.manager.filters.filters),
                 ", ".join(w.name for w in self.manager.weighers.weighers))
        interval = conf.scheduler.usage_sync_interval
        if interval:
            self._sync_thread = threading.Thread(
                target=self._sync_loop, args=(interval,), daemon=True,
                name="usage-sync")
            self._sync_thread.start()

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
                self.client.provider_usage_changed(None, usages)
            except messaging.MessagingException as exc:
                # peers catch up at the next usage sync; the claim stands
                LOG.warning("Could not broadcast usage of %d provider(s): "
                            "%s", len(usages), exc)

    def _rejected(self, method, reason):
        self.manager.counters.add("messages_rejected")

    def _sync_loop(self, interval):
        while not self._stopping.wait(interval):
            try:
                self.manager.sync_usage()
                # lost aggregates_changed / providers_changed casts are
                # repaired here too
                self.manager.reload_aggregates()
                self.manager.reload_providers()
            except Exception:
                LOG.exception("Usage sync failed; will retry in %ds",
                              interval)

    def stop(self, graceful=True):
        """Stop taking messages and let in-flight ones finish."""
        LOG.info("Worker stopping: finishing in-flight requests")
        self._stopping.set()
        for server in self.servers:
            server.stop()
        for server in self.servers:
            server.wait()
        if self._sender is not None:
            self._outbox.put(None)
            self._sender.join(10)
        LOG.info("Worker stopped")

    def wait(self):
        self._stopping.wait()

    def reset(self):
        """SIGHUP: nothing to reload; options apply at the next start."""
