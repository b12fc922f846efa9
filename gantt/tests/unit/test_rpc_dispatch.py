"""gantt.rpc.Dispatcher: only documented exceptions leave a worker.

And gantt.rejections: refusals are logged at a bounded rate.
"""

import logging
import threading

import oslo_messaging as messaging
from oslo_messaging._drivers import common as messaging_common
import pytest

from gantt import exception
from gantt import rejections
from gantt import rpc
from gantt.rpcapi import validate

UUID = "ef53f2ca-814b-5a69-9bbc-f802801ece3e"


class _Body:
    def __init__(self, size):
        self.body = b"x" * size


class _Message(dict):
    """The RabbitMQ driver's message: a dict keeping kombu's message."""

    def __init__(self, size, **fields):
        super().__init__(**fields)
        self._raw_message = _Body(size)


class _Incoming:
    def __init__(self, method, args=None, ctxt=None, size=100, **extra):
        self.message = _Message(size, method=method, version="1.0",
                                args={} if args is None else args, **extra)
        self.ctxt = {} if ctxt is None else ctxt
        self.client_timeout = None


class _Endpoint:
    target = messaging.Target(version="1.0")

    def __init__(self):
        self.released = []

    @rpc.expected_exceptions(exception.InvalidRequest)
    def release(self, ctxt, consumer_uuid):
        self.released.append(consumer_uuid)
        return True

    @rpc.expected_exceptions(exception.InvalidRequest)
    def get_statistics(self, ctxt):
        raise OverflowError("int too large to convert")

    def get_aggregates(self, ctxt):
        raise exception.ProviderNotFound(uuid=UUID)


@pytest.fixture
def dispatcher():
    rejected = []
    log = rejections.RejectionLog(logging.getLogger("test.rejections"))
    disp = rpc.Dispatcher([_Endpoint()], rpc.Serializer(),
                          on_reject=lambda m, r: rejected.append(m),
                          limits=validate.Limits(max_message_bytes=4096),
                          rejection_log=log)
    disp.rejected = rejected
    return disp


def _error(dispatcher, incoming):
    with pytest.raises(messaging.ExpectedException) as info:
        dispatcher.dispatch(incoming)
    # what oslo.messaging sends the caller: type and message, no code
    wire = messaging_common.serialize_remote_exception(info.value.exc_info)
    assert "Traceback" not in wire and "File " not in wire, wire
    return info.value.exc_info[1]


def test_a_valid_call_is_served(dispatcher):
    assert dispatcher.dispatch(_Incoming("release",
                                         {"consumer_uuid": UUID})) is True


@pytest.mark.parametrize("args,reason", [
    ({}, "missing a required argument: 'consumer_uuid'"),
    ({"consumer_uuid": UUID, "force": True},
     "got an unexpected keyword argument 'force'"),
    ({"consumer_uuid": "x"}, "consumer_uuid must be a uuid"),
])
def test_bad_arguments_are_invalid_requests_naming_them(dispatcher, args,
                                                        reason):
    # the method is decorated: its signature must still be the one checked
    error = _error(dispatcher, _Incoming("release", args))
    assert isinstance(error, exception.InvalidRequest)
    assert reason in str(error)
    assert dispatcher.endpoints[0].released == []
    assert dispatcher.rejected == ["release"]


@pytest.mark.parametrize("method", ["target", "released", "__init__",
                                    "nothing"])
def test_only_methods_are_served(dispatcher, method):
    error = _error(dispatcher, _Incoming(method))
    assert isinstance(error, exception.InvalidRequest)


@pytest.mark.parametrize("method,version,reason", [
    ("nothing", "1.0", "Endpoint does not support RPC method nothing"),
    ("target", "1.0", "Endpoint does not support RPC method 'target'"),
    ("release", "1.1", "Endpoint does not support RPC version 1.1. "
                       "Attempted method: release"),
])
def test_a_refused_call_starts_no_heartbeat(dispatcher, method, version,
                                            reason):
    # oslo.messaging's dispatcher starts a call's heartbeat thread before
    # it looks for the method, and never stops it when there is none: a
    # refused call must not get that far
    incoming = _Incoming(method)
    incoming.message["version"] = version
    incoming.client_timeout = 4
    before = threading.active_count()
    error = _error(dispatcher, incoming)
    assert reason in str(error)
    assert threading.active_count() == before


def test_an_oversized_message_is_refused_before_it_is_read(dispatcher):
    incoming = _Incoming("release", {"consumer_uuid": UUID}, size=4097)
    error = _error(dispatcher, incoming)
    assert "4097 bytes exceeds [wire] max_message_bytes (4096)" in str(error)
    assert dispatcher.endpoints[0].released == []


def test_a_bad_context_is_refused(dispatcher):
    error = _error(dispatcher, _Incoming("release", {"consumer_uuid": UUID},
                                         ctxt={"roles": "admin"}))
    assert "context.roles must be a list" in str(error)


def test_an_unexpected_error_is_an_internal_error_logged_once(dispatcher,
                                                              caplog):
    with caplog.at_level(logging.WARNING):
        error = _error(dispatcher, _Incoming("get_statistics"))
    assert type(error) is exception.InternalError
    assert "failed to handle get_statistics" in str(error)
    assert "OverflowError" not in str(error)
    [record] = caplog.records
    assert record.exc_info[0] is OverflowError
    assert dispatcher.rejected == []


def test_a_gantt_exception_the_method_does_not_list_keeps_its_type(
        dispatcher):
    error = _error(dispatcher, _Incoming("get_aggregates"))
    assert type(error) is exception.ProviderNotFound


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_refusals_are_logged_at_a_bounded_rate_then_summed_up(caplog):
    clock = _Clock()
    log = rejections.RejectionLog(logging.getLogger("test.rate"), burst=3,
                                  interval=60, clock=clock)
    with caplog.at_level(logging.WARNING):
        for i in range(1000):
            log.rejected("release" if i % 2 else "reclaim", "bad %d" % i)
        assert len(caplog.records) == 3
        clock.now = 61
        log.rejected("release", "bad again")
    summary, again = caplog.records[3:]
    assert summary.getMessage() == (
        "997 more message(s) refused or failed in the last 60s and not "
        "logged one by one: reclaim 498, release 499")
    assert again.getMessage() == "Rejected release message: bad again"


def test_a_long_reason_is_cut(caplog):
    log = rejections.RejectionLog(logging.getLogger("test.cut"))
    with caplog.at_level(logging.WARNING):
        log.rejected("update_resource_stats", "x" * (1 << 20))
    message = caplog.records[0].getMessage()
    assert len(message) < 400
    assert message.endswith("... (1048576 characters)")
