"""HostState: the scheduler's view of one host, for operators."""

from oslo_utils import versionutils

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
    """One provider the worker holds: a compute node or a standalone one."""

    # Version 1.0: Initial version
    # Version 1.1: Added kind, service, capabilities, instance_uuid, vacant
    # Version 1.2: Added location
    VERSION = "1.2"

    KIND_FIELDS = ("kind", "service", "capabilities", "instance_uuid",
                   "vacant")

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
        # "compute" for a compute node; a standalone provider's own kind
        "kind": fields.StringField(default="compute"),
        "service": fields.StringField(nullable=True, default=None),
        "capabilities": fields.DictOfCapabilitiesField(default={}),
        "instance_uuid": fields.UUIDField(nullable=True, default=None),
        # of a kind in [scheduler] vacancy_kinds, and nothing allocated
        "vacant": fields.BooleanField(default=False),
        # the effective location (report's, filled from topology
        # aggregates); None: unknown
        "location": fields.StringField(nullable=True, default=None),
    }

    obj_relationships = {"resources": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 2):
            primitive.pop("location", None)
        if target < (1, 1):
            # an older client lists every provider as it lists hosts
            for name in self.KIND_FIELDS:
                primitive.pop(name, None)
