"""How SchedulerClient spends a call's timeout, and what it asks of
workers while it waits (see gantt.rpcapi.client.SendPlan)."""

from oslo_config import cfg
from oslo_messaging import opts as messaging_opts
import pytest

from gantt import exception
from gantt.rpcapi import client as rpc_client
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
    plan = rpc_client.SendPlan.for_timeout(_rabbit_conf(), timeout)
    assert (plan.retry, plan.reconnect_s) == (retry, reconnect_s)
    # the whole call, reconnecting and waiting, is bounded by its timeout
    assert plan.reconnect_s + plan.wait_s == timeout


def test_the_plan_follows_the_configured_back_off():
    conf = _rabbit_conf(rabbit_retry_interval=1, rabbit_retry_backoff=0,
                        kombu_reconnect_delay=0.5)
    plan = rpc_client.SendPlan.for_timeout(conf, 10)
    assert (plan.retry, plan.reconnect_s) == (3, 4.5)


def test_without_a_timeout_the_transports_default_is_spent():
    conf = _rabbit_conf()
    conf.set_override("rpc_response_timeout", 40)
    plan = rpc_client.SendPlan.for_timeout(conf, None)
    assert plan.wait_s + plan.reconnect_s == 40


def test_another_driver_keeps_its_own_retries_and_the_whole_wait(
        fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t", timeout=10)
    assert client.send_plan == rpc_client.SendPlan(
        retry=None, reconnect_s=0.0, wait_s=10)


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
