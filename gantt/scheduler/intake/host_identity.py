"""One host name, one compute node: the cache's side, and the refusals.

The database judges every report of a new provider (a new uuid always
needs storing): ``gantt.db.reports`` refuses a report naming a host that
another compute node holds (``HostNameTaken``), backed by a unique key
on the host name. Here:

* while the database cannot be reached, the cache judges instead, from
  the rows it holds (:func:`check_cached`);
* refusals are counted (``messages_rejected``) and logged at a bounded
  rate: a forger repeating the same report every second must not flood
  the log (:class:`RefusalLog`).

When the database lets a new provider take a name (the operator deleted
the old compute node, see ``gantt-manage host delete``), the cache
retires the old row (``HostStateCache.retire_host_rows``).
"""

import logging
import threading
import time

from gantt import exception

LOG = logging.getLogger(__name__)

#: seconds between two log lines about the same (host, provider)
LOG_INTERVAL = 60.0
#: (host, provider) pairs remembered; beyond, the memory starts again
_REMEMBERED = 4096


def check_cached(cache, report):
    """HostNameTaken when the cache holds ``report.host`` under another
    compute node than ``report.uuid``."""
    holder = cache.host_holder(report.host, report.uuid)
    if holder is not None:
        raise exception.HostNameTaken(host=report.host, holder=holder,
                                      uuid=report.uuid)


class RefusalLog:
    """Counts every refused report; logs each (host, provider) at most
    once per ``interval`` seconds, with how many were refused since."""

    def __init__(self, counters, clock=time.monotonic,
                 interval=LOG_INTERVAL):
        self._counters = counters
        self._clock = clock
        self._interval = interval
        self._lock = threading.Lock()
        self._seen = {}         # (host, uuid) -> [last logged, refused since]

    def refuse(self, exc):
        self._counters.add("messages_rejected")
        key = (exc.kwargs.get("host"), exc.kwargs.get("uuid"))
        now = self._clock()
        with self._lock:
            if len(self._seen) > _REMEMBERED:
                self._seen.clear()
            entry = self._seen.setdefault(key, [None, 0])
            entry[1] += 1
            if entry[0] is not None and now - entry[0] < self._interval:
                return
            entry[0], count = now, entry[1]
            entry[1] = 0
        LOG.warning("Refused %d report(s): %s", count, exc)
