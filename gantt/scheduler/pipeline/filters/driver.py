"""DriverFilter: the backend's own filter_function decides, as in Cinder.

A backend that reports no ``filter_function`` passes. One that does
passes when the function, evaluated safely over the backend's and the
request's variables (:mod:`gantt.scheduler.pipeline.backend_functions`),
is true; a function that cannot be parsed, is refused as hostile, or fails
to evaluate fails the backend (Cinder logs it and fails it too). A
function that reads ``storage_protocol`` is evaluated for each spelling of
the backend's protocol (``iSCSI``, ``iscsi``), and one true result passes.
"""

import numpy as np

from gantt.scheduler.pipeline import backend_functions as functions
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import filters


def _passes(outcome):
    reported, value = outcome
    if not reported:
        return True
    return not isinstance(value, expressions.ExpressionError) and bool(value)


def _verdict(outcomes):
    # one per storage protocol spelling: any passing one will do
    return any(map(_passes, outcomes))


class Verdict:
    """DriverFilter's reading of outcomes over columns (see
    :func:`.backend_columns.judged`): passes or not."""

    dtype = bool

    @staticmethod
    def column(kind, array):
        if kind == "s":
            return np.array([bool(v) for v in array], dtype=bool)
        return array if kind == "b" else array != 0

    @staticmethod
    def scalar(value):
        return _passes((True, value))


class DriverFilter(filters.BaseFilter):
    name = "DriverFilter"
    provider_kinds = frozenset({"volume"})

    def host_passes(self, host, request):
        return _verdict(functions.run(host, request, functions.FILTER))

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        # only the backends with a function; one evaluation per text
        rows, passes = functions.best(view, request, functions.FILTER, None,
                                      Verdict)
        mask[rows] = passes
        return mask
