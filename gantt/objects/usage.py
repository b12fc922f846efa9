"""ProviderUsage: a worker tells its peers what a claim changed."""

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class ProviderUsage(base.GanttObject):
    """Total usage of one provider after a claim or release committed."""

    # Version 1.0: Initial version
    # Version 1.1: Added changed_at
    VERSION = "1.1"

    fields = {
        "resource_provider_uuid": fields.UUIDField(),
        "generation": fields.IntegerField(),
        "usages": fields.DictOfIntegersField(),
        # when the change committed (epoch seconds, sender's clock): lets
        # receivers measure how stale their cache was
        "changed_at": fields.FloatField(nullable=True, default=None),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            primitive.pop("changed_at", None)
