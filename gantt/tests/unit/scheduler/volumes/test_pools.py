"""A pool's numbers in Cinder's terms, read from Gantt's state: the
columns (every row) and one host give the same values, including where
the backend reports nothing or ``infinite``."""

import numpy as np
import pytest

from gantt.scheduler.pipeline import pools
from gantt.tests.unit.scheduler.volumes.builders import Pool
from gantt.tests.unit.scheduler.volumes.builders import view


def _both(*reported):
    """``(columns, [of_host per row])`` over pools built in that order."""
    shown = view(*reported)
    return (pools.columns(shown),
            [pools.of_host(shown.record(r)) for r in range(shown.n)])


def _field(both, name):
    columns, hosts = both
    by_columns = np.asarray(getattr(columns, name), dtype=float).tolist()
    by_host = [float(getattr(h, name)) for h in hosts]
    assert by_columns == pytest.approx(by_host, nan_ok=True)
    return by_columns


def test_free_not_reported_is_what_allocations_leave():
    both = _both(Pool("quiet", total=1000, used=300),
                 Pool("says", total=1000, used=300,
                      caps={"free_capacity_gb": 90}))
    assert _field(both, "free") == [700.0, 90.0]


def test_the_reserved_percentage_is_derived_from_the_inventory():
    """Not reported: ``100 * reserved / total``; a pool of no size has
    none (not NaN); a reported percentage wins."""
    both = _both(Pool("tenth", total=1000, reserved=100),
                 Pool("one", total=1, reserved=1),
                 Pool("empty", total=0),
                 Pool("says", total=1000, reserved=100,
                      caps={"reserved_percentage": 5}))
    assert _field(both, "reserved_percent") == [10.0, 100.0, 0.0, 5.0]


@pytest.mark.parametrize("value", ["infinite", "unknown"])
def test_special_free_counts_as_zero_and_is_flagged(value):
    both = _both(Pool("special", total=1000, caps={"free_capacity_gb": value}),
                 Pool("plain", total=1000, caps={"free_capacity_gb": 40}))
    assert _field(both, "free") == [0.0, 40.0]
    assert _field(both, "free_special") == [1.0, 0.0]


def test_virtual_free_is_rounded_to_two_decimals_as_cinder_does():
    shown = view(Pool("odd", total=10, ratio=1.3333,
                      caps={"thin_provisioning_support": True}))
    weights = pools.free_weights(pools.columns(shown), True, 1.0)
    assert weights.tolist() == [13.33]
