"""An RPC server that takes chosen casts on its listener thread.

Such an "inline" cast skips the worker pool, the dispatcher and the
serializer and its arguments go, as primitives, to a cheap callable. A
flood of them then never queues a call behind it in the pool, and costs
no thread hand-off. The listener thread is reached through
``gantt.rpc._private`` (oslo.messaging has no public hook for it).
"""

import inspect
import logging

from gantt.rpc import _private
from gantt.rpc import dispatcher as rpc_dispatcher
from gantt.rpcapi import validate

LOG = logging.getLogger(__name__)


class Server(_private.ListenerServer):
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
        super().__init__(transport, target, dispatcher, batch)
        self._skip = dict(skip or {})
        self._inline = {}
        for method, fn in (inline or {}).items():
            params = frozenset(inspect.signature(fn).parameters)
            self._inline[method] = (fn, params,
                                    _served_version(dispatcher, method))
        self._after_batch = after_batch

    def on_batch(self, messages):
        for message in messages:
            if self._skipped(message):
                continue
            if not self._take_inline(message):
                self.to_pool(message)
        if self._after_batch is not None:
            try:
                self._after_batch()
            except Exception:
                LOG.exception("Failed after a batch of messages")

    def _skipped(self, incoming):
        """Drop a cast the server has no use for; False if it is not one."""
        skip = self._skip.get(_method_of(incoming.message))
        # a call always gets its answer
        if skip is None or not _private.is_cast(incoming):
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
        if (inline is None or not _private.is_cast(incoming)
                or not validate.rpc_version_is_valid(
                    message.get("version", "1.0"))):
            return False
        fn, params, served = inline
        args = message.get("args", {})
        size = _private.message_size(incoming)
        if (message.get("namespace") is not None
                or (size is not None
                    and size > self.dispatcher.limits.max_message_bytes)
                or not validate.context_is_valid(incoming.ctxt)
                or not isinstance(args, dict) or args.keys() != params
                or not rpc_dispatcher.version_is_compatible(
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


def _served_version(dispatcher, method):
    """The version of the endpoint that serves ``method`` (unnamespaced)."""
    for endpoint in dispatcher.endpoints:
        target = getattr(endpoint, "target", None)
        if (hasattr(endpoint, method) and target is not None
                and target.namespace is None):
            return target.version
    raise ValueError("no endpoint serves %s" % method)
