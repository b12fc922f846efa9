"""The scheduler's weighing: every row at once, and the columns it keeps.

``WeigherRunner.weigh`` adds each weigher's part with fewer passes than
``run`` (which explain uses); these tests hold the two to the same totals
and check that what it keeps between requests (aggregate multipliers,
evaluated capabilities and stats, extremes) follows every change.
"""

import numpy as np

from gantt.conf import filter_scheduler
from gantt.objects import aggregate as aggregate_obj
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import aggregates
from gantt.scheduler.state import update as update_mod
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.scheduler import helpers

HPC = "a0a0a0a0-0000-4000-8000-0000000000f1"


def _runner(conf, vectorised=True):
    return weighers.WeigherRunner(plugins.load(
        plugins.WEIGHERS, list(filter_scheduler.DEFAULT_WEIGHERS), conf),
        vectorised=vectorised)


def _weigher(conf, name):
    return next(w for w in _runner(conf).weighers if w.name == name)


def _fleet(count=30, version_base=0):
    nodes = [helpers.node(
        "h%02d" % i, vcpus=8 + i % 5 * 8, memory_mb=4096 * (1 + i % 7),
        disk_gb=100 * (1 + i % 3), num_io_ops=i % 4,
        capabilities={"hypervisor_version": str(version_base + i % 3)})
        for i in range(count)]
    usages = {n.host: {"MEMORY_MB": 512 * (i % 5), "VCPU": i % 3}
              for i, n in enumerate(nodes)}
    cache = helpers.make_cache(*nodes, usages=usages)
    cache.apply_aggregates(aggregates.AggregateSet([aggregate_obj.Aggregate(
        uuid=HPC, name="hpc", hosts=["h%02d" % i for i in range(0, count, 4)],
        metadata={"ram_weight_multiplier": "3.0",
                  "cpu_weight_multiplier": "0"})]))
    return cache


def _reports_again(cache, name, **fields):
    """``name`` reports again, with ``fields`` changed."""
    cache.apply_report(update_mod.HostUpdate.from_compute_node(
        helpers.node(name, vcpus=16, memory_mb=8192, disk_gb=200, **fields),
        received_at=helpers.NOW))


def _view(cache):
    return cache.view(helpers.SERVICE_DOWN_TIME)


def _check_same_totals(conf, view, mask):
    request = helpers.make_request()
    rows = np.flatnonzero(mask)
    expected, _parts = _runner(conf, vectorised=False).run(view, request,
                                                          rows)
    weighing = _runner(conf).weigh(view, request, mask)
    assert weighing.full is not None        # every row weighed at once
    assert list(weighing.rows) == list(rows)
    assert np.allclose(weighing.totals, expected, rtol=0, atol=1e-9)
    return weighing, expected


def test_every_row_weighed_at_once_gives_the_per_host_totals():
    conf = gantt_fixtures.make_conf()
    view = helpers.view_of(_fleet())
    mask = np.ones(view.n, dtype=bool)
    mask[[3, 7]] = False
    weighing, expected = _check_same_totals(conf, view, mask)
    # the best host of both ways is the same host
    assert weighing.rows[np.argmax(weighing.totals)] == np.flatnonzero(
        mask)[np.argmax(expected)]
    assert weighing.full[3] == weighing.full[7] == -np.inf


def test_values_far_from_zero_keep_their_differences():
    # hypervisor versions around 1e15 that differ by 1 and 2: adding
    # ``a * raw`` and subtracting ``a * low`` would lose them
    conf = gantt_fixtures.make_conf()
    view = helpers.view_of(_fleet(version_base=10 ** 15))
    _check_same_totals(conf, view, np.ones(view.n, dtype=bool))


def test_an_aggregate_multiplier_follows_membership_changes():
    conf = gantt_fixtures.make_conf()
    cache = _fleet()
    ram = _weigher(conf, "RAMWeigher")
    before = ram.multiplier(helpers.view_of(cache), weighers.ALL)
    assert before[0] == 3.0 and before[1] == 1.0
    # h01 now reports itself in the hpc aggregate
    _reports_again(cache, "h01", aggregates=[HPC])
    after = ram.multiplier(helpers.view_of(cache), weighers.ALL)
    assert after[1] == 3.0
    assert not after.flags.writeable
    view = helpers.view_of(cache)
    _check_same_totals(conf, view, np.ones(view.n, dtype=bool))


def test_an_evaluated_capability_follows_reports():
    conf = gantt_fixtures.make_conf()
    cache = _fleet()
    version = _weigher(conf, "HypervisorVersionWeigher")
    request = helpers.make_request()
    first = version.weigh_columns(helpers.view_of(cache), request,
                                  weighers.ALL)
    # a report that repeats what the host said keeps the column
    _reports_again(cache, "h05", capabilities={"hypervisor_version": "2"})
    assert version.weigh_columns(helpers.view_of(cache), request,
                                 weighers.ALL) is first
    # one that changes it is seen at once
    _reports_again(cache, "h05", capabilities={"hypervisor_version": "7"})
    view = helpers.view_of(cache)
    second = version.weigh_columns(view, request, weighers.ALL)
    assert second[5] == 7.0 and first[5] == 2.0
    # and the weighing's kept extremes follow it: h05 is now the newest
    # (stale kept extremes would normalise it differently)
    _check_same_totals(conf, view, np.ones(view.n, dtype=bool))


def test_claims_in_flight_count_only_while_marked():
    cache = _fleet(count=4)
    col = cache.table.resource_classes.get("MEMORY_MB")
    free = _view(cache).free(col).copy()
    with cache.reserved(helpers.node("h02").uuid, {"MEMORY_MB": 1000}):
        assert _view(cache).free(col)[2] == free[2] - 1000
    assert cache.table.marks == 0
    assert list(_view(cache).free(col)) == list(free)


def test_one_runner_follows_a_changed_capability():
    # the runner keeps a shared column's extremes between requests: the
    # column that a changed report makes is a new one, weighed afresh
    conf = gantt_fixtures.make_conf()
    cache = _fleet()
    runner = _runner(conf)
    request = helpers.make_request()
    mask = np.ones(_view(cache).n, dtype=bool)
    runner.weigh(_view(cache), request, mask)
    _reports_again(cache, "h05", capabilities={"hypervisor_version": "7"})
    view = _view(cache)
    expected, _parts = _runner(conf, vectorised=False).run(
        view, request, np.flatnonzero(mask))
    assert np.allclose(runner.weigh(view, request, mask).totals, expected,
                       rtol=0, atol=1e-9)
