"""The only module that sets up oslo.messaging: transports, servers, codecs.

Besides wiring, it keeps the promise that a malformed or wrong-version
message never kills a worker, never changes state, and never leaves a
traceback in the log: such a message is turned into ``InvalidRequest``,
raised to the caller of a call (as an expected exception) and logged as one
WARNING line and counted for a cast, which has no caller to tell.
"""

import inspect
import logging

import oslo_messaging as messaging
from oslo_messaging._metrics import client as _metrics
from oslo_messaging._tracing import client as _tracing
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_messaging.rpc import server as rpc_server
from oslo_versionedobjects import exception as ovo_exc

from gantt import context as gantt_context
from gantt import exception
from gantt.objects import base as objects_base

LOG = logging.getLogger(__name__)

#: exception modules a caller may rebuild from replies
ALLOWED_EXMODS = [exception.__name__]


def register_opts(conf):
    """Options oslo.messaging expects but registers only on global CONF."""
    # NOTE: oslo.messaging 18.x registers [oslo_messaging_tracing] and
    # [oslo_messaging_metrics] on cfg.CONF at import time but reads them
    # from the transport's conf on every call, so a private ConfigOpts
    # needs them too. Registering the same options twice is a no-op.
    conf.register_opts(_tracing.oslo_messaging_tracing,
                       group="oslo_messaging_tracing")
    conf.register_opts(_metrics.oslo_messaging_metrics,
                       group="oslo_messaging_metrics")


def get_transport(conf, url=None):
    register_opts(conf)
    return messaging.get_rpc_transport(conf, url=url,
                                       allowed_remote_exmods=ALLOWED_EXMODS)


def _rejected(reason):
    """Raise ``InvalidRequest(reason)`` wrapped as an expected exception."""
    try:
        raise exception.InvalidRequest(reason=reason)
    except exception.InvalidRequest:
        # ExpectedException captures the InvalidRequest being handled
        raise rpc_dispatcher.ExpectedException() from None


class Serializer(messaging.Serializer):
    """Versioned objects in, versioned objects out; any dict as context."""

    def __init__(self):
        self._objects = objects_base.GanttObjectSerializer()

    def serialize_entity(self, ctxt, entity):
        return self._objects.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        try:
            return self._objects.deserialize_entity(ctxt, entity)
        except ovo_exc.IncompatibleObjectVersion as exc:
            _rejected("object version not supported: %s" % exc)
        except (ovo_exc.VersionedObjectsException, ValueError, TypeError,
                KeyError, AttributeError) as exc:
            _rejected("malformed object: %s" % (exc,))

    def serialize_context(self, ctxt):
        if isinstance(ctxt, dict):
            return ctxt
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return gantt_context.RequestContext.from_wire(ctxt)


class Dispatcher(rpc_dispatcher.RPCDispatcher):
    """Turns protocol errors into typed, logged, counted rejections."""

    def __init__(self, endpoints, serializer, on_reject=None):
        super().__init__(endpoints, serializer)
        self._on_reject = on_reject or (lambda method, reason: None)

    def dispatch(self, incoming):
        method = incoming.message.get("method")
        # NOTE: log outside the except blocks: oslo.log appends the active
        # exception to any record emitted while one is being handled, and a
        # rejection is not a fault worth a traceback.
        try:
            return super().dispatch(incoming)
        except (rpc_dispatcher.NoSuchMethod,
                rpc_dispatcher.UnsupportedVersion) as exc:
            protocol_error = str(exc)
        except rpc_dispatcher.ExpectedException as exc:
            expected = exc
            protocol_error = None
        if protocol_error is not None:
            self._reject(method, protocol_error)
            _rejected(protocol_error)
        error = expected.exc_info[1]
        if isinstance(error, exception.InvalidRequest):
            self._reject(method, str(error))
        raise expected

    def _do_dispatch(self, endpoint, method, ctxt, args):
        func = getattr(endpoint, method)
        try:
            inspect.signature(func).bind(None, **args)
        except TypeError as exc:
            _rejected("bad arguments for %s: %s" % (method, exc))
        return super()._do_dispatch(endpoint, method, ctxt, args)

    def _reject(self, method, reason):
        LOG.warning("Rejected %s message: %s", method, reason)
        self._on_reject(method, reason)


def get_server(transport, target, endpoints, on_reject=None):
    """An RPC server on native threads with Gantt's dispatcher."""
    serializer = Serializer()
    dispatcher = Dispatcher(endpoints, serializer, on_reject)
    return rpc_server.RPCServer(transport, target, dispatcher, "threading")


def get_client(transport, target, **kwargs):
    return messaging.get_rpc_client(transport, target,
                                    serializer=Serializer(), **kwargs)
