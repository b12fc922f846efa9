"""Notifications: what a worker tells the rest of the cloud it placed.

As nova-scheduler does, a worker emits ``scheduler.select_destinations``
``.start`` (INFO) when a call begins, then ``.end`` (INFO) with the host
claimed for each instance or ``.error`` (ERROR) with the reason nothing
was placed. The payload is a versioned ``SelectDestinationsPayload``.
oslo.messaging's notifier sends them as ``[oslo_messaging_notifications]``
says (driver, topics, transport_url); with no driver set (the default)
nothing is built or sent.
"""

import socket

import oslo_messaging as messaging

from gantt import rpc
from gantt.objects import notification

EVENT = "scheduler.select_destinations"


class SchedulingNotifier:
    """Emits the select_destinations notifications, or nothing.

    :param notifier: an oslo.messaging Notifier, or None for none
    """

    def __init__(self, notifier=None):
        self._notifier = notifier

    @classmethod
    def from_conf(cls, conf, host=None):
        transport = messaging.get_notification_transport(conf)
        notifier = messaging.Notifier(
            transport, publisher_id="gantt-scheduler:%s" % (
                host or socket.gethostname()),
            serializer=rpc.Serializer())
        # oslo.messaging's is_enabled() is true for an empty driver list,
        # which sends nothing: check the option itself
        drivers = conf.oslo_messaging_notifications.driver
        if not [d for d in drivers if d != "noop"]:
            transport.cleanup()
            return cls(None)
        return cls(notifier)

    @property
    def enabled(self):
        return self._notifier is not None

    def start(self, ctxt, spec, instance_uuids):
        if self._notifier is not None:
            self._notifier.info(ctxt, EVENT + ".start", self._payload(
                spec, instance_uuids))

    def end(self, ctxt, spec, instance_uuids, selection_lists):
        if self._notifier is not None:
            self._notifier.info(ctxt, EVENT + ".end", self._payload(
                spec, instance_uuids,
                destinations=[sels[0] for sels in selection_lists]))

    def error(self, ctxt, spec, instance_uuids, reason):
        if self._notifier is not None:
            self._notifier.error(ctxt, EVENT + ".error", self._payload(
                spec, instance_uuids, reason=str(reason)))

    @staticmethod
    def _payload(spec, instance_uuids, destinations=None, reason=None):
        return notification.SelectDestinationsPayload(
            request_spec=spec, instance_uuids=list(instance_uuids),
            destinations=destinations, reason=reason)
