"""ProvidersFull on the wire: rebuilt as itself for a caller that allows
gantt.exception, a RemoteError named ProvidersFull for one that does not,
and caught by every caller of NoValidHost."""

import sys

import oslo_messaging
from oslo_messaging._drivers import common as driver_common

from gantt import exception
from gantt import rpc
from gantt.rpcapi import server


def _across(exc, allowed):
    try:
        raise exc
    except exception.GanttException:
        data = driver_common.serialize_remote_exception(
            sys.exc_info())
    return driver_common.deserialize_remote_exception(data, allowed)


def test_a_gantt_caller_gets_providers_full_as_no_valid_host():
    got = _across(exception.ProvidersFull(hosts=3, reason="0 of 3 hosts"),
                  rpc.ALLOWED_EXMODS)
    assert isinstance(got, exception.ProvidersFull)
    assert isinstance(got, exception.NoValidHost)
    assert got.kwargs == {"hosts": 3, "reason": "0 of 3 hosts"}
    assert "All 3 provider(s)" in str(got)


def test_a_caller_without_gantt_reads_the_class_name():
    got = _across(exception.ProvidersFull(hosts=1, reason="r"), [])
    assert isinstance(got, oslo_messaging.RemoteError)
    assert got.exc_type == "ProvidersFull"


def test_the_select_calls_let_it_through():
    assert issubclass(exception.ProvidersFull, server._CALL_ERRORS)
