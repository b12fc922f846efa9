"""HostState: the scheduler's view of one host, for operators."""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class ResourceUsage(base.GanttObject):
    """One resource class on one host as the scheduler sees it."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "resource_class": fields.StringField(),
        "total": fields.IntegerField(),
        "reserved": fields.IntegerField(),
        "allocation_ratio": fields.FloatField(),
        "used": fields.IntegerField(),
        "free": fields.IntegerField(),
    }


@base.GanttObjectRegistry.register
class HostState(base.GanttObject):
    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "uuid": fields.UUIDField(),
        "host": fields.StringField(),
        "nodename": fields.StringField(),
        "cell_uuid": fields.UUIDField(nullable=True),
        "availability_zone": fields.StringField(nullable=True),
        "resources": fields.ListOfObjectsField("ResourceUsage"),
        "traits": fields.ListOfStringsField(),
        "aggregates": fields.ListOfStringsField(),
        "num_instances": fields.IntegerField(),
        "num_io_ops": fields.IntegerField(),
        "generation": fields.IntegerField(),
        "report_sequence": fields.IntegerField(),
        "updated_at": fields.DateTimeField(nullable=True),
        "up": fields.BooleanField(),
        "disabled": fields.BooleanField(),
    }
