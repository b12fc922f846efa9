"""Backend functions evaluated over many backends at once give, for
every backend, exactly what the one-backend path gives: random
functions over random pools, with divisions by zero, missing and None
variables, strings, booleans, huge and special numbers and every
storage protocol spelling."""

import dataclasses
import math
import random

import numpy as np
import pytest

from gantt.scheduler.pipeline import backend_functions
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import expressions_vec
from gantt.scheduler.pipeline.filters import driver
from gantt.scheduler.pipeline.weighers import goodness
from gantt.tests.fixtures import make_conf
from gantt.tests.unit.scheduler import helpers
from gantt.tests.unit.scheduler.volumes.builders import Pool
from gantt.tests.unit.scheduler.volumes.builders import node
from gantt.tests.unit.scheduler.volumes.builders import view
from gantt.tests.unit.scheduler.volumes.builders import volume

VARIABLES = ("stats.free_capacity_gb", "stats.total_capacity_gb",
             "stats.allocated_capacity_gb", "stats.reserved_percentage",
             "stats.vendor_name", "stats.storage_protocol",
             "stats.QoS_support", "stats.driver_version", "stats.updated",
             "stats.host", "capabilities.iops", "capabilities.weight",
             "capabilities.storage_protocol", "capabilities.missing",
             "capabilities.thin_provisioning_support",
             "capabilities.max_over_subscription_ratio",
             "capabilities.provisioned_capacity_gb", "capabilities.host",
             "capabilities.reserved_percentage", "stats.iops",
             "extra.tier", "extra.size", "volume.size", "qos.none",
             "nofamily.name")
CONSTANTS = ("0", "1", "2", "3", "10", "0.5", "2.5", "100", "'iscsi'",
             "'Acme'", "gold", "'10'", "True")
BINARY = ("+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!=", "<>",
          "and", "or", "&&", "||", "^")
VALUES = (0, 1, 7, -3, 2.5, 0.0, -0.0, 10.7, True, False, None, "Acme",
          "10", "1e3", "nan", "inf", "", 2 ** 60, 2 ** 70, 3 * 10 ** 15,
          "infinite", "unknown")
PROTOCOLS = ("iSCSI", "iscsi", "FC", "fc", "fibre_channel", "NFS",
             "NVMe-oF", "nvmeof", "RBD", None)


def _expression(rng, depth=0):
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return rng.choice(VARIABLES + CONSTANTS)
    if roll < 0.6:
        return "%s %s %s" % (_expression(rng, depth + 1), rng.choice(BINARY),
                             _expression(rng, depth + 1))
    if roll < 0.7:
        return "(%s ? %s : %s)" % tuple(_expression(rng, depth + 1)
                                        for _ in range(3))
    if roll < 0.8:
        return "%s(%s)" % (rng.choice(("abs", "max", "min", "max", "pow")),
                           ", ".join(_expression(rng, depth + 1) for _ in
                                     range(rng.choice((1, 2, 2, 3)))))
    if roll < 0.9:
        return "%s(%s)" % (rng.choice(("not ", "-", "+", "!")),
                           _expression(rng, depth + 1))
    return "(%s)" % _expression(rng, depth + 1)


def _pool(rng, index, text):
    caps = {"goodness_function": text, "free_capacity_gb":
            rng.choice(VALUES + (500, 1000)),
            "iops": rng.choice(VALUES), "weight": rng.choice(VALUES),
            "vendor_name": rng.choice(("Acme", "Other", None, 3)),
            "QoS_support": rng.choice((True, False, "True")),
            "storage_protocol": rng.choice(PROTOCOLS)}
    caps = {k: v for k, v in caps.items() if v is not None or k == "iops"}
    if rng.random() < 0.2:
        caps["total_capacity_gb"] = rng.choice(("infinite", "unknown"))
    for key in ("thin_provisioning_support", "reserved_percentage",
                "updated", "provisioned_capacity_gb", "host"):
        if rng.random() < 0.2:
            caps[key] = rng.choice(VALUES)
    if rng.random() < 0.3:
        caps["driver_version"] = rng.choice(VALUES)
    return Pool("p%d" % index, total=rng.choice((0, 100, 1000, 2048)),
                reserved=rng.choice((0, 10)), used=rng.choice((0, 50, 999)),
                ratio=rng.choice((1.0, 20.0)), caps=caps)


def _same(a, b):
    if isinstance(a, expressions.ExpressionError):
        return type(a) is type(b) and str(a) == str(b)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, float) and a == 0:
        return isinstance(b, float) and math.copysign(
            1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


def _check(texts, rng, request):
    shown = view(*(_pool(rng, i, rng.choice(texts)) for i in range(40)))
    rows = list(range(shown.n))
    together = backend_functions.run_rows(
        shown, request, backend_functions.GOODNESS, rows)
    for row in rows:
        alone = backend_functions.run(shown.record(row), request,
                                      backend_functions.GOODNESS)
        assert len(together[row]) == len(alone), texts
        for (r1, v1), (r2, v2) in zip(together[row], alone, strict=True):
            assert r1 == r2 and _same(v1, v2), (
                texts, row, v1, v2, shown.record(row).capabilities)


@pytest.mark.parametrize("seed", range(40))
def test_random_functions_give_the_per_backend_results(seed):
    rng = random.Random(seed)
    request = volume(rng.choice((0, 1, 50, 500)),
                     rng.choice(({}, {"tier": "gold"}, {"size": "5"})))
    for _ in range(5):
        texts = [_expression(rng) for _ in range(rng.choice((1, 1, 2, 3)))]
        _check(texts, rng, request)


@pytest.mark.parametrize("text", [
    "stats.free_capacity_gb / (stats.allocated_capacity_gb - 50)",
    "capabilities.iops * capabilities.weight * capabilities.weight",
    "max(capabilities.iops, capabilities.weight, 5)",
    "stats.storage_protocol == 'iscsi' ? 90 : stats.free_capacity_gb",
    "volume.size > 10 ? stats.free_capacity_gb > 100 : 1",
    "capabilities.iops < capabilities.weight < 1 / 0",
    "extra.tier == gold or capabilities.iops",
    "-2 ^ 2 + capabilities.iops",
])
def test_edge_functions_give_the_per_backend_results(text):
    rng = random.Random(text)
    for size in (0, 5, 50):
        _check([text], rng, volume(size, {"tier": "gold"}))


def test_the_columns_evaluate_a_shared_function_without_fallback():
    tree = expressions.parse(
        "stats.free_capacity_gb / stats.total_capacity_gb * 100")
    leaves = {"stats.free_capacity_gb": expressions_vec.column(
        "f", [50.0, 10.0, 0.0]), "stats.total_capacity_gb":
        expressions_vec.column("f", [100.0, 0.0, 0.0])}
    kind, array, unsure = expressions_vec.evaluate(tree, leaves, 3)
    assert kind == "f" and array[0] == 50.0
    assert list(unsure) == [False, True, True]


def _both(texts, rng, request):
    """DriverFilter's and GoodnessWeigher's column verdicts against their
    per-host ones, on pools reporting both functions."""
    pools = [_pool(rng, i, rng.choice(texts)) for i in range(40)]
    for pool in pools:
        pool.caps["filter_function"] = rng.choice(texts)
    shown = view(*pools)
    records = [shown.record(row) for row in range(shown.n)]
    flt = driver.DriverFilter(make_conf())
    assert flt.passes_columns(shown, request).tolist() == [
        flt.host_passes(record, request) for record in records], texts
    weigher = goodness.GoodnessWeigher(make_conf())
    columns = weigher.weigh_columns(shown, request, slice(None))
    assert columns.tolist() == [weigher.weigh_host(record, request)
                                for record in records], texts
    some = np.flatnonzero(np.arange(shown.n) % 3 == 0)
    assert weigher.weigh_columns(shown, request, some).tolist() == [
        columns[row] for row in some]


@pytest.mark.parametrize("seed", range(30))
def test_random_functions_give_the_per_backend_verdicts(seed):
    rng = random.Random(1000 + seed)
    request = volume(rng.choice((0, 1, 50, 500)),
                     rng.choice(({}, {"tier": "gold"}, {"size": "5"})))
    for _ in range(4):
        _both([_expression(rng) for _ in range(rng.choice((1, 2, 3)))],
              rng, request)


def test_verdicts_follow_usage_and_a_changed_report():
    """The variables read from capabilities are kept per version of the
    capability columns; usage is read again on every request, and a new
    report is seen at once."""
    text = ("stats.allocated_capacity_gb < 100 and "
            "capabilities.iops >= 1000")
    pool = Pool("p", total=1000, used=50,
                caps={"filter_function": text, "iops": 2000})
    flt = driver.DriverFilter(make_conf())
    cache = helpers.make_cache()
    update = dataclasses.replace(helpers.host_report(node(pool)),
                                 capabilities=dict(pool.caps))
    cache.apply_report(update)
    cache.apply_usage(update.uuid, 1, {"DISK_GB": 50})

    def passes():
        return flt.passes_columns(helpers.view_of(cache), volume(1))[0]

    assert passes()
    cache.apply_usage(update.uuid, 2, {"DISK_GB": 150})
    assert not passes()
    cache.apply_usage(update.uuid, 3, {"DISK_GB": 10})
    assert passes()
    cache.apply_report(dataclasses.replace(
        update, capabilities=dict(pool.caps, iops=500),
        report_sequence=update.report_sequence + 1))
    assert not passes()
