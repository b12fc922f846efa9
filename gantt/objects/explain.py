"""Explanation: why a request would land where it would, without a claim.

Returned by the ``explain`` call (RPC API 1.2) that ``gantt explain``
prints: which hosts each pre-filter and filter removed, and the best hosts
with each weigher's contribution to their weight.
"""

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class FilterStep(base.GanttObject):
    """The hosts one pre-filter or filter removed, for one reason."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        # "candidates" (request pre-filters) or "filters"
        "stage": fields.StringField(),
        # the filter's name (or the pre-filter's) and what the hosts lacked
        "name": fields.StringField(),
        "reason": fields.StringField(),
        "removed": fields.NonNegativeIntegerField(),
        # some of the removed hosts, sorted by name
        "hosts": fields.ListOfStringsField(default=[]),
    }


@base.GanttObjectRegistry.register
class WeighedHost(base.GanttObject):
    """One host that passed, with its weight split by weigher."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "host": fields.StringField(),
        "nodename": fields.StringField(),
        "uuid": fields.UUIDField(),
        "weight": fields.FloatField(),
        # weigher name -> multiplier x normalised raw value
        "weights": fields.DictOfFloatsField(default={}),
    }


@base.GanttObjectRegistry.register
class Explanation(base.GanttObject):
    # Version 1.0: Initial version
    # Version 1.1: Added profile and packing
    VERSION = "1.1"

    fields = {
        "considered": fields.NonNegativeIntegerField(),
        "passed": fields.NonNegativeIntegerField(),
        # the NoValidHost-style summary: "N of M hosts available: ..."
        "summary": fields.StringField(),
        "resources": fields.DictOfIntegersField(default={}),
        "filters": fields.ListOfStringsField(default=[]),
        "weighers": fields.ListOfStringsField(default=[]),
        "steps": fields.ListOfObjectsField("FilterStep", default=[]),
        "weighed": fields.ListOfObjectsField("WeighedHost", default=[]),
        # the scheduling profile that ranked the request, and the packing
        # policy its weighers followed (None: as configured)
        "profile": fields.StringField(default="default"),
        "packing": fields.StringField(nullable=True, default=None),
    }

    obj_relationships = {"steps": [("1.0", "1.0")],
                         "weighed": [("1.0", "1.0")]}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop("profile", None)
            primitive.pop("packing", None)
