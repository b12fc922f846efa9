"""PciDevicePool: free PCI devices of one kind on one host.

Agents report pools the way Nova's ``PciDeviceStats`` keeps them: devices
that share vendor, product, NUMA node and tags (``dev_type`` such as
``type-PCI``, ``type-PF``, ``type-VF``; ``physical_network``…) are one
pool, and ``count`` is how many of them are free.
"""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class PciDevicePool(base.GanttObject):
    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "vendor_id": fields.StringField(),
        "product_id": fields.StringField(),
        "numa_node": fields.IntegerField(nullable=True, default=None),
        "count": fields.NonNegativeIntegerField(),
        "tags": fields.DictOfStringsField(default={}),
    }

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)
