"""StatsIntake: agents' reports from the wire into the host cache, in
batches, on threads that never wait on the database.

::

    take/offer(primitive)
        ─▶ wire.peek (uuid, report_sequence) ─▶ not newer than held? dropped
        ─▶ the wire's checks (gantt.rpcapi.validate) on the primitive
        ─▶ wire.build_report: HostUpdate straight from the primitive,
           validated (bad: rejected, counted; a pending good report stays)
        ─▶ pending[uuid]  (a newer report replaces an unapplied one)
    drain()
        ─▶ unchanged ─▶ host cache
        ─▶ new, changed, persist due ─▶ to_store[uuid] ─▶ storing thread
              ─▶ StatsService.update_resource_stats (database, cache)

How a report is read cheaply is ``wire.py``'s; what is done with it is
this module's:

* **Stale first.** A report not newer than the one cached, pending or
  being stored for its host is dropped as soon as it is peeked at
  (``reports_stale``), before any object is built.
* **Coalescing.** Reports wait in ``pending``, one per host; a newer one
  replaces an unapplied older one (counted in ``reports_stale``). Stats
  are never lost: the newest valid report of every host is applied.
* **Who applies.** The stats topic's listener takes a batch of casts
  (:meth:`StatsIntake.take`) and then calls :meth:`StatsIntake.drain`
  itself, so reading and applying do not fight for the GIL; what the call
  topic's listener offers (:meth:`StatsIntake.offer`, older agents' casts)
  is applied by the intake's own thread, so that listener stays free for
  calls.
* **The database never blocks a listener.** A report that is new, changed,
  or due to refresh the stored liveness time (``[scheduler]
  report_persist_interval``) goes through
  ``StatsService.update_resource_stats`` as before, on a storing
  thread of its own (one report per host at a time, the newest).

Malformed input is rejected with a reason (one WARNING line ``Rejected
update_resource_stats message: <reason>``) and counted in
``messages_rejected``; nothing raised here reaches the messaging threads.
Every report is counted once: ``reports_applied``, ``reports_stale`` or
``messages_rejected``.
"""

import logging
import sys
import threading

from gantt import exception
from gantt import rejections
from gantt.rpcapi import validate
from gantt.scheduler.intake import report_rules
from gantt.scheduler.intake import wire

LOG = logging.getLogger(__name__)

METHOD = "update_resource_stats"


class _Pending:
    """A report waiting to be applied, and what it was made from."""

    __slots__ = ("report", "node", "primitive")

    def __init__(self, report, node, primitive):
        self.report = report
        self.node = node
        self.primitive = primitive

    @property
    def sequence(self):
        return self.report.report_sequence


class StatsIntake:
    """One worker's stats intake (see the module docstring).

    Two threads of its own: one applies reports offered by listeners that
    do not drain (:meth:`offer`), the other writes the reports that must
    go to the database, so that no listener ever waits on it.

    :param stats: the worker's StatsService (its cache, counters,
        configuration and full report path)
    """

    def __init__(self, stats, rejection_log=None):
        self.stats = stats
        self._limits = validate.Limits.from_conf(stats.conf)
        self._log = rejection_log or rejections.default(__name__)
        self._cache = stats.cache
        self._counters = stats.counters
        self._known = wire.KnownValid()
        self._lock = threading.Lock()
        # uuid -> _Pending: to apply to the cache / to store first
        self._pending = {}
        self._to_store = {}
        # one thread applies at a time; the others leave it the work
        self._draining = threading.Lock()
        self._wake = threading.Event()
        self._store_wake = threading.Event()
        self._stopping = False
        self._threads = []

    # -- taking reports ----------------------------------------------------

    def offer(self, compute_node):
        """Take one ``update_resource_stats`` cast's ``compute_node`` (its
        primitive, as it came off the wire); the intake's thread applies it.

        Never raises: a bad report is logged, counted and dropped.
        """
        if self._take(compute_node):
            self._wake.set()

    def take(self, compute_node):
        """:meth:`offer` for a caller that calls :meth:`drain` itself."""
        self._take(compute_node)

    def _take(self, primitive):
        try:
            self._offer(primitive)
        except exception.InvalidRequest as exc:
            self._reject(exc)
        except Exception:
            self._log.failed(METHOD, sys.exc_info())
            self._counters.add("messages_rejected")
        else:
            return True
        return False

    def _offer(self, primitive):
        key = wire.peek(primitive)
        if key is not None and not self._is_newest(*key):
            # changes nothing, whatever else it holds: not worth checking
            self._counters.add("reports_stale")
            return
        validate.check_arguments(METHOD, {"compute_node": primitive},
                                 self._limits)
        report, node = wire.build_report(primitive, self._cache.now(),
                                         self._known)
        self.stats.check_location(report.location)
        entry = _Pending(report, node, primitive)
        with self._lock:
            if self._is_newest(report.uuid, entry.sequence, report.boot_id):
                replaced = self._pending.get(report.uuid)
                self._pending[report.uuid] = entry
            else:
                replaced = entry
        if replaced is not None:
            # never to be applied: a newer report of its host is held
            self._counters.add("reports_stale")

    def _is_newest(self, uuid, sequence, boot_id):
        """Whether the report supersedes all this worker holds of its
        host (``report_rules.supersedes``)."""
        for held in (self._pending.get(uuid), self._to_store.get(uuid)):
            if held is not None and not report_rules.supersedes(
                    sequence, boot_id, held.sequence, held.report.boot_id):
                return False
        return self._cache.supersedes(uuid, sequence, boot_id)

    def _reject(self, exc):
        self._log.rejected(METHOD, exc)
        self._counters.add("messages_rejected")

    # -- applying them -----------------------------------------------------

    def pending(self):
        """How many reports wait to be applied or stored."""
        return len(self._pending) + len(self._to_store)

    def drain(self):
        """Apply every pending report, unless another thread is at it.

        Returns once nothing is pending or another thread took over; that
        thread sees what was offered meanwhile, so nothing is stranded.
        Reports that must be stored first go to the storing thread.
        """
        while self._pending:
            if not self._draining.acquire(blocking=False):
                return
            try:
                while True:
                    with self._lock:
                        batch, self._pending = self._pending, {}
                    if not batch:
                        break
                    interval = (self.stats.conf.scheduler
                                .report_persist_interval)
                    for entry in batch.values():
                        self._apply(entry, interval)
            finally:
                self._draining.release()

    def _apply(self, entry, persist_interval):
        report = entry.report
        try:
            if self._cache.needs_persisting(report, persist_interval):
                self._queue_store(entry)
                return
            # the database holds this content, so (unless the row holds
            # something else since) only liveness is new
            applied = self._cache.refresh_liveness(report)
            if applied is None:
                applied = self._cache.apply_report(report)
        except Exception:
            LOG.exception("Could not apply the report %d of %s",
                          report.report_sequence, report.host)
            return
        self._counters.add("reports_applied" if applied else "reports_stale")

    def _queue_store(self, entry):
        """New, changed, or time to refresh the stored liveness: the
        stats service's full path (database, then cache) on the storing
        thread."""
        uuid = entry.report.uuid
        with self._lock:
            held = self._to_store.get(uuid)
            if held is None or report_rules.supersedes(
                    entry.sequence, entry.report.boot_id, held.sequence,
                    held.report.boot_id):
                self._to_store[uuid] = entry
        if held is not None:
            self._counters.add("reports_stale")
        self._store_wake.set()

    def _store(self, entry):
        try:
            node = entry.node
            if node is None:
                node = wire.deserialize(entry.primitive)
            self.stats.update_resource_stats(node)
        except exception.HostNameTaken:
            pass        # counted and logged (at a bounded rate) already
        except exception.InvalidRequest as exc:
            self._reject(exc)
        except Exception:
            LOG.exception("Could not store the report %d of %s",
                          entry.sequence, entry.report.host)

    def _store_all(self):
        with self._lock:
            batch, self._to_store = self._to_store, {}
        for entry in batch.values():
            self._store(entry)

    def flush(self):
        """Apply and store all that is pending, in the calling thread."""
        self.drain()
        self._store_all()

    # -- the intake's threads ----------------------------------------------

    def start(self):
        for target, name in ((self._apply_loop, "stats-apply"),
                             (self._store_loop, "stats-store")):
            thread = threading.Thread(target=target, daemon=True, name=name)
            thread.start()
            self._threads.append(thread)

    def _apply_loop(self):
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            self.drain()

    def _store_loop(self):
        while not self._stopping:
            self._store_wake.wait()
            self._store_wake.clear()
            self._store_all()

    def stop(self, timeout=10):
        """Apply and store what is pending, then stop the threads."""
        self._stopping = True
        self._wake.set()
        self._store_wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self.flush()
