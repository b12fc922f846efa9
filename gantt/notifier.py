"""Notifications: what a worker tells the rest of the cloud it placed,
and which providers the last allocation left (``provider.vacant``).

As nova-scheduler does, a worker emits ``scheduler.select_destinations``
``.start`` (INFO) when a call begins, then ``.end`` (INFO) with the host
claimed for each instance or ``.error`` (ERROR) with the reason nothing
was placed. The payload is a versioned ``SelectDestinationsPayload``.
oslo.messaging's notifier sends them as ``[oslo_messaging_notifications]``
says (driver, topics, transport_url); with no driver set (the default)
nothing is built or sent.

Unlike nova-scheduler, a placement never waits for its notifications:
they are serialised on the request's thread (the objects may change
after the call returns) and published from a thread of their own. A
notification bus that is slow or down (oslo.messaging retries a publish
forever by default) then costs a bounded queue of notifications, dropped
and counted in the log once it is full, never a placement.
"""

import logging
import queue
import socket
import threading
import time

import oslo_messaging as messaging

from gantt import rpc
from gantt.objects import notification

LOG = logging.getLogger(__name__)

EVENT = "scheduler.select_destinations"
#: the last allocation left a provider of a kind in [scheduler]
#: vacancy_kinds (see gantt.scheduler.vacancy)
VACANT_EVENT = "provider.vacant"

#: notifications waiting for the bus at most; the newest are dropped
QUEUE_SIZE = 1000


class SchedulingNotifier:
    """Emits the select_destinations notifications, or nothing.

    :param notifier: an oslo.messaging Notifier that sends primitives as
        they are, or None for no notifications at all
    """

    def __init__(self, notifier=None, queue_size=QUEUE_SIZE):
        self._notifier = notifier
        self._serializer = rpc.Serializer()
        self._outbox = queue.Queue(maxsize=queue_size)
        self._dropped = 0
        self._sender = None
        if notifier is not None:
            self._sender = threading.Thread(
                target=self._send, daemon=True, name="notifications")
            self._sender.start()

    @classmethod
    def from_conf(cls, conf, host=None, transport=None):
        """:param transport: the notification transport to send on; None:
            one from ``[oslo_messaging_notifications]`` (cleaned up here
            if unused). A caller on the ``fake:`` driver passes one on its
            own bus, which is the only one its listeners hear."""
        own = transport is None
        if own:
            transport = messaging.get_notification_transport(conf)
        # payloads are primitives by the time they are sent (see _emit)
        notifier = messaging.Notifier(
            transport, publisher_id="gantt-scheduler:%s" % (
                host or socket.gethostname()))
        # oslo.messaging's is_enabled() is true for an empty driver list,
        # which sends nothing: check the option itself
        drivers = conf.oslo_messaging_notifications.driver
        if not [d for d in drivers if d != "noop"]:
            if own:
                transport.cleanup()
            return cls(None)
        return cls(notifier)

    @property
    def enabled(self):
        return self._notifier is not None

    def start(self, ctxt, spec, instance_uuids):
        if self._notifier is not None:
            self._emit("info", ctxt, EVENT + ".start",
                       self._payload(spec, instance_uuids))

    def end(self, ctxt, spec, instance_uuids, selection_lists):
        if self._notifier is not None:
            self._emit("info", ctxt, EVENT + ".end", self._payload(
                spec, instance_uuids,
                destinations=[sels[0] for sels in selection_lists]))

    def error(self, ctxt, spec, instance_uuids, reason):
        if self._notifier is not None:
            self._emit("error", ctxt, EVENT + ".error", self._payload(
                spec, instance_uuids, reason=str(reason)))

    def provider_vacant(self, vacancy):
        """``provider.vacant`` (INFO) for a :class:`~gantt.scheduler.
        vacancy.Vacancy`, with a ProviderVacantPayload."""
        if self._notifier is not None:
            self._emit("info", None, VACANT_EVENT,
                       notification.ProviderVacantPayload(
                           provider_uuid=vacancy.provider_uuid,
                           kind=vacancy.kind,
                           generation=vacancy.generation,
                           name=vacancy.name, service=vacancy.service,
                           instance_uuid=vacancy.instance_uuid))

    def flush(self, timeout):
        """Wait up to ``timeout`` seconds for the queue to be sent;
        whether it was."""
        if self._sender is None:
            return True
        deadline = time.monotonic() + timeout
        done = threading.Event()
        try:
            self._outbox.put((None, done), timeout=timeout)
        except queue.Full:
            return False
        return done.wait(max(0.0, deadline - time.monotonic()))

    @staticmethod
    def _payload(spec, instance_uuids, destinations=None, reason=None):
        return notification.SelectDestinationsPayload(
            request_spec=spec, instance_uuids=list(instance_uuids),
            destinations=destinations, reason=reason)

    def _emit(self, priority, ctxt, event, payload):
        ctxt = self._serializer.serialize_context(ctxt) if (
            ctxt is not None) else {}
        message = (priority, ctxt, event,
                   self._serializer.serialize_entity(ctxt, payload))
        try:
            self._outbox.put_nowait((message, None))
        except queue.Full:
            # (a count for the log: a lost increment under a race is fine)
            self._dropped += 1
            # at the 1st, 2nd, 4th, 8th... drop: not one line per placement
            if self._dropped & (self._dropped - 1) == 0:
                LOG.warning("Notification bus not keeping up: %d "
                            "notification(s) dropped so far (the newest "
                            "are dropped once %d wait)", self._dropped,
                            self._outbox.maxsize)

    def _send(self):
        while True:
            message, done = self._outbox.get()
            if done is not None:
                done.set()
                continue
            priority, ctxt, event, payload = message
            # oslo.messaging logs (and swallows) a driver's failure
            getattr(self._notifier, priority)(ctxt, event, payload)
