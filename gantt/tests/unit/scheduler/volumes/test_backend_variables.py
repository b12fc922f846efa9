"""What a backend function reads: each variable of Cinder's five families,
as reported, derived or defaulted, the same on both paths (one host, and
the rows of a view)."""

import pytest

from gantt.scheduler.pipeline import backend_functions
from gantt.scheduler.pipeline import expressions
from gantt.tests.unit.scheduler.volumes.builders import Pool
from gantt.tests.unit.scheduler.volumes.builders import view
from gantt.tests.unit.scheduler.volumes.builders import volume

FULL = {"free_capacity_gb": 500, "vendor_name": "Acme", "driver_version": 2,
        "QoS_support": True, "volume_backend_name": "lvm", "iops": 1000,
        "thin_provisioning_support": True}


def _outcomes(pool, text, request):
    """The goodness function ``text`` of ``pool`` evaluated on both
    paths; the one path's outcomes."""
    pool.caps = dict(pool.caps, goodness_function=text)
    shown = view(pool)
    one = backend_functions.run(shown.record(0), request,
                                backend_functions.GOODNESS)
    rows = backend_functions.run_rows(shown, request,
                                      backend_functions.GOODNESS, [0])
    assert [str(v) for v in rows[0]] == [str(v) for v in one]
    return one


def _value(pool, text, request=None):
    [(reported, value)] = _outcomes(pool, text, request or volume(50))
    assert reported
    return value


def _reported():
    return Pool("p1", total=1000, reserved=100, used=300, ratio=20.0,
                caps=dict(FULL))


@pytest.mark.parametrize("text", [
    "stats.host == 'p1'", "stats.volume_backend_name == lvm",
    "stats.vendor_name == Acme", "stats.driver_version == 2",
    "stats.QoS_support == 1", "stats.total_capacity_gb == 1000",
    "stats.free_capacity_gb == 500", "stats.allocated_capacity_gb == 300",
    "stats.reserved_percentage == 10",
    "capabilities.total_capacity_gb == 1000",
    "capabilities.free_capacity_gb == 500",
    "capabilities.allocated_capacity_gb == 300",
    "capabilities.reserved_percentage == 10",
    "capabilities.provisioned_capacity_gb == 300",
    "capabilities.max_over_subscription_ratio == 20",
    "capabilities.thin_provisioning_support == 1",
    "capabilities.iops == 1000", "capabilities.vendor_name == Acme",
    "extra.tier == gold", "volume.size == 50",
    "volume.project_id == tenant", "volume.availability_zone == 'az9'",
])
def test_every_variable_of_a_reporting_backend(text):
    request = volume(50, {"tier": "gold"}, project_id="tenant",
                     availability_zone="az9")
    assert _value(_reported(), text, request) is True


@pytest.mark.parametrize("text", [
    "stats.driver_version == 0", "stats.QoS_support == 0",
    "capabilities.thin_provisioning_support == 0",
    "stats.free_capacity_gb == 1000", "stats.vendor_name == 0",
])
def test_defaults_of_a_backend_that_reports_nothing(text):
    """Not reported: driver version 0, no QoS, thick, free what the
    allocations leave; an unreported name reads as nothing, which is no
    number."""
    pool = Pool("bare", total=1000)
    if text == "stats.vendor_name == 0":
        [(reported, error)] = _outcomes(pool, text, volume(50))
        assert reported and isinstance(error, expressions.ExpressionError)
    else:
        assert _value(pool, text) is True


@pytest.mark.parametrize("text", ["stats.updated", "qos.anything",
                                  "stats.nope"])
def test_variables_without_a_number_fail_the_function(text):
    [(reported, error)] = _outcomes(_reported(), text, volume(50))
    assert reported and isinstance(error, expressions.ExpressionError)


def test_a_special_total_reads_as_its_word():
    pool = Pool("inf", total=1000, caps={"total_capacity_gb": "infinite",
                                         "free_capacity_gb": "unknown"})
    assert _value(pool, "stats.total_capacity_gb == infinite") is True
    assert _value(pool, "capabilities.free_capacity_gb == unknown") is True


def test_a_backend_without_functions_reports_none():
    shown = view(Pool("plain", total=10))
    assert backend_functions.run(shown.record(0), volume(1),
                                 backend_functions.FILTER) == [(False, None)]
    assert backend_functions.run_rows(shown, volume(1),
                                      backend_functions.FILTER, [0]) == {
        0: [(False, None)]}
    assert not backend_functions.reporting_rows(
        shown, backend_functions.FILTER).any()


def test_the_protocol_spellings_keep_the_other_capabilities():
    pool = _reported()
    pool.caps["storage_protocol"] = "iSCSI"
    outcomes = _outcomes(pool, "stats.storage_protocol == 'iscsi' and "
                               "capabilities.iops == 1000", volume(50))
    assert [value for _reported, value in outcomes] == [False, True]


def test_a_function_not_reading_the_protocol_is_evaluated_once():
    pool = _reported()
    pool.caps["storage_protocol"] = "iSCSI"
    assert _outcomes(pool, "capabilities.iops / 10", volume(50)) == [
        (True, 100.0)]
