"""Gantt's RPC dispatcher: protocol errors become typed, logged, counted
rejections, and only Gantt's own exceptions reach a caller.

Before anything is decoded, a message larger than ``[wire]
max_message_bytes`` is refused and every argument is checked strictly
(``gantt.rpcapi.validate``) against the endpoint method that will serve
it; anything unexpected reaches the caller as ``InternalError`` (the
traceback stays in the worker's log). Refusals are logged at a bounded
rate (``gantt.rejections``).
"""

import functools
import inspect
import os
import socket
import sys
import threading

import oslo_messaging as messaging

from gantt import exception
from gantt import rejections
from gantt.rpc import _private
from gantt.rpc import serializer as rpc_serializer
from gantt.rpcapi import validate
from gantt.rpcapi import versions

#: this process, as InternalError names it (``get_statistics``' worker)
_WORKER = "%s:%d" % (socket.gethostname(), os.getpid())
#: the target of an endpoint that names none (oslo.messaging's default)
_DEFAULT_TARGET = messaging.Target()


def _rejected(reason):
    """Raise ``InvalidRequest(reason)`` wrapped as an expected exception."""
    raise _private.expected(exception.InvalidRequest(reason=reason)) from None


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


def version_is_compatible(served, version):
    """Whether a message of RPC ``version`` may go to an endpoint serving
    ``served`` (same major, no newer minor; at the same minor, no newer
    revision), as oslo.messaging's dispatcher decides. Both are
    well-formed versions (``validate.rpc_version_is_valid``); a None
    ``served`` takes any."""
    if served is None:
        return True
    want = [int(part) for part in version.split(".")] + [0]
    have = [int(part) for part in served.split(".")] + [0]
    return want[0] == have[0] and want[1:3] <= have[1:3]


class MethodsOnly(messaging.DefaultRPCAccessPolicy):
    """oslo.messaging's default policy (no ``_private`` method), and only
    methods: not an endpoint's other attributes (``target``…)."""

    def is_allowed(self, endpoint, method):
        return (super().is_allowed(endpoint, method)
                and inspect.ismethod(getattr(endpoint, method, None)))


class _CallSerializer(messaging.Serializer):
    """What the dispatcher decodes with and encodes replies with: a reply
    at the object versions of the RPC version its call was sent at (an
    older caller gets the objects it reads, see gantt.rpcapi.versions)."""

    def __init__(self, base, replies_for, call):
        self.base = base
        self._replies_for = replies_for
        self._call = call

    def serialize_entity(self, ctxt, entity):
        return self._replies_for(self._call.version).serialize_entity(
            ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        return self.base.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt):
        return self.base.serialize_context(ctxt)

    def deserialize_context(self, ctxt):
        return self.base.deserialize_context(ctxt)


class Dispatcher(messaging.RPCDispatcher):
    """Turns protocol errors into typed, logged, counted rejections."""

    def __init__(self, endpoints, serializer, on_reject=None, limits=None,
                 rejection_log=None):
        # the version a message was sent at, for its reply (per thread:
        # the pool dispatches several messages at once)
        self._call = threading.local()
        self._base = serializer
        super().__init__(endpoints,
                         _CallSerializer(serializer, self._replies_for,
                                         self._call),
                         access_policy=MethodsOnly)
        self._on_reject = on_reject or (lambda method, reason: None)
        self.limits = limits or validate.DEFAULT_LIMITS
        self._log = rejection_log or rejections.default("gantt.rpc")
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
        except messaging.ExpectedException as exc:
            expected = exc
        except exception.GanttException as exc:
            # typed and documented, though the method does not list it
            expected = _private.expected(exc)
        except Exception:
            self._log.failed(_name(method), sys.exc_info())
            expected = _private.expected(exception.InternalError(
                method=_name(method), worker=_WORKER))
        error = expected.exc_info[1]
        if isinstance(error, exception.InvalidRequest):
            self._reject(method, str(error))
        raise _private.expected(error) from None

    def _dispatch(self, incoming):
        try:
            validate.check_envelope(incoming.message, self.limits,
                                    _private.message_size(incoming))
            validate.check_context(incoming.ctxt)
        except exception.InvalidRequest as exc:
            raise _private.expected(exc) from None
        self._check_arguments(incoming.message)
        return super().dispatch(incoming)

    def _check_arguments(self, message):
        """Refuse, before anything is decoded, a message no endpoint
        serves or whose arguments the serving method does not take."""
        method, args = message["method"], message.get("args", {})
        endpoint = self._endpoint_for(message)
        # one Signature per endpoint method (building one costs as much as
        # deserialising a small request); the keys are methods the
        # endpoints have, so the table cannot grow beyond them
        key = (type(endpoint), method)
        signature = self._signatures.get(key)
        if signature is None:
            signature = self._signatures[key] = inspect.signature(
                getattr(endpoint, method))
        try:
            signature.bind(None, **args)
        except TypeError as exc:
            _rejected("bad arguments for %s: %s" % (method, exc))
        validate.check_arguments(method, args, self.limits)

    def _endpoint_for(self, message):
        """The endpoint oslo.messaging's dispatcher will hand ``message``
        to: the first whose target takes its namespace and version, that
        has the method and whose access policy allows it.

        :raises: ExpectedException(InvalidRequest) when there is none,
            with oslo.messaging's words (before it would start the call's
            heartbeat, which it never stops for a message it refuses)
        """
        method, version = message["method"], message.get("version", "1.0")
        compatible = [endpoint for endpoint in self.endpoints
                      if _takes(endpoint, message.get("namespace"), version)]
        for endpoint in compatible:
            if (hasattr(endpoint, method)
                    and self.access_policy.is_allowed(endpoint, method)):
                return endpoint
        if not compatible:
            _rejected(str(messaging.UnsupportedVersion(version,
                                                       method=method)))
        if any(hasattr(endpoint, method) for endpoint in compatible):
            # an attribute (``target``…): its name may be anything
            method = validate.quote(method)
        _rejected(str(messaging.NoSuchMethod(method)))

    def _replies_for(self, version):
        if not isinstance(self._base, rpc_serializer.Serializer):
            return self._base
        try:
            # keyed by the parsed version: "1.0" and "1.00" are one entry
            key = versions.parse(version)
            serializer = self._reply_serializers.get(key)
            if serializer is None:
                serializer = self._reply_serializers[key] = (
                    rpc_serializer.Serializer(
                        versions.manifest_for("%d.%d" % key)))
        except exception.ConfigurationError:
            # not a version this code has (the dispatcher let it through,
            # so it is compatible): objects as they are
            return self._base
        return serializer

    def _reject(self, method, reason):
        self._log.rejected(_name(method), reason)
        self._on_reject(method, reason)


def _takes(endpoint, namespace, version):
    """Whether ``endpoint``'s target takes a message of ``namespace`` and
    ``version``."""
    target = getattr(endpoint, "target", None) or _DEFAULT_TARGET
    return (namespace in target.accepted_namespaces
            and version_is_compatible(target.version or "1.0", version))


def _name(method):
    """A method name fit for a log line or an error message."""
    if type(method) is str and len(method) <= 64:
        return method
    return validate.quote(method)
