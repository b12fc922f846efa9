"""SchedulerStatistics: counters a worker keeps, for operators."""

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class SchedulerStatistics(base.GanttObject):
    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "worker": fields.StringField(),
        "hosts": fields.IntegerField(),
        "requests": fields.IntegerField(),
        "placements": fields.IntegerField(),
        "no_valid_host": fields.IntegerField(),
        "claim_conflicts": fields.IntegerField(),
        "reports_applied": fields.IntegerField(),
        "reports_stale": fields.IntegerField(),
        "messages_rejected": fields.IntegerField(),
        # filter name -> hosts it removed, summed over requests
        "filter_eliminations": fields.DictOfIntegersField(),
    }
