"""SchedulingNotifier: what it emits, and that it is off by default."""

import threading
import time

import oslo_messaging as messaging
from oslo_messaging.notify import _impl_test
import pytest

from gantt import exception
from gantt import notifier as gantt_notifier
from gantt import rpc
from gantt.cmd import common
from gantt.objects import selection
from gantt.scheduler import vacancy
from gantt.tests import factories as f
from gantt.tests.functional import waiting


def _conf(**notify):
    conf = common.make_conf()
    conf([], default_config_files=[])
    # registers oslo.messaging's transport and notifier options
    messaging.get_notification_transport(conf, url="fake:/").cleanup()
    conf.set_override("transport_url", "fake:/")
    for name, value in notify.items():
        conf.set_override(name, value, group="oslo_messaging_notifications")
    return conf


@pytest.fixture(autouse=True)
def _reset():
    _impl_test.reset()
    yield
    _impl_test.reset()


def test_nothing_is_emitted_without_a_driver():
    sender = gantt_notifier.SchedulingNotifier.from_conf(_conf())
    assert not sender.enabled
    sender.start({}, f.request(f.flavor()), f.uuids(1))
    assert _impl_test.NOTIFICATIONS == []


def test_start_end_and_error_carry_versioned_payloads():
    sender = gantt_notifier.SchedulingNotifier.from_conf(
        _conf(driver=["test"]), host="sched1")
    spec = f.request(f.flavor(vcpus=2))
    uuids = f.uuids(1)
    node = f.host_uuid("node1")
    claimed = selection.Selection(
        service_host="node1", nodename="node1", compute_node_uuid=node,
        cell_uuid=None, weight=1.0, limits={},
        allocation_request=selection.AllocationRequest(allocations=[]),
        consumer_uuid=uuids[0], claimed=True)
    alternate = claimed.obj_clone()
    alternate.claimed = False

    sender.start({}, spec, uuids)
    sender.end({}, spec, uuids, [[claimed, alternate]])
    sender.error({}, spec, uuids, exception.NoValidHost(reason="no room"))
    assert sender.flush(10)     # sent from a thread of its own

    sent = [(m["event_type"], priority, m["publisher_id"], m["payload"])
            for _ctxt, m, priority, _retry in _impl_test.NOTIFICATIONS]
    assert [s[:3] for s in sent] == [
        ("scheduler.select_destinations.start", "INFO",
         "gantt-scheduler:sched1"),
        ("scheduler.select_destinations.end", "INFO",
         "gantt-scheduler:sched1"),
        ("scheduler.select_destinations.error", "ERROR",
         "gantt-scheduler:sched1")]
    data = []
    for *_, payload in sent:
        assert payload["gantt_object.name"] == "SelectDestinationsPayload"
        assert payload["gantt_object.version"] == "1.2"
        data.append(payload["gantt_object.data"])
    assert [d["instance_uuids"] for d in data] == [uuids] * 3
    assert data[0]["destinations"] is None and data[0]["reason"] is None
    # the claimed selection of each instance only, not its alternates
    [end] = data[1]["destinations"]
    assert end["gantt_object.data"]["compute_node_uuid"] == node
    assert end["gantt_object.data"]["claimed"] is True
    assert data[2]["reason"] == "No valid host was found. no room"


def test_a_vacancy_is_notified_with_its_generation():
    sender = gantt_notifier.SchedulingNotifier.from_conf(
        _conf(driver=["test"]), host="sched1")
    ctr = f.host_uuid("ctr-1")
    sender.provider_vacant(vacancy.Vacancy(
        provider_uuid=ctr, kind="container", generation=7, name="ctr-1",
        service="zun-compute", instance_uuid=f.uuids(1)[0]))
    assert sender.flush(10)
    [(_ctxt, message, priority, _retry)] = _impl_test.NOTIFICATIONS
    assert (message["event_type"], priority) == ("provider.vacant", "INFO")
    payload = message["payload"]
    assert (payload["gantt_object.name"], payload["gantt_object.version"]) \
        == ("ProviderVacantPayload", "1.0")
    data = payload["gantt_object.data"]
    assert (data["provider_uuid"], data["kind"], data["generation"]) == (
        ctr, "container", 7)
    # off by default: nothing is built or sent
    gantt_notifier.SchedulingNotifier.from_conf(_conf()).provider_vacant(
        vacancy.Vacancy(provider_uuid=ctr, kind="container", generation=8))
    assert len(_impl_test.NOTIFICATIONS) == 1


class _StuckBus:
    """A notifier whose bus does not answer until released."""

    def __init__(self):
        self.entered = threading.Event()
        self.released = threading.Event()
        self.sent = []

    def info(self, ctxt, event, payload):
        self.entered.set()
        self.released.wait(30)
        self.sent.append(event)

    error = info


def test_a_stuck_bus_never_holds_up_a_placement(caplog):
    bus = _StuckBus()
    sender = gantt_notifier.SchedulingNotifier(bus, queue_size=2)
    spec = f.request(f.flavor())
    uuids = f.uuids(1)

    started = time.monotonic()
    sender.start({}, spec, uuids)
    assert bus.entered.wait(10)     # the first is with the bus, stuck
    for _ in range(5):
        sender.start({}, spec, uuids)
    assert time.monotonic() - started < 1.0
    assert not sender.flush(0.2)    # the queue is full

    bus.released.set()
    assert sender.flush(10)
    # the first went to the bus, two waited, the newest three were dropped
    assert len(bus.sent) == 3
    assert "3 notification(s) dropped" not in caplog.text
    assert "2 notification(s) dropped so far" in caplog.text


class _Heard:
    def __init__(self):
        self.events = []

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.events.append(event_type)


def test_a_given_transport_carries_them_to_listeners_on_its_bus():
    # fake: has one bus per driver: what gantt-demo's in-process daemon
    # needs is notifications on the bus its own listener hears
    conf = _conf(driver=["messagingv2"], topics=["heard"])
    rpc_transport = rpc.get_transport(conf, url="fake:/")
    bus = rpc.notification_transport(rpc_transport)
    heard = _Heard()
    listener = messaging.get_notification_listener(
        bus, [messaging.Target(topic="heard")], [heard],
        executor="threading")
    listener.start()
    try:
        sender = gantt_notifier.SchedulingNotifier.from_conf(
            conf, transport=bus)
        sender.start({}, f.request(f.flavor()), f.uuids(1))
        assert sender.flush(10)
        waiting.until("the listener hearing the start",
                      lambda: heard.events)
    finally:
        listener.stop()
        listener.wait()
        rpc_transport.cleanup()
    assert heard.events == ["scheduler.select_destinations.start"]
