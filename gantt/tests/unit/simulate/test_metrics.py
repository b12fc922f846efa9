"""Utilisation and stranded capacity on a hand-built fleet."""

import numpy as np

from gantt.simulate import metrics
from gantt.simulate import workload

CAPACITY = np.array([[4, 100, 10]] * 3, dtype=float)
#: the smallest flavor asks 1 VCPU, 10 MB, 5 GB
LEAST = np.array([1.0, 10.0, 5.0])
USED = np.array([[4, 20, 0],      # no VCPU left: its RAM and disk stranded
                 [1, 95, 2],      # 5 MB left < 10: its VCPU, disk stranded
                 [0, 0, 0]],      # empty: nothing stranded
                dtype=float)


def test_stranded_is_free_room_on_hosts_full_in_another_class():
    assert metrics.full(USED, CAPACITY, LEAST).tolist() == [
        [True, False, False], [False, True, False], [False, False, False]]
    assert np.allclose(metrics.stranded(USED, CAPACITY, LEAST),
                       [3 / 12, 80 / 300, (10 + 8) / 30])
    assert np.allclose(metrics.utilisation(USED, CAPACITY),
                       [5 / 12, 115 / 300, 2 / 30])


def test_a_host_full_in_one_class_strands_nothing_of_that_class():
    used = np.array([[4, 100, 0]], dtype=float)     # full in VCPU and RAM
    lost = metrics.stranded(used, CAPACITY[:1], LEAST)
    # VCPU and RAM have nothing free; the disk is stranded by both
    assert np.allclose(lost, [0, 0, 1.0])


def test_a_class_no_flavor_asks_for_never_makes_a_host_full():
    least = metrics.smallest([workload.Flavor("bfv", 1, 10, 0)])
    assert least.tolist() == [1.0, 10.0, 0.0]
    used = np.array([[1, 10, 10]], dtype=float)     # disk used up
    assert not metrics.full(used, CAPACITY[:1], least).any()
    assert np.allclose(metrics.stranded(used, CAPACITY[:1], least), 0)


def test_shape_fill_and_steady_means():
    fill = metrics.shape_fill(USED, CAPACITY, {"a": [0, 1], "b": [2]})
    assert np.allclose(fill["a"], [5 / 8, 115 / 200, 2 / 20])
    assert np.allclose(fill["b"], 0)
    samples = [metrics.sample(t, n, USED * k, CAPACITY, LEAST)
               for t, n, k in ((0, 0, 0.0), (5, 10, 0.5), (10, 20, 1.0))]
    steady = metrics.steady(samples, start=5)
    assert steady.alive == 15
    assert np.allclose(steady.utilisation, np.mean(
        [metrics.utilisation(USED * k, CAPACITY) for k in (0.5, 1.0)],
        axis=0))
