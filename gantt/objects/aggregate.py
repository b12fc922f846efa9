"""Aggregate: a named set of hosts with metadata, set by operators.

Metadata keys follow Nova's: ``availability_zone``, ``filter_tenant_id*``,
``instance_type``, ``max_io_ops_per_host``, ``max_instances_per_host``,
``<weigher>_weight_multiplier``, ``trait:<TRAIT>=required`` and any key an
``aggregate_instance_extra_specs:`` flavor spec or an image property names.
"""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class Aggregate(base.GanttObject):
    """A host aggregate.

    A host is a member when it is named in ``hosts`` or when its agent
    reports the aggregate's uuid in ``ComputeNode.aggregates``.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "uuid": fields.UUIDField(),
        "name": fields.StringField(),
        "hosts": fields.ListOfStringsField(default=[]),
        "metadata": fields.DictOfStringsField(default={}),
    }

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)
