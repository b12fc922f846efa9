"""How SchedulerClient spends a call's timeout, and what it asks of
workers while it waits (see gantt.rpcapi.sending)."""

import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
import pytest

from gantt import exception
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import sending
from gantt.tests import factories


def _rabbit_conf(**overrides):
    conf = cfg.ConfigOpts()
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf([])
    for name, value in overrides.items():
        conf.set_override(name, value, group="oslo_messaging_rabbit")
    return conf


@pytest.mark.parametrize("timeout,retry,reconnect_s", [
    # the default back-off sleeps 1+1, 3+1, 5+1, 7+1… seconds
    (2, 0, 0.0), (5, 1, 2.0), (10, 1, 2.0), (12, 2, 6.0),
    (60, 2, 6.0), (1800, 2, 6.0)])
def test_reconnecting_takes_at_most_half_the_timeout_and_10_s(
        timeout, retry, reconnect_s):
    plan = sending.SendPlan.for_timeout(_rabbit_conf(), timeout)
    assert (plan.retry, plan.reconnect_s) == (retry, reconnect_s)
    # the whole call, reconnecting and waiting, is bounded by its timeout
    assert plan.reconnect_s + plan.wait_s == timeout
    # the reply queue may take what reconnecting may, and a second
    assert plan.connect_s == max(reconnect_s, min(timeout / 2, 1))


def test_the_plan_follows_the_configured_back_off():
    conf = _rabbit_conf(rabbit_retry_interval=1, rabbit_retry_backoff=0,
                        kombu_reconnect_delay=0.5)
    plan = sending.SendPlan.for_timeout(conf, 10)
    assert (plan.retry, plan.reconnect_s) == (3, 4.5)


def test_without_a_timeout_the_transports_default_is_spent():
    conf = _rabbit_conf()
    conf.set_override("rpc_response_timeout", 40)
    plan = sending.SendPlan.for_timeout(conf, None)
    assert plan.wait_s + plan.reconnect_s == 40


def test_another_driver_keeps_its_own_retries_and_the_whole_wait(
        fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t", timeout=10)
    assert client.send_plan == sending.SendPlan(
        retry=None, reconnect_s=0.0, wait_s=10, connect_s=0.0)


@pytest.mark.parametrize("monitor", [0, 1, 2.5, "30", True])
def test_a_call_monitor_timeout_workers_cannot_keep_is_refused(
        fake_transport, monitor):
    with pytest.raises(exception.ConfigurationError,
                       match="call_monitor_timeout"):
        rpc_client.SchedulerClient(fake_transport, "t",
                                   call_monitor_timeout=monitor)


def test_replace_needs_rpc_api_1_7(fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap="1.6")
    with pytest.raises(exception.VersionCapped) as err:
        client.select_destinations(None, factories.request(),
                                   factories.uuids(1), replace=True)
    assert err.value.kwargs["version"] == "1.7"


class _Driver:
    """A driver whose reply queue connects when ``connected`` is set."""

    def __init__(self):
        self.connected = threading.Event()
        self.connecting = threading.Event()
        self.opened = 0

    def _get_reply_q(self):
        self.opened += 1
        self.connecting.set()
        self.connected.wait(30)
        return "reply_q"


class _Transport:
    def __init__(self):
        self._driver = _Driver()


class _Context:
    """An oslo.messaging call context that records its calls."""

    def __init__(self, timeout=None, calls=None):
        self.timeout = timeout
        self.calls = [] if calls is None else calls

    def prepare(self, timeout=None):
        return _Context(timeout, self.calls)

    def call(self, ctxt, method, **kwargs):
        self.calls.append((method, self.timeout))
        return "answer"


def _sender(transport, wait_s=6.0, connect_s=0.2):
    plan = sending.SendPlan(retry=1, reconnect_s=2.0, wait_s=wait_s,
                            connect_s=connect_s)
    context = _Context(timeout=wait_s)
    return sending.Sender(context, plan,
                          sending.ReplyQueue(transport)), context


def test_a_call_whose_reply_queue_cannot_connect_fails_and_sends_nothing():
    transport = _Transport()
    sender, context = _sender(transport)
    started = time.monotonic()
    with pytest.raises(messaging.MessageDeliveryFailure,
                       match="nothing was sent"):
        sender.call({}, "get_statistics")
    assert time.monotonic() - started < 1
    assert context.calls == []
    # the connecting goes on in the background, once for every call
    with pytest.raises(messaging.MessageDeliveryFailure):
        sender.call({}, "get_statistics")
    transport._driver.connected.set()
    assert sender.call({}, "get_statistics") == "answer"
    assert transport._driver.opened == 1


def _connect_after(driver, pause):
    """Let the reply queue connect ``pause`` seconds after the sender
    began to connect it: whatever the load, the sender waited that long."""
    driver.connecting.wait(30)
    time.sleep(pause)
    driver.connected.set()


def test_the_first_call_waits_for_its_reply_that_much_less():
    transport = _Transport()
    sender, context = _sender(transport, wait_s=6.0, connect_s=5.0)
    threading.Thread(target=_connect_after,
                     args=(transport._driver, 0.3)).start()
    started = time.monotonic()
    assert sender.call({}, "get_statistics") == "answer"
    took = time.monotonic() - started
    [(method, timeout)] = context.calls
    # less by what the connecting took: at least the pause, at most all
    assert 6.0 - took <= timeout <= 6.0 - 0.3
    # later calls find the queue: the whole wait
    sender.call({}, "get_statistics")
    assert context.calls[1] == ("get_statistics", 6.0)


def test_a_driver_without_a_reply_queue_is_never_waited_for(fake_transport):
    sender = sending.Sender(_Context(timeout=6.0), sending.SendPlan(
        retry=None, reconnect_s=0.0, wait_s=6.0, connect_s=0.0),
        sending.ReplyQueue(fake_transport))
    assert sender.call({}, "get_statistics") == "answer"
