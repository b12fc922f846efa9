"""NUMACell and NUMAPagePool: one host NUMA node as the agent reports it.

A host that reports no cells has no NUMA topology: requests that need one
(``hw:numa_nodes``, ``hw:cpu_policy=dedicated``, ``hw:mem_page_size``)
never land there.
"""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class NUMAPagePool(base.GanttObject):
    """The pages of one size on one NUMA cell (sizes in KiB)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "size_kb": fields.NonNegativeIntegerField(),
        "total": fields.NonNegativeIntegerField(),
        "used": fields.NonNegativeIntegerField(default=0),
        "reserved": fields.NonNegativeIntegerField(default=0),
    }

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class NUMACell(base.GanttObject):
    """One host NUMA cell.

    ``cpuset`` are the host CPUs that float (shared) guest vCPUs may use
    and ``pcpuset`` those that dedicated (pinned) vCPUs may use, as Nova's
    ``[compute] cpu_shared_set`` / ``cpu_dedicated_set`` split them.
    ``pinned_cpus`` (a subset of ``pcpuset``) are already pinned;
    ``cpu_usage`` counts the shared vCPUs placed on the cell.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "id": fields.NonNegativeIntegerField(),
        "cpuset": fields.ListOfIntegersField(default=[]),
        "pcpuset": fields.ListOfIntegersField(default=[]),
        "pinned_cpus": fields.ListOfIntegersField(default=[]),
        "cpu_usage": fields.NonNegativeIntegerField(default=0),
        "memory_mb": fields.NonNegativeIntegerField(),
        "memory_usage_mb": fields.NonNegativeIntegerField(default=0),
        "mempages": fields.ListOfObjectsField("NUMAPagePool", default=[]),
    }

    obj_relationships = {"mempages": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)
