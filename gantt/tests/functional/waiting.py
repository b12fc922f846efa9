"""Waiting in the functional tests: for a state, never for a time.

A test waits until what it needs is so (a daemon's "serving" line in its
log, a worker answering with a host, a file written), polling. Nothing
here says how long that should take: a machine at load 40 takes far
longer than an idle one, and a wrong answer is told by the answer, not by
its lateness. One generous bound, ``GANTT_TEST_WAIT`` seconds (default
600), only keeps a test that can never succeed from hanging the run;
when it gives up it says what it waited for, what it saw last, and the
tail of the daemon's log.

Calls get the same bound (``CALL``): an RPC client's timeout, a command's
``subprocess`` timeout, an HTTP request's.
"""

import os
import time

WAIT = float(os.environ.get("GANTT_TEST_WAIT", "600"))
CALL = WAIT
TAIL_LINES = 60
# what each daemon logs once it serves (gantt.service, gantt.cmd.api)
SCHEDULER_SERVING = " serving topic "
API_SERVING = "gantt-api serving on http://"


def tail(text, lines=TAIL_LINES):
    """The last ``lines`` lines of ``text``."""
    return "\n".join(text.splitlines()[-lines:])


def read_log(path):
    """A callable giving the text of the log file ``path`` ("" if none)."""
    def read():
        try:
            with open(path, errors="replace") as log:
                return log.read()
        except OSError:
            return ""
    return read


class GaveUp(AssertionError):
    """A state never came about within ``GANTT_TEST_WAIT``."""


def until(what, check, log=None, ignoring=(), interval=0.1):
    """``check()``'s first true value, polled every ``interval`` s.

    :param what: what is waited for, as the failure should say it
    :param log: a callable giving the log text to show on giving up
    :param ignoring: exceptions of ``check`` that mean "not yet"
    :raises GaveUp: after ``WAIT`` seconds without it
    """
    deadline = time.monotonic() + WAIT
    last = None
    while True:
        try:
            value = check()
        except ignoring as exc:
            value, last = None, exc
        else:
            last = value
        if value:
            return value
        if time.monotonic() > deadline:
            raise GaveUp(_gave_up(what, last, log))
        time.sleep(interval)


def _gave_up(what, last, log):
    lines = ["gave up after %gs (GANTT_TEST_WAIT) waiting for %s; last "
             "seen: %r" % (WAIT, what, last)]
    if log is not None:
        lines += ["--- log tail ---", tail(log())]
    return "\n".join(lines)


def every_worker(what, answer, holds, workers, log=None):
    """Poll ``answer()`` (a SchedulerStatistics, from whichever worker
    takes the call) until each of ``workers`` distinct workers has
    answered with ``holds(answer)`` true: the state of each worker, not a
    run of answers from who knows which.

    :returns: ``{worker name: its first answer that held}``
    """
    held = {}

    def all_hold():
        stats = answer()
        if holds(stats):
            held.setdefault(stats.worker, stats)
        return len(held) >= workers

    try:
        until("%s, by %d workers" % (what, workers), all_hold, log=log)
    except GaveUp as exc:
        raise GaveUp("%s\n(it held on workers: %s)" % (
            exc, ", ".join(held) or "none")) from None
    return held


def when(value, holds):
    """``value`` if ``holds(value)``, else None (for :func:`until`)."""
    return value if holds(value) else None


def agreeing(what, check, answers, log=None):
    """Until ``answers`` answers in a row make ``check()`` true: for a
    state no answer says which worker holds (a host listed or not, an
    aggregate's effect), asked of whichever workers take the calls."""
    run = [0]

    def in_a_row():
        run[0] = run[0] + 1 if check() else 0
        return run[0] >= answers

    until("%s, %d answers in a row" % (what, answers), in_a_row, log=log,
          interval=0)
