"""How SchedulerClient sends: a call bounded by its timeout, broker down
or not, and oslo.messaging's exceptions only.

oslo.messaging starts a call's timeout only once its message is sent; by
default it reconnects to the broker forever before sending, and the first
call of a process first connects its reply queue, also forever. Here a
call spends at most part of its timeout connecting (:class:`SendPlan`,
:class:`ReplyQueue`) and the rest waiting for its reply, so that with the
broker down it fails within its timeout (``MessageDeliveryFailure``).
"""

import dataclasses
import logging
import threading
import time

from kombu import exceptions as kombu_exc
from oslo_config import cfg
import oslo_messaging as messaging

from gantt import exception
from gantt.rpc import _private

LOG = logging.getLogger(__name__)

#: seconds a call may go without a reply or a heartbeat from the worker
#: serving it (oslo.messaging's call monitor): a worker that dies or hangs
#: mid-call is noticed after this long, whatever the call's timeout
DEFAULT_CALL_MONITOR_TIMEOUT = 30

#: at most this many seconds of a call's timeout go to reconnecting to the
#: broker before its message is sent (half the timeout for short ones)
RECONNECT_BUDGET = 10

#: the least time a first call gives its reply queue to connect (a broker
#: that is up answers in milliseconds), when its timeout allows
_LEAST_CONNECT_S = 1.0

#: the least a call waits for its reply once its reply queue was slow to
#: connect (the rest of its timeout went to connecting)
_LEAST_WAIT_S = 0.1


def checked_monitor_timeout(seconds):
    """The call monitor timeout as oslo.messaging needs it: whole seconds,
    at least 2 (workers heartbeat every half of it, in whole seconds, and
    send none for less than one), or None for no monitoring."""
    if seconds is None:
        return None
    if (isinstance(seconds, bool) or not isinstance(seconds, int)
            or seconds < 2):
        raise exception.ConfigurationError(
            reason="call_monitor_timeout must be a whole number of seconds, "
                   "at least 2, or None; got %r" % (seconds,))
    return seconds


@dataclasses.dataclass(frozen=True)
class SendPlan:
    """How a call's timeout is spent: connecting, then waiting.

    A bounded number of reconnection attempts (``retry``), whose back-off
    sleeps add up to at most ``reconnect_s``, and a reply wait shortened
    by as much (``wait_s``) bound the whole call by its timeout. The first
    call also waits for its reply queue up to ``connect_s`` (as long as
    reconnecting may take, and at least a second when half the timeout
    allows it), and then waits for its reply that much less.
    """

    retry: int | None         # reconnection attempts (None: unbounded)
    reconnect_s: float        # what those attempts may sleep, at most
    wait_s: float             # the reply wait
    connect_s: float          # the reply queue's connection, at most

    @classmethod
    def for_timeout(cls, conf, timeout):
        """The plan for a call of ``timeout`` seconds (None: the
        transport's ``rpc_response_timeout``) on the transport's conf."""
        total = timeout if timeout is not None else (
            conf.rpc_response_timeout)
        sleeps = _reconnect_sleeps(conf)
        if sleeps is None:
            # not RabbitMQ: the driver's own retry rules, the full wait
            return cls(retry=None, reconnect_s=0.0, wait_s=total,
                       connect_s=0.0)
        budget = min(total / 2.0, RECONNECT_BUDGET)
        retry, spent = 0, 0.0
        for sleep in sleeps:
            if spent + sleep > budget:
                break
            retry, spent = retry + 1, spent + sleep
        return cls(retry=retry, reconnect_s=spent, wait_s=total - spent,
                   connect_s=max(spent, min(budget, _LEAST_CONNECT_S)))


def _reconnect_sleeps(conf):
    """The sleep before each reconnection attempt to RabbitMQ (kombu's
    back-off plus ``kombu_reconnect_delay``), as oslo.messaging's rabbit
    driver configures it; None when that driver's options are not
    registered (another driver)."""
    try:
        rabbit = conf.oslo_messaging_rabbit
        start, step = (rabbit.rabbit_retry_interval,
                       rabbit.rabbit_retry_backoff)
        ceiling, delay = (rabbit.rabbit_interval_max,
                          rabbit.kombu_reconnect_delay)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        return None
    return [min(start + i * step, ceiling) + delay for i in range(64)]


class ReplyQueue:
    """A transport's reply queue, connected on a thread of its own.

    oslo.messaging connects it on the first call, retrying forever (the
    ``retry`` of a call bounds only the sending), before sending anything:
    with the broker down, that call never ended. Connected here first, a
    call waits for it only as long as its plan allows and, failing that,
    sends nothing; the connecting goes on in the background, and a later
    call finds the queue once the broker is back.
    """

    def __init__(self, transport):
        self._open = _private.reply_queue_opener(transport)
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._connecting = None
        if self._open is None:
            self._ready.set()

    def wait(self, seconds):
        """Seconds spent waiting for the queue (0.0 once it is there).

        :raises: MessageDeliveryFailure if it is not there after
            ``seconds``
        """
        if self._ready.is_set():
            return 0.0
        started = time.monotonic()
        with self._lock:
            if self._connecting is None:
                self._connecting = threading.Thread(
                    target=self._connect, name="gantt-reply-queue",
                    daemon=True)
                self._connecting.start()
        if not self._ready.wait(seconds):
            raise messaging.MessageDeliveryFailure(
                "no connection to the message broker within %g s (still "
                "trying; nothing was sent)" % seconds)
        return time.monotonic() - started

    def _connect(self):
        try:
            self._open()
        except Exception:
            LOG.exception("Failed to connect the reply queue")
        finally:
            # on a failure too: the call then fails its own way
            self._ready.set()


class Sender:
    """An oslo.messaging call context whose calls keep to their plan and
    whose sends fail only with oslo.messaging's exceptions.

    NOTE: with a bounded ``retry``, oslo.messaging (18.x) turns a publish
    that found no broker into MessageDeliveryFailure, but lets kombu's
    OperationalError out when the connection pool has to open a new
    connection and cannot: callers are promised MessagingException.
    """

    def __init__(self, context, plan, reply_queue):
        self._context = context
        self._plan = plan
        self._reply_queue = reply_queue

    def prepare(self, **kwargs):
        return Sender(self._context.prepare(**kwargs), self._plan,
                      self._reply_queue)

    def can_send_version(self, version):
        return self._context.can_send_version(version)

    def call(self, ctxt, method, **kwargs):
        context = self._context
        waited = self._reply_queue.wait(self._plan.connect_s)
        if waited:
            context = context.prepare(
                timeout=max(self._plan.wait_s - waited, _LEAST_WAIT_S))
        try:
            return context.call(ctxt, method, **kwargs)
        except kombu_exc.OperationalError as exc:
            raise messaging.MessageDeliveryFailure(str(exc)) from exc

    def cast(self, ctxt, method, **kwargs):
        try:
            self._context.cast(ctxt, method, **kwargs)
        except kombu_exc.OperationalError as exc:
            raise messaging.MessageDeliveryFailure(str(exc)) from exc
