"""Refused and failed messages in the log: at a bounded rate, never whole.

A client that floods a worker with bad messages must not flood its log
(the issue that brought this in: 197 MB in 26 minutes). Each worker logs
at most ``[wire] rejection_log_burst`` lines per ``rejection_log_interval``
seconds; the refusals beyond that are only counted, and the next refusal
after the interval logs their number, by method. A reason is cut to
:data:`MAX_REASON` characters, so no payload reaches the log whole.

Counting is the caller's (``messages_rejected``): this only logs. oslo.log's
``rate_limit`` filter limits every logger of the process at once, which
would also hide the lines operators need in a flood; this limits only
these lines.
"""

import collections
import logging
import threading
import time

#: longest reason logged, in characters
MAX_REASON = 300


def _cut(text):
    text = str(text)
    if len(text) > MAX_REASON:
        return text[:MAX_REASON] + "... (%d characters)" % len(text)
    return text


class RejectionLog:
    """One worker's log of refused and failed messages.

    :param logger: where the lines go
    :param clock: monotonic seconds (tests pass their own)
    """

    def __init__(self, logger, burst=10, interval=60, clock=time.monotonic):
        self._logger = logger
        self._burst = burst
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._logged = 0
        self._quiet = collections.Counter()

    @classmethod
    def from_conf(cls, conf, logger):
        return cls(logger, conf.wire.rejection_log_burst,
                   conf.wire.rejection_log_interval)

    def rejected(self, method, reason):
        """A message refused with ``reason``: one WARNING line, if the
        rate allows."""
        if self._may_log(method):
            self._logger.warning("Rejected %s message: %s", method,
                                 _cut(reason))

    def failed(self, method, exc_info):
        """A message whose handling raised something unexpected: one
        ERROR line with the traceback, if the rate allows."""
        if self._may_log(method):
            self._logger.error("Unexpected error while handling a %s "
                               "message (a call is answered with "
                               "InternalError)", method, exc_info=exc_info)

    def _may_log(self, method):
        with self._lock:
            now = self._clock()
            quiet = None
            if now - self._started >= self._interval:
                quiet, self._quiet = self._quiet, collections.Counter()
                self._started, self._logged = now, 0
            allowed = self._logged < self._burst
            if allowed:
                self._logged += 1
            else:
                self._quiet[str(method)] += 1
        if quiet:
            self._logger.warning(
                "%d more message(s) refused or failed in the last %ds and "
                "not logged one by one: %s", sum(quiet.values()),
                self._interval, ", ".join(
                    "%s %d" % kv for kv in sorted(quiet.items())))
        return allowed


def default(logger_name):
    """A RejectionLog with the default rate, for servers built without
    configuration (tests, tools)."""
    return RejectionLog(logging.getLogger(logger_name))
