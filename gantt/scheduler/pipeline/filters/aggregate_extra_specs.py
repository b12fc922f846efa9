"""AggregateInstanceExtraSpecsFilter: flavor extra specs vs aggregates.

Every extra spec scoped ``aggregate_instance_extra_specs:KEY`` or not
scoped at all (no ``:``) must be matched by the metadata ``KEY`` of one of
the host's aggregates, with the expression syntax of
:mod:`~gantt.scheduler.pipeline.filters.extra_specs_ops` (values are
comma-split).
A host in no aggregate with ``KEY`` fails. Other scopes are ignored.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline.filters import extra_specs_ops
from gantt.scheduler.state import aggregates

SCOPE = "aggregate_instance_extra_specs"


def wanted(extra_specs):
    """``{metadata key: expression}`` this filter checks."""
    out = {}
    for key, expr in extra_specs.items():
        scope = key.split(":", 1)
        if len(scope) > 1:
            if scope[0] != SCOPE:
                continue
            key = scope[1]
        out[key] = expr
    return out


def _matches(raw_value, expr):
    return any(extra_specs_ops.match(v, expr)
               for v in aggregates.split(raw_value))


class AggregateInstanceExtraSpecsFilter(filters.BaseFilter):
    name = "AggregateInstanceExtraSpecsFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return bool(wanted(request.extra_specs))

    def host_passes(self, host, request):
        metadata = aggregates.metadata(host)
        for key, expr in wanted(request.extra_specs).items():
            values = metadata.get(key)
            if not values or not any(extra_specs_ops.match(v, expr)
                                     for v in values):
                return False
        return True

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for key, expr in wanted(request.extra_specs).items():
            mask &= aggregates.rows_where(
                view, key, lambda v, e=expr: _matches(v, e))
        return mask
