"""Selection and AllocationRequest: the scheduler's answer for one instance."""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class AllocationItem(base.GanttObject):
    """The amounts one provider gives to one consumer."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "resource_provider_uuid": fields.UUIDField(),
        "resources": fields.DictOfIntegersField(),
    }


@base.GanttObjectRegistry.register
class AllocationRequest(base.GanttObject):
    """Exactly which provider gives which amount, for one instance."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "allocations": fields.ListOfObjectsField("AllocationItem"),
    }

    def as_mapping(self):
        """``{provider uuid: {resource class: amount}}``."""
        return {a.resource_provider_uuid: dict(a.resources)
                for a in self.allocations}


@base.GanttObjectRegistry.register
class Selection(base.GanttObject):
    """One host for one instance.

    The first Selection of each list returned by ``select_destinations`` is
    claimed (``claimed`` is True); the others are alternates from the same
    cell, each with its own allocation request for ``reclaim``.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "service_host": fields.StringField(),
        "nodename": fields.StringField(),
        "compute_node_uuid": fields.UUIDField(),
        "cell_uuid": fields.UUIDField(nullable=True, default=None),
        "weight": fields.FloatField(default=0.0),
        "limits": fields.DictOfIntegersField(default={}),
        "allocation_request": fields.ObjectField("AllocationRequest"),
        "consumer_uuid": fields.UUIDField(),
        "claimed": fields.BooleanField(default=False),
    }
