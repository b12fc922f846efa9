"""The only package that sets up oslo.messaging: transports, servers,
clients, codecs.

Besides wiring, it keeps the promise that a malformed or wrong-version
message never kills a worker, never changes state, and never leaves a
traceback in the log: such a message is turned into ``InvalidRequest``,
raised to the caller of a call (as an expected exception) and logged as one
WARNING line and counted for a cast, which has no caller to tell
(:mod:`gantt.rpc.dispatcher`). A server may take chosen casts on its
listener thread (:mod:`gantt.rpc.server`). Objects travel at the versions
a caller's cap allows (:mod:`gantt.rpc.serializer`). The private hooks of
oslo.messaging this needs are all in :mod:`gantt.rpc._private`, each with
its reason.
"""

import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts

from gantt import exception
from gantt.rpc import _private
from gantt.rpc.dispatcher import Dispatcher
from gantt.rpc.dispatcher import expected_exceptions
from gantt.rpc.serializer import Serializer
from gantt.rpc.server import Server

__all__ = ["ALLOWED_EXMODS", "Dispatcher", "PingEndpoint", "Serializer",
           "Server", "expected_exceptions", "get_client", "get_server",
           "get_transport", "notification_transport",
           "register_opts"]

#: exception modules a caller may rebuild from replies
ALLOWED_EXMODS = [exception.__name__]
#: the [DEFAULT] option that turns on oslo.messaging's ping endpoint
_PING_OPTION = "rpc_ping_enabled"


def register_opts(conf):
    """Options oslo.messaging reads from a transport's conf but registers
    only on global CONF; registering the same options twice is a no-op."""
    _private.register_opts(conf)
    # [DEFAULT] rpc_ping_enabled (read by _answer_pings), as oslo.messaging
    # lists it for the sample config
    conf.register_opts([opt for group, opts in messaging_opts.list_opts()
                        if group is None
                        for opt in opts if opt.dest == _PING_OPTION])


def get_transport(conf, url=None):
    register_opts(conf)
    return messaging.get_rpc_transport(conf, url=url,
                                       allowed_remote_exmods=ALLOWED_EXMODS)


def notification_transport(transport):
    """Notifications on ``transport``'s own bus (what an in-process
    ``fake:`` bus needs; see :func:`gantt.rpc._private.
    notification_transport`). The caller cleans up ``transport`` only."""
    return _private.notification_transport(transport)


def get_server(transport, target, endpoints, on_reject=None, inline=None,
               batch=(1, None), after_batch=None, skip=None, limits=None,
               rejection_log=None):
    """An RPC server on native threads with Gantt's dispatcher.

    ``inline``, ``batch``, ``after_batch`` and ``skip``: see
    :class:`Server`. ``limits``: a ``validate.Limits`` (the defaults if
    None); ``rejection_log``: a ``rejections.RejectionLog``.
    """
    dispatcher = Dispatcher(endpoints, Serializer(), on_reject, limits,
                            rejection_log)
    _answer_pings(transport.conf, dispatcher)
    return Server(transport, target, dispatcher, inline=inline, batch=batch,
                  after_batch=after_batch, skip=skip)


class PingEndpoint:
    """oslo.messaging's ping: ``oslo_rpc_server_ping`` answers ``"pong"``
    (what ``[DEFAULT] rpc_ping_enabled`` promises)."""

    def oslo_rpc_server_ping(self, ctxt, **kwargs):
        return "pong"


def _answer_pings(conf, dispatcher):
    """Serve oslo.messaging's ``oslo_rpc_server_ping`` call when
    ``[DEFAULT] rpc_ping_enabled`` is true in ``conf``.

    NOTE: oslo.messaging 18.x's RPCDispatcher reads that option from the
    global ``cfg.CONF``, which Gantt never parses, so the option did
    nothing; test_operator_path pings a daemon.
    """
    register_opts(conf)
    if not conf.rpc_ping_enabled or any(
            hasattr(endpoint, "oslo_rpc_server_ping")
            for endpoint in dispatcher.endpoints):
        return
    dispatcher.endpoints.append(PingEndpoint())


def get_client(transport, target, version_manifest=None, **kwargs):
    """An RPC client; ``version_manifest`` as for :class:`Serializer`
    (with ``version_cap`` among ``kwargs`` for a capped caller)."""
    return messaging.get_rpc_client(
        transport, target, serializer=Serializer(version_manifest),
        **kwargs)
