"""The volume weighers: raw values, Cinder's infinite stand-in, order."""

import numpy as np
import pytest

from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline.weighers import goodness
from gantt.scheduler.pipeline.weighers import runner
from gantt.scheduler.pipeline.weighers import volume_capacity
from gantt.scheduler.pipeline.weighers import volume_number
from gantt.tests.fixtures import make_conf
from gantt.tests.unit.scheduler.volumes.builders import Pool
from gantt.tests.unit.scheduler.volumes.builders import view
from gantt.tests.unit.scheduler.volumes.builders import volume

THIN = {"thin_provisioning_support": True, "free_capacity_gb": 10}
ALL = slice(None)


def raw(weigher, pools, request):
    """(weigh_columns over every row, weigh_host per row)."""
    columns = weigher.weigh_columns(pools, request, ALL)
    hosts = [weigher.weigh_host(pools.record(r), request)
             for r in range(pools.n)]
    return (None if columns is None else list(columns)), hosts


def test_capacity_weighs_virtual_free_thin_or_thick():
    weigher = volume_capacity.CapacityWeigher(make_conf())
    pools = view(
        # thin: (1000 - 100) * 2.0 - 300 = 1500
        Pool("thin", total=1000, reserved=100, ratio=2.0, used=300,
             caps=THIN),
        # thick: min(free 10, 1000 - 100 - 300)
        Pool("thick", total=1000, reserved=100, ratio=2.0, used=300,
             caps={"free_capacity_gb": 10}),
    )
    assert raw(weigher, pools, volume(1)) == ([1500.0, 10.0], [1500.0, 10.0])
    thick = volume(1, {"provisioning:type": "thick"})
    assert raw(weigher, pools, thick) == ([10.0, 10.0], [10.0, 10.0])


def _order(weighers, pools, request, vectorised=True):
    mask = np.ones(pools.n, dtype=bool)
    totals, parts = runner.WeigherRunner(weighers, vectorised).run(
        pools, request, np.arange(pools.n), mask)
    return list(totals), {k: list(v) for k, v in parts.items()}


def test_an_unknown_pool_weighs_last_under_either_multiplier():
    pools = view(Pool("a", total=100, caps={"free_capacity_gb": 10}),
                 Pool("b", total=100, caps={"free_capacity_gb": 30}),
                 Pool("u", total=100, caps={"free_capacity_gb": "unknown"}))
    spread = volume_capacity.CapacityWeigher(make_conf())
    totals, _ = _order([spread], pools, volume(1))
    # -1 is the low end: (10 + 1) / 31, 1, 0
    assert totals == pytest.approx([11 / 31, 1.0, 0.0])
    stack = volume_capacity.CapacityWeigher(make_conf(**{
        "volume_scheduler.capacity_weight_multiplier": -1.0}))
    totals, _ = _order([stack], pools, volume(1))
    # Cinder's stand-in: 30 + (30 - 10) * 100 = 2030
    assert totals == pytest.approx([0.0, -20 / 2020, -1.0])
    # host by host: the largest float keeps the order
    slow, _ = _order([stack], pools, volume(1), vectorised=False)
    assert np.argsort(slow).tolist() == np.argsort(totals).tolist()



def test_the_infinite_stand_in_when_the_finite_pools_tie():
    stack = volume_capacity.CapacityWeigher(make_conf(**{
        "volume_scheduler.capacity_weight_multiplier": -1.0}))
    pools = view(Pool("a", total=100, caps={"free_capacity_gb": 10}),
                 Pool("b", total=100, caps={"free_capacity_gb": 10}),
                 Pool("u", total=100, caps={"free_capacity_gb": "unknown"}))
    rows = np.arange(pools.n)
    # no spread to scale by: Cinder puts the stand-in 10000 above
    assert list(stack.weigh_columns(pools, volume(1), rows)) == [
        10.0, 10.0, 10010.0]
    # every candidate infinite: each weighs 0
    unknown = view(*[Pool(n, total=100, caps={"free_capacity_gb": "unknown"})
                     for n in ("u0", "u1")])
    assert list(stack.weigh_columns(unknown, volume(1), rows[:2])) == [
        0.0, 0.0]

def test_allocated_capacity_and_volume_number_prefer_the_emptiest():
    pools = view(Pool("a", used=300, volumes=7),
                 Pool("b", used=100, volumes=9),
                 Pool("c", used=200, volumes=1))
    conf = make_conf()
    allocated = volume_capacity.AllocatedCapacityWeigher(conf)
    number = volume_number.VolumeNumberWeigher(conf)
    assert raw(allocated, pools, volume(1)) == ([300.0, 100.0, 200.0],
                                                [300.0, 100.0, 200.0])
    totals, parts = _order([allocated, number], pools, volume(1))
    assert parts["AllocatedCapacityWeigher"] == pytest.approx(
        [-1.0, 0.0, -0.5])
    assert parts["VolumeNumberWeigher"] == pytest.approx([-0.75, -1.0, 0.0])
    assert int(np.argmax(totals)) == 2


def test_goodness_functions_rate_backends_0_to_100():
    pools = view(
        Pool("none", caps={}),
        Pool("half", caps={"goodness_function": "50"}),
        Pool("small", caps={"goodness_function": "volume.size < 10"}),
        Pool("too good", caps={"goodness_function": "101"}),
        Pool("broken", caps={"goodness_function": "1 / 0"}),
        Pool("hostile", caps={"goodness_function": "'x' * 99999999"}),
        Pool("by room", total=200, used=50, caps={
            "goodness_function":
                "(stats.total_capacity_gb - stats.allocated_capacity_gb)"
                " / stats.total_capacity_gb * 100"}),
    )
    weigher = goodness.GoodnessWeigher(make_conf())
    expected = [0.0, 50.0, 100.0, 0.0, 0.0, 0.0, 75.0]
    assert raw(weigher, pools, volume(5)) == (expected, expected)
    # the candidates only (the sparse path)
    assert list(weigher.weigh_columns(pools, volume(5), np.array([2, 6]))) \
        == [100.0, 75.0]
    expected[2] = 0.0
    assert raw(weigher, pools, volume(10)) == (expected, expected)



def test_goodness_keeps_0_to_100_and_rates_the_rest_0():
    functions = ["0.5", "100", "'good'", "-1", "100.5"]
    pools = view(*[Pool("p%d" % i, caps={"goodness_function": f})
                   for i, f in enumerate(functions)])
    weigher = goodness.GoodnessWeigher(make_conf())
    expected = [0.5, 100.0, 0.0, 0.0, 0.0]
    assert raw(weigher, pools, volume(5)) == (expected, expected)

def test_goodness_takes_the_best_protocol_spelling():
    text = "capabilities.storage_protocol == 'fc' ? 80 : 20"
    pools = view(Pool("fc", caps={"storage_protocol": "FC",
                                  "goodness_function": text}),
                 Pool("rbd", caps={"storage_protocol": "RBD",
                                   "goodness_function": text}))
    weigher = goodness.GoodnessWeigher(make_conf())
    assert raw(weigher, pools, volume(1)) == ([80.0, 20.0], [80.0, 20.0])


def test_the_volume_plugins_load_by_name():
    conf = make_conf()
    names = ["CapacityWeigher", "AllocatedCapacityWeigher",
             "VolumeNumberWeigher", "GoodnessWeigher"]
    loaded = plugins.load(plugins.WEIGHERS, names, conf)
    assert [w.name for w in loaded] == names
    assert all(w.provider_kinds == frozenset({"volume"}) for w in loaded)
    filters = plugins.load(plugins.FILTERS, [
        "CapacityFilter", "CapabilitiesFilter", "DriverFilter"], conf)
    assert [f.name for f in filters] == [
        "CapacityFilter", "CapabilitiesFilter", "DriverFilter"]
