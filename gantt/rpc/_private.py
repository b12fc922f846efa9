"""Every use of a private hook of oslo.messaging, in one place.

Gantt uses oslo.messaging's public API everywhere else. What is here has
no public equivalent (each hook in :data:`HOOKS` says why); setup.cfg pins
oslo.messaging to the range these hooks were written for, and
``gantt/tests/unit/test_rpc_private.py`` checks every row of
:data:`HOOKS` against the installed release (the hook exists, with the
parameters written here), so an upgrade that moves one fails there, by
name, rather than in production.
"""

import dataclasses

import oslo_messaging as messaging
from oslo_messaging import transport as msg_transport
from oslo_messaging._metrics import client as _metrics
from oslo_messaging._tracing import client as _tracing
from oslo_messaging.rpc import server as rpc_server

#: the oslo.messaging releases the hooks below were written for (the
#: same range as setup.cfg's pin; the contract test checks both)
OSLO_MESSAGING_RANGE = (">=18.3", "<19")


@dataclasses.dataclass(frozen=True)
class Hook:
    """A private name Gantt relies on.

    ``owner`` is a dotted module or class path; ``params`` the parameter
    names of a callable, or None for an attribute (then ``owner``'s
    source must assign it).
    """

    owner: str
    name: str
    params: tuple[str, ...] | None
    reason: str


HOOKS = (
    Hook("oslo_messaging.rpc.server.RPCServer", "_create_listener",
         ("self",),
         "overridden to listen in batches: RPC servers have no public "
         "batch option (batch listeners are for notifications only)"),
    Hook("oslo_messaging.transport.Transport", "_listen",
         ("self", "target", "batch_size", "batch_timeout"),
         "the only way to a batching listener for an RPC target"),
    Hook("oslo_messaging.server.MessageHandlingServer", "_on_incoming",
         ("self", "incoming"),
         "overridden to see messages on the listener thread, before the "
         "worker pool (inline and skipped casts): no public hook"),
    Hook("oslo_messaging.server.MessageHandlingServer", "_work_executor",
         None, "the worker pool the server hands messages to"),
    Hook("oslo_messaging.rpc.server.RPCServer", "_process_incoming",
         ("self", "incoming"),
         "what the pool runs for a message (ack, dispatch, reply); takes "
         "a list of one message"),
    Hook("oslo_messaging._drivers.amqpdriver.AMQPIncomingMessage",
         "orig_msg_id", None,
         "tells a cast (None) from a call: the public msg_id is invented "
         "when the message has none"),
    Hook("oslo_messaging._drivers.impl_rabbit.RabbitMessage",
         "_raw_message", None,
         "kombu's message, whose body is the message's size on the wire: "
         "no public way to ask"),
    Hook("oslo_messaging.rpc.dispatcher.ExpectedException", "exc_info",
         None,
         "written to send an error without its traceback (the public "
         "constructor records the one being handled, traceback included)"),
    Hook("oslo_messaging._metrics.client", "oslo_messaging_metrics", None,
         "read from the transport's conf on every call, registered only "
         "on the global CONF, and missing from opts.list_opts()"),
    Hook("oslo_messaging._tracing.client", "oslo_messaging_tracing", None,
         "as oslo_messaging_metrics"),
    Hook("oslo_messaging.transport.Transport", "_driver", None,
         "the driver behind a transport: the fake driver's bus is the "
         "driver object, and a notification transport on that bus can be "
         "made only from it"),
    Hook("oslo_messaging._drivers.amqpdriver.AMQPDriverBase",
         "_get_reply_q", ("self",),
         "the first call connects its reply queue with retry=None "
         "(forever, before sending); calling it first, on a thread of "
         "our own, lets a call give up within its timeout"),
)


def register_opts(conf):
    """Register on ``conf`` the options oslo.messaging reads from it but
    registers only on the global CONF (see :data:`HOOKS`)."""
    conf.register_opts(_tracing.oslo_messaging_tracing,
                       group="oslo_messaging_tracing")
    conf.register_opts(_metrics.oslo_messaging_metrics,
                       group="oslo_messaging_metrics")


def message_size(incoming):
    """Bytes of ``incoming`` as it came from the broker, or None if the
    driver does not say (only the RabbitMQ driver's messages do)."""
    raw = getattr(incoming.message, "_raw_message", None)
    body = getattr(raw, "body", None)
    return len(body) if isinstance(body, (bytes, str)) else None


def is_cast(incoming):
    """Whether ``incoming`` is a cast, as far as can be told: a message of
    a driver other than AMQP's counts as a call."""
    return getattr(incoming, "orig_msg_id", "unknown") is None


def expected(error):
    """``error`` wrapped as an expected exception, without a traceback.

    oslo.messaging sends the formatted traceback of a failure to the
    caller, chained exceptions included: the worker's code, and the
    internal error behind an ``InternalError``, would cross the wire. A
    caller gets the type and the message only.
    """
    error.__cause__ = None
    error.__suppress_context__ = True
    wrapped = messaging.ExpectedException()
    wrapped.exc_info = (type(error), error, None)
    return wrapped


def notification_transport(transport):
    """A notification transport on ``transport``'s driver, hence on its
    bus: ``fake:`` has one bus per driver object, so notifications sent
    through a transport of their own would reach no listener of
    ``transport`` (oslo.messaging builds a new driver for each)."""
    return msg_transport.NotificationTransport(transport._driver)


def reply_queue_opener(transport):
    """A callable that connects the transport's reply queue (what a
    call does first, without a bound), or None for a driver that has
    none (fake:, notification-only drivers)."""
    driver = getattr(transport, "_driver", None)
    return getattr(driver, "_get_reply_q", None)


class ListenerServer(rpc_server.RPCServer):
    """An RPC server that listens in batches and hands each batch to
    :meth:`on_batch` on its listener thread.

    :param batch: ``(size, timeout)``: up to ``size`` messages at once,
        waiting at most ``timeout`` seconds for them
    """

    def __init__(self, transport, target, dispatcher, batch=(1, None)):
        super().__init__(transport, target, dispatcher, "threading")
        self._listen_target = target
        self._batch = batch

    def _create_listener(self):
        return self.transport._listen(self._listen_target, *self._batch)

    def _on_incoming(self, incoming):
        self.on_batch(incoming)

    def on_batch(self, messages):
        """What the listener thread does with a batch: by default hand
        every message to the worker pool."""
        for message in messages:
            self.to_pool(message)

    def to_pool(self, message):
        """Have a worker acknowledge, dispatch and answer ``message``."""
        self._work_executor.submit(self._process_incoming, [message])
