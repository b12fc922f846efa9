"""Resource providers beyond the compute root, and what a report yields.

A compute node is the root of a provider tree: its children (NUMA cells,
SR-IOV physical functions, GPUs, FPGAs) travel inside its ``ComputeNode``
report as ``ResourceProvider`` objects. Providers that belong to no compute
node, such as a storage pool shared by every host of an aggregate, are
reported on their own by the service that owns them (``ProviderReport``).
"""

import re

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields

# AllocationCandidate embeds AllocationRequest by name
from gantt.objects import selection  # noqa: F401

#: a provider kind: a lower-case identifier of 1 to 32 characters
KIND_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")
#: the kind of every compute node (a ComputeNode report), which no
#: standalone provider may claim
COMPUTE = "compute"


def kind_error(kind):
    """Why ``kind`` is no standalone provider's kind, or None.

    The set is open: any short lower-case identifier but ``compute``
    ("volume", "network", "container" are the ones Gantt's own profiles
    and docs use), so that a new service needs no Gantt release.
    """
    if type(kind) is not str or not KIND_PATTERN.match(kind):
        return ("must be a lower-case identifier of 1 to 32 characters "
                "(a-z first, then a-z, 0-9, '_' or '-'), got %r" % (kind,))
    if kind == COMPUTE:
        return ("cannot be %r: compute nodes report as ComputeNode "
                "(update_resource_stats)" % COMPUTE)
    return None


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
    # Version 1.2: Added kind, service, availability_zone, capabilities,
    #              instance_uuid
    # Version 1.3: Added location
    VERSION = "1.3"

    #: the kind of a provider whose service does not say (a report older
    #: than 1.2): the sharing storage pools and address pools those carry
    DEFAULT_KIND = "pool"
    #: what a 1.2 report adds; a 1.1 primitive has none of them
    KIND_FIELDS = ("kind", "service", "availability_zone", "capabilities",
                   "instance_uuid")

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
        # what the provider is, a short lower-case identifier: "volume",
        # "network", "container" or any other but "compute" (compute
        # nodes report as ComputeNode); requests consider only the kinds
        # they ask for (see doc/source/admin/providers.rst)
        "kind": fields.StringField(default=DEFAULT_KIND),
        # the service that owns it, as operators name it
        # ("cinder-volume@lvm"); None: the report does not say
        "service": fields.StringField(nullable=True, default=None),
        "availability_zone": fields.StringField(nullable=True, default=None),
        # typed values filters match, as Cinder backends report them
        # ({"thin_provisioning_support": True, "total_capacity_gb": 1000.5})
        "capabilities": fields.DictOfCapabilitiesField(default={}),
        # a container host: the Nova instance it runs in
        "instance_uuid": fields.UUIDField(nullable=True, default=None),
        # where the provider is in the datacenter, as ComputeNode.location
        "location": fields.StringField(nullable=True, default=None),
    }

    obj_relationships = {"provider": [("1.0", "1.0")]}

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)

    def says_more_than_1_1(self):
        """Whether any 1.2 field holds more than its default: then a
        worker reading only 1.1 would store another provider than this
        one (the client refuses to send it under a lower cap)."""
        return any(self.obj_attr_is_set(name) and getattr(self, name)
                   != self.fields[name].default
                   for name in self.KIND_FIELDS)

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 3):
            primitive.pop("location", None)
        if target < (1, 2):
            # a 1.1 worker stores a provider of the default kind, with no
            # service, zone, capabilities nor instance link; the client
            # sends one only when nothing else was said
            # (says_more_than_1_1)
            for name in self.KIND_FIELDS:
                primitive.pop(name, None)
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
