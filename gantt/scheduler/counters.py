"""Counters: the worker's tallies behind ``get_statistics``.

Every service adds to them from its own threads (RPC calls, the stats
intake), hence the lock.
"""

import collections
import threading

import numpy as np


class Counters:
    """Thread-safe counters behind ``get_statistics``."""

    NAMES = ("requests", "placements", "no_valid_host", "reports_applied",
             "reports_stale", "messages_rejected")

    def __init__(self):
        self._lock = threading.Lock()
        self.values = collections.Counter()
        self.eliminations = collections.Counter()
        self.lags = collections.deque(maxlen=10000)

    def add(self, name, amount=1):
        with self._lock:
            self.values[name] += amount

    def eliminated(self, removed):
        """Count the hosts each filter removed (a list of Removal)."""
        with self._lock:
            for label, count in removed:
                self.eliminations[label] += count

    def peer_lag(self, seconds):
        with self._lock:
            self.values["peer_updates"] += 1
            self.lags.append(seconds)

    def lag_percentiles(self):
        """(p50, p99) in ms of the recorded peer lags, or (None, None)."""
        with self._lock:
            lags = np.array(self.lags)
        if not len(lags):
            return None, None
        p50, p99 = np.percentile(lags, [50, 99]) * 1000.0
        return float(p50), float(p99)
