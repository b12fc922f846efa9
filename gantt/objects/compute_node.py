"""ComputeNode and Inventory: what an agent reports about one host."""

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields

# ComputeNode 1.2 embeds these by name: they must be registered with it
from gantt.objects import numa  # noqa: F401
from gantt.objects import pci  # noqa: F401
from gantt.objects import provider  # noqa: F401


@base.GanttObjectRegistry.register
class Inventory(base.GanttObject):
    """One resource class offered by one provider (Placement semantics).

    Capacity is ``(total - reserved) * allocation_ratio``; a single
    allocation must lie in ``[min_unit, max_unit]`` and be a multiple of
    ``step_size``.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "resource_class": fields.StringField(),
        "total": fields.NonNegativeIntegerField(),
        "reserved": fields.NonNegativeIntegerField(default=0),
        "min_unit": fields.IntegerField(default=1),
        "max_unit": fields.IntegerField(default=2147483647),
        "step_size": fields.IntegerField(default=1),
        "allocation_ratio": fields.FloatField(default=1.0),
    }

    def obj_load_attr(self, attrname):
        # Unset optional fields read as their defaults, so that a minimal
        # report (class and total) is complete.
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class ComputeNode(base.GanttObject):
    """The full state of one host (a resource-provider tree root).

    Agents send the whole state every report interval, never deltas, with a
    ``report_sequence`` that only grows (for example the agent's clock in
    nanoseconds): the scheduler drops a report whose sequence is not newer
    than the one it holds, so duplicated or reordered casts are harmless.
    A report naming another ``boot_id`` than the one held starts a new
    sequence (see ``report_rules.supersedes``).
    """

    # Version 1.0: Initial version
    # Version 1.1: Added instance_uuids
    # Version 1.2: Added numa_cells and pci_pools
    # Version 1.3: Added child_providers
    # Version 1.4: NUMACell 1.1 (siblings) in numa_cells
    # Version 1.5: Added boot_id
    # Version 1.6: Added location
    VERSION = "1.6"

    fields = {
        "uuid": fields.UUIDField(),
        "host": fields.StringField(),
        "nodename": fields.StringField(),
        "cell_uuid": fields.UUIDField(nullable=True, default=None),
        "availability_zone": fields.StringField(nullable=True, default=None),
        "disabled": fields.BooleanField(default=False),
        "inventories": fields.ListOfObjectsField("Inventory", default=[]),
        "traits": fields.ListOfStringsField(default=[]),
        "aggregates": fields.ListOfStringsField(default=[]),
        "num_instances": fields.NonNegativeIntegerField(default=0),
        "num_io_ops": fields.NonNegativeIntegerField(default=0),
        "capabilities": fields.DictOfStringsField(default={}),
        "stats": fields.DictOfStringsField(default={}),
        "metrics": fields.DictOfFloatsField(default={}),
        "report_sequence": fields.IntegerField(),
        "updated_at": fields.DateTimeField(nullable=True, default=None),
        # the consumers (instances) the agent runs; None when the agent does
        # not say, which keeps its host out of the orphan audit
        "instance_uuids": fields.ListOfStringsField(nullable=True,
                                                    default=None),
        # NUMA cells (CPUs, memory, pinned CPUs, huge pages) and free PCI
        # device pools, for the NUMATopology and PciPassthrough filters
        "numa_cells": fields.ListOfObjectsField("NUMACell", default=[]),
        "pci_pools": fields.ListOfObjectsField("PciDevicePool", default=[]),
        # the rest of the provider tree rooted at this node (NUMA cells,
        # SR-IOV physical functions, GPUs…), parents before children
        "child_providers": fields.ListOfObjectsField("ResourceProvider",
                                                     default=[]),
        # a uuid the agent draws once per start: a report of another boot
        # than the one held is taken whatever its report_sequence, so a
        # restarted agent (or one whose sequence a forged report pushed
        # ahead) is never locked out. None: the agent does not say.
        "boot_id": fields.UUIDField(nullable=True, default=None),
        # where the host is in the datacenter, ``room=r1/rack=b07`` (levels
        # of [topology] levels, outermost first); None: the agent does not
        # say (topology aggregates may, see doc/source/admin/topology.rst)
        "location": fields.StringField(nullable=True, default=None),
    }

    # which Inventory version each ComputeNode version embeds (for backports)
    obj_relationships = {"inventories": [("1.0", "1.0")],
                         "numa_cells": [("1.2", "1.0"), ("1.4", "1.1")],
                         "pci_pools": [("1.2", "1.0")],
                         "child_providers": [("1.3", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 6):
            primitive.pop("location", None)
        if target < (1, 5):
            primitive.pop("boot_id", None)
        if target < (1, 3):
            primitive.pop("child_providers", None)
        if target < (1, 2):
            primitive.pop("numa_cells", None)
            primitive.pop("pci_pools", None)
        if target < (1, 1):
            primitive.pop("instance_uuids", None)
