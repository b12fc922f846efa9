"""The only module that sets up oslo.messaging: transports, servers, codecs.

Besides wiring, it keeps the promise that a malformed or wrong-version
message never kills a worker, never changes state, and never leaves a
traceback in the log: such a message is turned into ``InvalidRequest``,
raised to the caller of a call (as an expected exception) and logged as one
WARNING line and counted for a cast, which has no caller to tell. Before
anything is decoded, the dispatcher refuses a message larger than ``[wire]
max_message_bytes`` and checks every argument strictly
(``gantt.rpcapi.validate``); only Gantt's own exceptions reach a caller,
anything unexpected as ``InternalError`` (the traceback stays in the
worker's log). Refusals are logged at a bounded rate
(``gantt.rejections``).

It also lets a server take chosen casts on its listener thread ("inline"):
such a cast skips the worker pool, the dispatcher and the serializer and
its arguments go, as primitives, to a cheap callable. A flood of them then
never queues a call behind it in the pool, and costs no thread hand-off.
"""

import functools
import inspect
import logging
import os
import socket
import sys
import threading

# NOTE: private modules and hooks of oslo.messaging (_utils, _metrics,
# _tracing, RPCServer._create_listener/_on_incoming/_work_executor,
# transport._listen) and of oslo.versionedobjects (the serializer's
# _process_iterable) are used below: setup.cfg pins both below their next
# major release, and oslo.messaging to 18.3 or later (the first with
# _tracing). The unit tests passed at the minimums and at the newest.
import oslo_messaging as messaging
from oslo_messaging import _utils as messaging_utils
from oslo_messaging._metrics import client as _metrics
from oslo_messaging._tracing import client as _tracing
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_messaging.rpc import server as rpc_server
from oslo_versionedobjects import exception as ovo_exc

from gantt import context as gantt_context
from gantt import exception
from gantt import rejections
from gantt.objects import base as objects_base
from gantt.rpcapi import validate
from gantt.rpcapi import versions

LOG = logging.getLogger(__name__)

#: exception modules a caller may rebuild from replies
ALLOWED_EXMODS = [exception.__name__]
#: this process, as InternalError names it (``get_statistics``' worker)
_WORKER = "%s:%d" % (socket.gethostname(), os.getpid())


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
    # [DEFAULT] rpc_ping_enabled likewise (read by _answer_pings)
    conf.register_opts(rpc_dispatcher._dispatcher_opts)


def get_transport(conf, url=None):
    register_opts(conf)
    return messaging.get_rpc_transport(conf, url=url,
                                       allowed_remote_exmods=ALLOWED_EXMODS)


def _rejected(reason):
    """Raise ``InvalidRequest(reason)`` wrapped as an expected exception."""
    raise _expected(exception.InvalidRequest(reason=reason)) from None


def expected_exceptions(*exceptions):
    """oslo.messaging's ``expected_exceptions``, keeping the method's
    signature.

    oslo.messaging's wrapper takes ``*args, **kwargs`` and hides the
    method's own parameters, so the dispatcher's check of the arguments
    against the signature passed everything, and a missing or unknown
    argument reached the caller as ``TypeError``.
    """
    def outer(func):
        return functools.wraps(func)(
            messaging.expected_exceptions(*exceptions)(func))
    return outer


def _expected(error):
    """``error`` wrapped as an expected exception, without a traceback.

    oslo.messaging sends the formatted traceback of a failure to the
    caller, chained exceptions included: the worker's code, and the
    internal error behind an ``InternalError``, would cross the wire. A
    caller gets the type and the message only.
    """
    error.__cause__ = None
    error.__suppress_context__ = True
    wrapped = rpc_dispatcher.ExpectedException()
    wrapped.exc_info = (type(error), error, None)
    return wrapped


def message_size(incoming):
    """Bytes of ``incoming`` as it came from the broker, or None if the
    driver does not say.

    NOTE: oslo.messaging has no public way to ask. Its RabbitMQ driver
    hands the dispatcher a ``RabbitMessage`` (a dict) that keeps kombu's
    message, whose ``body`` is what arrived, as ``_raw_message``: this is
    the one place that reads it (a functional test sends an oversized
    message to a real worker, so a driver change that hides it fails).
    """
    raw = getattr(incoming.message, "_raw_message", None)
    body = getattr(raw, "body", None)
    return len(body) if isinstance(body, (bytes, str)) else None


class Serializer(messaging.Serializer):
    """Versioned objects in, versioned objects out; any dict as context.

    :param version_manifest: ``{object name: version}`` to send objects at
        (a caller's version cap, see gantt.rpcapi.versions); None sends
        each at its own version
    """

    def __init__(self, version_manifest=None):
        self._objects = objects_base.GanttObjectSerializer()
        self._manifest = version_manifest
        self._backport = frozenset()
        if version_manifest is not None:
            self._backport = versions.needing_backport(version_manifest)

    def serialize_entity(self, ctxt, entity):
        if not self._backport:
            return self._objects.serialize_entity(ctxt, entity)
        if isinstance(entity, (tuple, list, set, dict)):
            return self._objects._process_iterable(
                ctxt, self.serialize_entity, entity)
        if (isinstance(entity, objects_base.GanttObject)
                and entity.obj_name() in self._backport):
            # children follow the manifest too (ovo backports them by it)
            return entity.obj_to_primitive(
                target_version=self._manifest.get(entity.obj_name(),
                                                  entity.VERSION),
                version_manifest=self._manifest)
        # unchanged under the manifest, nothing changed inside: as it is
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

    def __init__(self, endpoints, serializer, on_reject=None, limits=None,
                 rejection_log=None):
        super().__init__(endpoints, serializer)
        self._on_reject = on_reject or (lambda method, reason: None)
        self.limits = limits or validate.DEFAULT_LIMITS
        self._log = rejection_log or rejections.default(__name__)
        # the version a message was sent at, for its reply (per thread:
        # the pool dispatches several messages at once)
        self._call = threading.local()
        self._reply_serializers = {}
        self._signatures = {}

    def dispatch(self, incoming):
        """Only Gantt's documented exceptions leave here: anything else is
        logged (with its traceback, at a bounded rate) and becomes
        ``InternalError``."""
        method = incoming.message.get("method")
        self._call.version = incoming.message.get("version", "1.0")
        # NOTE: log outside the except blocks: oslo.log appends the active
        # exception to any record emitted while one is being handled, and a
        # rejection is not a fault worth a traceback.
        try:
            return self._dispatch(incoming)
        except rpc_dispatcher.ExpectedException as exc:
            expected = exc
        except exception.GanttException as exc:
            # typed and documented, though the method does not list it
            expected = _expected(exc)
        except Exception:
            self._log.failed(_name(method), sys.exc_info())
            expected = _expected(exception.InternalError(
                method=_name(method), worker=_WORKER))
        error = expected.exc_info[1]
        if isinstance(error, exception.InvalidRequest):
            self._reject(method, str(error))
        raise _expected(error) from None

    def _dispatch(self, incoming):
        try:
            validate.check_envelope(incoming.message, self.limits,
                                    message_size(incoming))
            validate.check_context(incoming.ctxt)
        except exception.InvalidRequest as exc:
            raise _expected(exc) from None
        try:
            return super().dispatch(incoming)
        except (rpc_dispatcher.NoSuchMethod,
                rpc_dispatcher.UnsupportedVersion) as exc:
            protocol_error = str(exc)
        _rejected(protocol_error)

    def _do_dispatch(self, endpoint, method, ctxt, args):
        func = getattr(endpoint, method)
        if not inspect.ismethod(func):
            # an attribute of the endpoint (``target``…), not a method
            _rejected("Endpoint does not support RPC method %s"
                      % validate.quote(method))
        # one Signature per endpoint method (building one costs as much as
        # deserialising a small request); the keys are methods the
        # endpoints have, so the table cannot grow beyond them
        key = (type(endpoint), method)
        signature = self._signatures.get(key)
        if signature is None:
            signature = self._signatures[key] = inspect.signature(func)
        try:
            signature.bind(None, **args)
        except TypeError as exc:
            _rejected("bad arguments for %s: %s" % (method, exc))
        validate.check_arguments(method, args, self.limits)
        # as oslo.messaging's, but the reply is serialised at the object
        # versions of the RPC version the caller sent: an older caller gets
        # the objects it reads (see gantt.rpcapi.versions)
        ctxt = self.serializer.deserialize_context(ctxt)
        new_args = {name: self.serializer.deserialize_entity(ctxt, arg)
                    for name, arg in args.items()}
        result = func(ctxt, **new_args)
        return self._replies_for(self._call.version).serialize_entity(
            ctxt, result)

    def _replies_for(self, version):
        if not isinstance(self.serializer, Serializer):
            return self.serializer
        try:
            # keyed by the parsed version: "1.0" and "1.00" are one entry
            key = versions.parse(version)
            serializer = self._reply_serializers.get(key)
            if serializer is None:
                serializer = self._reply_serializers[key] = Serializer(
                    versions.manifest_for("%d.%d" % key))
        except exception.ConfigurationError:
            # not a version this code has (the dispatcher let it through,
            # so it is compatible): objects as they are
            return self.serializer
        return serializer

    def _reject(self, method, reason):
        self._log.rejected(_name(method), reason)
        self._on_reject(method, reason)


class Server(rpc_server.RPCServer):
    """An RPC server that may take some casts on its listener thread.

    :param inline: ``{method: fn}``; a **cast** of ``method`` in the
        default namespace, at a version the endpoint serving ``method``
        accepts, with exactly ``fn``'s parameters as arguments, is handed
        to ``fn(**args)`` (arguments as they came off the wire) on the
        listener thread. ``fn`` must be quick and must not raise. Anything
        else (a call, another version, other arguments) goes to the
        dispatcher in the worker pool as usual, which rejects it properly.
    :param batch: ``(size, timeout)``: the listener hands over up to
        ``size`` messages at once, waiting at most ``timeout`` seconds for
        them (a timeout delays every message by up to that much: only for
        servers that answer no calls)
    :param after_batch: called on the listener thread after each batch
    :param skip: ``{method: predicate}``; a **cast** of ``method`` whose
        context (the dict off the wire) ``predicate`` accepts is dropped
        on the listener thread, unread (a worker's own fanout casts)
    """

    def __init__(self, transport, target, dispatcher, inline=None,
                 batch=(1, None), after_batch=None, skip=None):
        super().__init__(transport, target, dispatcher, "threading")
        self._skip = dict(skip or {})
        self._inline = {}
        for method, fn in (inline or {}).items():
            params = frozenset(inspect.signature(fn).parameters)
            self._inline[method] = (fn, params,
                                    _served_version(dispatcher, method))
        self._batch = batch
        self._after_batch = after_batch

    def _create_listener(self):
        return self.transport._listen(self._target, *self._batch)

    def _on_incoming(self, incoming):
        for message in incoming:
            if self._skipped(message):
                continue
            if not self._take_inline(message):
                self._work_executor.submit(self._process_incoming,
                                           [message])
        if self._after_batch is not None:
            try:
                self._after_batch()
            except Exception:
                LOG.exception("Failed after a batch of messages")

    def _skipped(self, incoming):
        """Drop a cast the server has no use for; False if it is not one."""
        skip = self._skip.get(_method_of(incoming.message))
        # a call always gets its answer
        if skip is None or not _is_cast(incoming):
            return False
        ctxt = incoming.ctxt
        if not isinstance(ctxt, dict) or not skip(ctxt):
            return False
        incoming.acknowledge()  # a no-op: the listener acked it
        return True

    def _take_inline(self, incoming):
        """Hand an inline cast to its callable; False if it is not one."""
        message = incoming.message
        inline = self._inline.get(_method_of(message))
        if (inline is None or not _is_cast(incoming)
                or not validate.rpc_version_is_valid(
                    message.get("version", "1.0"))):
            return False
        fn, params, served = inline
        args = message.get("args", {})
        size = message_size(incoming)
        if (message.get("namespace") is not None
                or (size is not None
                    and size > self.dispatcher.limits.max_message_bytes)
                or not validate.context_is_valid(incoming.ctxt)
                or not isinstance(args, dict) or args.keys() != params
                or not messaging_utils.version_is_compatible(
                    served, message.get("version", "1.0"))):
            return False
        try:
            incoming.acknowledge()  # a no-op: the listener acked it
            fn(**args)
        except Exception:
            LOG.exception("Failed to take an inline %s cast",
                          message["method"])
        return True


def _method_of(message):
    """The message's method name, or None if it is not a string (the
    dispatcher then refuses it)."""
    method = message.get("method")
    return method if type(method) is str else None


def _name(method):
    """A method name fit for a log line or an error message."""
    if type(method) is str and len(method) <= 64:
        return method
    return validate.quote(method)


def _is_cast(incoming):
    """Whether ``incoming`` is a cast, as far as can be told: a cast has
    no msg_id on the wire; the AMQP driver keeps that as orig_msg_id
    (msg_id itself is invented when missing). A message of any other
    driver counts as a call, so nothing of it is skipped or taken inline.
    """
    return getattr(incoming, "orig_msg_id", "unknown") is None


def _served_version(dispatcher, method):
    """The version of the endpoint that serves ``method`` (unnamespaced)."""
    for endpoint in dispatcher.endpoints:
        target = getattr(endpoint, "target", None)
        if (hasattr(endpoint, method) and target is not None
                and target.namespace is None):
            return target.version
    raise ValueError("no endpoint serves %s" % method)


def get_server(transport, target, endpoints, on_reject=None, inline=None,
               batch=(1, None), after_batch=None, skip=None, limits=None,
               rejection_log=None):
    """An RPC server on native threads with Gantt's dispatcher.

    ``inline``, ``batch``, ``after_batch`` and ``skip``: see
    :class:`Server`. ``limits``: a ``validate.Limits`` (the defaults if
    None); ``rejection_log``: a ``rejections.RejectionLog``.
    """
    serializer = Serializer()
    dispatcher = Dispatcher(endpoints, serializer, on_reject, limits,
                            rejection_log)
    _answer_pings(transport.conf, dispatcher)
    return Server(transport, target, dispatcher, inline=inline, batch=batch,
                  after_batch=after_batch, skip=skip)


def _answer_pings(conf, dispatcher):
    """Serve oslo.messaging's ``oslo_rpc_server_ping`` call (it answers
    ``"pong"``) when ``[DEFAULT] rpc_ping_enabled`` is true in ``conf``.

    NOTE: oslo.messaging 18.x's RPCDispatcher reads that option from the
    global ``cfg.CONF``, which Gantt never parses, so the option did
    nothing. Its option list and PingEndpoint are module-private
    (oslo_messaging/rpc/dispatcher.py): test_rpc_ping checks both against
    the installed oslo.messaging, and test_operator_path pings a daemon.
    """
    register_opts(conf)
    if not conf.rpc_ping_enabled or any(
            hasattr(endpoint, "oslo_rpc_server_ping")
            for endpoint in dispatcher.endpoints):
        return
    dispatcher.endpoints.append(rpc_dispatcher.PingEndpoint())


def get_client(transport, target, version_manifest=None, **kwargs):
    """An RPC client; ``version_manifest`` as for :class:`Serializer`
    (with ``version_cap`` among ``kwargs`` for a capped caller)."""
    return messaging.get_rpc_client(
        transport, target, serializer=Serializer(version_manifest),
        **kwargs)
