"""GoodnessWeigher: the backend's own goodness_function, as in Cinder.

A backend may report a ``goodness_function`` rating how good a choice it
is for a request, 0 (poor) to 100 (perfect), evaluated safely over the
backend's and the request's variables
(:mod:`gantt.scheduler.pipeline.backend_functions`). As in Cinder
(``cinder/scheduler/weights/goodness.py``): no function weighs 0; true is
100 and false 0; a result outside [0, 100], or a function that cannot be
parsed, is refused or fails weighs 0. A result that is not a number (a
string, NaN) weighs 0 too (Cinder fails the request or weighs NaN).
"""

import math

import numpy as np

from gantt.scheduler.pipeline import backend_functions as functions
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline.weighers import volume_capacity


def rating(outcomes):
    """The goodness of ``functions.run``'s outcomes: the best of them (one
    per storage protocol spelling, as Cinder)."""
    return max(map(_rating, outcomes))


def _rating(outcome):
    reported, value = outcome
    if not reported or isinstance(value, expressions.ExpressionError):
        return 0.0
    if isinstance(value, bool):
        return 100.0 if value else 0.0
    if not isinstance(value, (int, float)) or math.isnan(value):
        return 0.0
    return float(value) if 0 <= value <= 100 else 0.0


class Rating:
    """GoodnessWeigher's reading of outcomes over columns (see
    :func:`.backend_columns.judged`)."""

    dtype = float

    @staticmethod
    def column(kind, array):
        if kind == "b":
            return np.where(array, 100.0, 0.0)
        if kind == "s":
            return np.zeros(len(array))
        values = array.astype(float)
        with np.errstate(invalid="ignore"):
            return np.where((values >= 0) & (values <= 100), values, 0.0)

    @staticmethod
    def scalar(value):
        return _rating((True, value))


class GoodnessWeigher(volume_capacity.VolumeWeigher):
    name = "GoodnessWeigher"
    multiplier_option = "goodness_weight_multiplier"

    def weigh_host(self, host, request):
        return rating(functions.run(host, request, functions.GOODNESS))

    def weigh_columns(self, view, request, rows):
        out = np.zeros(view.n)
        wanted = None
        if not isinstance(rows, slice):
            wanted = np.zeros(view.n, dtype=bool)
            wanted[rows] = True
        # only the backends with a function; one evaluation per text
        found, ratings = functions.best(view, request, functions.GOODNESS,
                                        wanted, Rating)
        out[found] = ratings
        return out[rows]
