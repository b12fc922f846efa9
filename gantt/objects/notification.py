"""Payloads of the notifications a worker emits (see gantt.notifier).

They travel to notification listeners, not over the scheduler's RPC API:
a listener reads each payload's own version, so they are not part of the
RPC version manifests (gantt.rpcapi.versions) and ``[upgrade_levels]``
does not cap them.
"""

from gantt.objects import base
from gantt.objects import fields


class NotificationPayload(base.GanttObject):
    """Base of the objects only notifications carry."""

    NOTIFICATION_ONLY = True


@base.GanttObjectRegistry.register
class SelectDestinationsPayload(NotificationPayload):
    """One ``select_destinations`` call: asked, then placed or refused."""

    # Version 1.0: Initial version
    # Version 1.1: RequestSpec 1.2 (profile, packing, capabilities; the
    #              flavor may be None)
    VERSION = "1.1"

    fields = {
        "request_spec": fields.ObjectField("RequestSpec"),
        "instance_uuids": fields.ListOfStringsField(),
        # .end: the claimed Selection of each instance, in the order of
        # instance_uuids (alternates are left out)
        "destinations": fields.ListOfObjectsField("Selection",
                                                  nullable=True,
                                                  default=None),
        # .error: why nothing was placed, as the caller was told
        "reason": fields.StringField(nullable=True, default=None),
    }
