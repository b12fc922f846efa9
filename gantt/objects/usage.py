"""ProviderUsage: a worker tells its peers what a claim changed."""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class ProviderUsage(base.GanttObject):
    """Total usage of one provider after a claim or release committed."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "resource_provider_uuid": fields.UUIDField(),
        "generation": fields.IntegerField(),
        "usages": fields.DictOfIntegersField(),
    }
