"""SchedulerStatistics: counters a worker keeps, for operators."""

from oslo_utils import versionutils

from gantt.objects import base
from gantt.objects import fields


@base.GanttObjectRegistry.register
class SchedulerStatistics(base.GanttObject):
    # Version 1.0: Initial version
    # Version 1.1: Added peer_lag_p50_ms, peer_lag_p99_ms, peer_updates,
    #              oldest_report_s, min_report_sequence
    # Version 1.2: Added rpc_api_version
    VERSION = "1.2"

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
        # how long other workers' claims took to reach this worker's cache
        # (over the last 10,000 updates received)
        "peer_updates": fields.IntegerField(default=0),
        "peer_lag_p50_ms": fields.FloatField(nullable=True, default=None),
        "peer_lag_p99_ms": fields.FloatField(nullable=True, default=None),
        # the least recently heard-of host: how long ago, and its sequence
        "oldest_report_s": fields.FloatField(nullable=True, default=None),
        "min_report_sequence": fields.IntegerField(nullable=True,
                                                   default=None),
        # the RPC API version this worker serves: during a rolling upgrade
        # it says which workers still run the old release
        "rpc_api_version": fields.StringField(nullable=True, default=None),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 2):
            primitive.pop("rpc_api_version", None)
        if target < (1, 1):
            for name in ("peer_updates", "peer_lag_p50_ms",
                         "peer_lag_p99_ms", "oldest_report_s",
                         "min_report_sequence"):
                primitive.pop(name, None)
