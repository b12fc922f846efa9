"""Resource providers beyond the compute root, and what a report yields.

A compute node is the root of a provider tree: its children (NUMA cells,
SR-IOV physical functions, GPUs, FPGAs) travel inside its ``ComputeNode``
report as ``ResourceProvider`` objects. Providers that belong to no compute
node, such as a storage pool shared by every host of an aggregate, are
reported on their own by the service that owns them (``ProviderReport``).
"""

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields

# AllocationCandidate embeds AllocationRequest by name
from gantt.objects import selection  # noqa: F401


@base.GanttObjectRegistry.register
class ResourceProvider(base.GanttObject):
    """One provider of a tree, or a standalone (for example sharing) one.

    ``parent_provider_uuid`` names the parent within the same report: the
    compute node itself or another child reported before this one. It is
    None for a standalone provider.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "uuid": fields.UUIDField(),
        "name": fields.StringField(),
        "parent_provider_uuid": fields.UUIDField(nullable=True,
                                                 default=None),
        "inventories": fields.ListOfObjectsField("Inventory", default=[]),
        "traits": fields.ListOfStringsField(default=[]),
        "aggregates": fields.ListOfStringsField(default=[]),
    }

    obj_relationships = {"inventories": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class ProviderReport(base.GanttObject):
    """The full state of a standalone provider, from the service owning it.

    As with compute nodes, the whole state is sent every time with a
    ``report_sequence`` that only grows; an older or equal sequence is
    ignored, unless the report names another ``boot_id`` than the stored
    one (see ``report_rules.supersedes``). A provider with the trait
    ``MISC_SHARES_VIA_AGGREGATE`` gives its inventory to every host tree
    in one of its aggregates.
    """

    # Version 1.0: Initial version
    # Version 1.1: Added boot_id
    VERSION = "1.1"

    fields = {
        "provider": fields.ObjectField("ResourceProvider"),
        "report_sequence": fields.IntegerField(),
        # let an inventory shrink below what is allocated (Placement has no
        # such switch; operators draining a pool need one)
        "force": fields.BooleanField(default=False),
        # a uuid the reporting service draws once per start, as
        # ComputeNode.boot_id: a report of another boot than the stored
        # one is taken whatever its report_sequence, so a forged report
        # cannot lock the service out past its next start. None: the
        # service does not say.
        "boot_id": fields.UUIDField(nullable=True, default=None),
    }

    obj_relationships = {"provider": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            primitive.pop("boot_id", None)


@base.GanttObjectRegistry.register
class ReportResult(base.GanttObject):
    """What the scheduler did with a report, for agents that ask.

    ``refused`` names each resource class whose new inventory was not
    taken, with the reason: the same answer Placement gives as a
    409 "inventory in use". The rest of the report was stored.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "provider_uuid": fields.UUIDField(),
        # False: an equal or newer report was already there
        "applied": fields.BooleanField(),
        "generation": fields.IntegerField(nullable=True, default=None),
        "refused": fields.DictOfStringsField(default={}),
    }

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class AllocationCandidate(base.GanttObject):
    """One way to satisfy a request (``get_allocation_candidates``).

    ``mappings`` says which provider(s) satisfied each request group, by
    suffix (the unsuffixed group is ``""``), as Placement's ``mappings``.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "root_provider_uuid": fields.UUIDField(),
        "allocation_request": fields.ObjectField("AllocationRequest"),
        "mappings": fields.DictOfListOfStringsField(default={}),
    }

    obj_relationships = {"allocation_request": [("1.0", "1.0")]}
