"""The RPC server of Nova's scheduler topic: Nova's objects, Nova's
refusals.

It is a server of its own (not Gantt's dispatcher, which checks every
argument against Gantt's wire contract): the serializer reads Nova's
objects (:mod:`gantt.nova.objects`) and any context Nova sends, and the
dispatcher refuses what nova-scheduler refuses, with the same
oslo.messaging errors, but without a traceback in the log. Anything
unexpected reaches the caller as Gantt's ``InternalError`` (the traceback
stays in the worker's log).
"""

import logging
import socket

import oslo_messaging as messaging
from oslo_versionedobjects import exception as ovo_exc

from gantt import context as gantt_context
from gantt import exception
from gantt.nova import endpoint as nova_endpoint
from gantt.nova import objects as nova_objects
from gantt.rpc import _private
from gantt.rpc import server as rpc_server

LOG = logging.getLogger(__name__)


class NovaSerializer(messaging.Serializer):
    """Nova's objects in and out; a malformed one refused as
    ``InvalidRequest`` (a ``RemoteError`` to Nova's client)."""

    def __init__(self):
        self._objects = nova_objects.NovaObjectSerializer()

    def serialize_entity(self, ctxt, entity):
        return self._objects.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        try:
            return self._objects.deserialize_entity(ctxt, entity)
        except (ovo_exc.VersionedObjectsException, ValueError, TypeError,
                KeyError, AttributeError) as exc:
            raise _private.expected(exception.InvalidRequest(
                reason="malformed Nova object: %s" % (exc,))) from None

    def serialize_context(self, ctxt):
        return ctxt if isinstance(ctxt, dict) else ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return gantt_context.RequestContext.from_wire(ctxt)


class NovaDispatcher(messaging.RPCDispatcher):
    """oslo.messaging's dispatcher; its refusals without a traceback."""

    def dispatch(self, incoming):
        method = incoming.message.get("method")
        try:
            return super().dispatch(incoming)
        except messaging.ExpectedException:
            raise
        except (messaging.NoSuchMethod, messaging.UnsupportedVersion) as exc:
            LOG.warning("Refused Nova's %s: %s", method, exc)
            raise _private.expected(exc) from None
        except Exception:
            LOG.exception("Nova's %s failed", method)
            raise _private.expected(exception.InternalError(
                method=str(method)[:64],
                worker=socket.gethostname())) from None


def target(conf):
    """Nova's scheduler topic on Nova's exchange (``[nova] topic``,
    ``[nova] exchange``)."""
    return messaging.Target(exchange=conf.nova.control_exchange,
                            topic=conf.nova.topic,
                            server=socket.gethostname())


def build(conf, transport, scheduler):
    """The server of Nova's scheduler topic on ``transport``."""
    dispatcher = NovaDispatcher(
        [nova_endpoint.NovaSchedulerEndpoint(scheduler, conf)],
        NovaSerializer())
    return rpc_server.Server(transport, target(conf), dispatcher)
