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
    # Version 1.2: RequestSpec 1.3 (group_slot)
    VERSION = "1.2"

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


@base.GanttObjectRegistry.register
class ProviderVacantPayload(NotificationPayload):
    """``provider.vacant``: the last allocation left a provider whose kind
    is in ``[scheduler] vacancy_kinds``. Its owner may retire it with
    ``retire_provider(provider_uuid, generation)``, which refuses if
    anything was placed there since (the generation moved)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "provider_uuid": fields.UUIDField(),
        "kind": fields.StringField(),
        # the generation the provider had once it was empty: the token
        # retire_provider compares
        "generation": fields.IntegerField(),
        "name": fields.StringField(nullable=True, default=None),
        "service": fields.StringField(nullable=True, default=None),
        # a container host: the instance it runs in
        "instance_uuid": fields.UUIDField(nullable=True, default=None),
    }
