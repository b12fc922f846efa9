"""select_destinations notifications, as a listener on RabbitMQ sees them."""

import queue
import socket
import threading
import uuid

import kombu
import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt import rpc
from gantt.objects import notification
from gantt.rpcapi import client as rpc_client
from gantt.tests import factories as f
from gantt.tests.functional import waiting


class _Listener:
    """Every notification, in the order they came."""

    def __init__(self):
        self.received = queue.Queue()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.put(("INFO", publisher_id, event_type, payload))

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.put(("ERROR", publisher_id, event_type, payload))

    def next(self):
        return self.received.get(timeout=waiting.WAIT)


@pytest.fixture
def notified(daemon_factory, server_db):
    """A daemon that notifies on a topic of its own, and a listener."""
    topic = "gantt-test-notifications-" + uuid.uuid4().hex[:8]
    daemon = daemon_factory(
        server_db.url, extra="[oslo_messaging_notifications]\n"
                             "driver = messagingv2\ntopics = %s\n" % topic)
    transport = messaging.get_notification_transport(daemon.conf)
    endpoint = _Listener()
    listener = messaging.get_notification_listener(
        transport, [messaging.Target(topic=topic)], [endpoint],
        executor="threading", serializer=rpc.Serializer())
    listener.start()    # its queues exist before anything is placed
    yield daemon, endpoint
    listener.stop()
    listener.wait()
    transport.cleanup()
    _delete_queues(daemon, topic)


def _delete_queues(daemon, topic):
    """Notification queues outlive their listener: drop this test's, once
    the daemon is stopped (a queue deleted while the daemon publishes its
    last notification makes the publish fail, an error in its log)."""
    daemon.stop()
    url = daemon.conf.transport_url
    with kombu.Connection(url.replace("rabbit://", "amqp://", 1)) as conn:
        channel = conn.channel()
        for priority in ("info", "error"):
            channel.queue_delete("%s.%s" % (topic, priority))


def test_a_placement_is_notified_at_start_and_end(notified):
    daemon, listener = notified
    for i in range(2):
        daemon.client.update_resource_stats(None, f.compute_node_obj(
            "notified%d" % i, vcpus=8))
    daemon.wait_for_hosts(2)
    spec = f.request(f.flavor(vcpus=2, memory_mb=1024, root_gb=10),
                     num_instances=2)
    uuids = f.uuids(2)

    lists = daemon.client.select_destinations(None, spec, uuids)

    start = listener.next()
    end = listener.next()
    assert start[:3] == ("INFO", start[1],
                         "scheduler.select_destinations.start")
    assert start[1].startswith("gantt-scheduler:")
    assert end[2] == "scheduler.select_destinations.end"
    for payload in (start[3], end[3]):
        assert isinstance(payload, notification.SelectDestinationsPayload)
        assert payload.instance_uuids == uuids
        assert payload.request_spec.flavor.vcpus == 2
    assert start[3].destinations is None
    # the claimed host of each instance, as the caller got it
    assert [(d.consumer_uuid, d.compute_node_uuid, d.claimed)
            for d in end[3].destinations] == [
        (sels[0].consumer_uuid, sels[0].compute_node_uuid, True)
        for sels in lists]


def test_a_refused_request_is_notified_as_an_error_with_the_reason(
        notified):
    daemon, listener = notified
    daemon.client.update_resource_stats(None, f.compute_node_obj(
        "small", vcpus=2))
    daemon.wait_for_hosts(1)
    spec = f.request(f.flavor(vcpus=64, memory_mb=1024, root_gb=10))

    with pytest.raises(exception.NoValidHost) as refused:
        daemon.client.select_destinations(None, spec, f.uuids(1))

    assert listener.next()[2] == "scheduler.select_destinations.start"
    priority, _publisher, event, payload = listener.next()
    assert (priority, event) == ("ERROR", "scheduler.select_destinations"
                                          ".error")
    assert payload.destinations is None
    assert "VCPU" in payload.reason
    assert payload.reason in str(refused.value)


class _SilentBus:
    """A TCP port that accepts connections and never answers: a broker
    that hangs (oslo.messaging waits on it; a refused connection would
    fail fast instead)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self):
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def silent_bus():
    bus = _SilentBus()
    yield bus
    bus.close()


def test_a_notification_bus_that_hangs_never_holds_up_a_placement(
        silent_bus, daemon_factory, server_db):
    daemon = daemon_factory(
        server_db.url, extra="[oslo_messaging_notifications]\n"
                             "driver = messagingv2\n"
                             "transport_url = rabbit://guest:guest@"
                             "127.0.0.1:%d/\n" % silent_bus.port)
    # what oslo.messaging logs about the bus it cannot reach
    daemon.tracebacks_allowed_from.add("oslo_messaging.notify.messaging")
    daemon.client.update_resource_stats(None, f.compute_node_obj(
        "alone", vcpus=8))
    daemon.wait_for_hosts(1)
    client = rpc_client.SchedulerClient(daemon.transport, daemon.topic,
                                        timeout=waiting.CALL)
    spec = f.request(f.flavor(vcpus=1, memory_mb=512, root_gb=1))

    for _ in range(3):
        [[placed]] = client.select_destinations(None, spec, f.uuids(1))
        assert placed.claimed
    # and it still stops cleanly (the fixture checks exit 0)
