"""ComputeFilter: enabled hosts that reported within service_down_time."""

import numpy as np
import pytest

from gantt.scheduler.pipeline.filters import compute_status
from gantt.tests.unit.scheduler import helpers


@pytest.mark.parametrize("disabled, age, expected", [
    (False, 0, True),
    (False, 59, True),
    (False, helpers.SERVICE_DOWN_TIME, True),       # the boundary is "up"
    (False, helpers.SERVICE_DOWN_TIME + 1, False),
    (True, 0, False),
    (True, 3600, False),
])
def test_compute_filter(conf, disabled, age, expected):
    view = helpers.make_view(helpers.node("h1", disabled=disabled),
                             ages={"h1": age})
    helpers.assert_both_paths(compute_status.ComputeFilter(conf), view,
                              helpers.make_request(), [expected])


def test_compute_filter_mixed_rows(conf):
    view = helpers.make_view(
        helpers.node("up"), helpers.node("down"),
        helpers.node("disabled", disabled=True), helpers.node("up2"),
        ages={"down": 600})
    helpers.assert_both_paths(compute_status.ComputeFilter(conf), view,
                              helpers.make_request(),
                              [True, False, False, True])


def test_explain_splits_down_from_disabled(conf):
    view = helpers.make_view(
        helpers.node("up"), helpers.node("down"),
        helpers.node("down-and-disabled", disabled=True),
        helpers.node("disabled", disabled=True),
        ages={"down": 600, "down-and-disabled": 600})
    flt = compute_status.ComputeFilter(conf)
    removed = ~flt.passes_columns(view, helpers.make_request())
    assert list(removed) == [False, True, True, True]
    assert flt.explain(view, helpers.make_request(), removed) == {
        "were down (no report within service_down_time)": 2,
        "were disabled": 1}


def test_explain_counts_only_removed_rows(conf):
    view = helpers.make_view(helpers.node("down"), helpers.node("down2"),
                             ages={"down": 600, "down2": 600})
    flt = compute_status.ComputeFilter(conf)
    removed = np.array([True, False])
    assert flt.explain(view, helpers.make_request(), removed)[
        "were down (no report within service_down_time)"] == 1
