"""NUMACell and NUMAPagePool: one host NUMA node as the agent reports it.

A host that reports no cells has no NUMA topology: requests that need one
(``hw:numa_nodes``, ``hw:cpu_policy=dedicated``, ``hw:mem_page_size``)
never land there.
"""

from oslo_utils import versionutils

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

    ``siblings`` (1.1) lists the cell's SMT thread sibling sets, as Nova's
    ``NUMACell.siblings`` does (``[[0, 8], [1, 9], ...]``: the host CPUs
    that share one physical core). Empty (and every 1.0 report) means "no
    SMT information": each CPU is then its own core, as on a host without
    SMT. The CPU thread policies (``hw:cpu_thread_policy``) read it.
    """

    # Version 1.0: Initial version
    # Version 1.1: Added siblings
    VERSION = "1.1"

    fields = {
        "id": fields.NonNegativeIntegerField(),
        "cpuset": fields.ListOfIntegersField(default=[]),
        "pcpuset": fields.ListOfIntegersField(default=[]),
        "pinned_cpus": fields.ListOfIntegersField(default=[]),
        "cpu_usage": fields.NonNegativeIntegerField(default=0),
        "memory_mb": fields.NonNegativeIntegerField(),
        "memory_usage_mb": fields.NonNegativeIntegerField(default=0),
        "mempages": fields.ListOfObjectsField("NUMAPagePool", default=[]),
        "siblings": fields.ListOfListsOfIntegersField(default=[]),
    }

    obj_relationships = {"mempages": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            primitive.pop("siblings", None)
