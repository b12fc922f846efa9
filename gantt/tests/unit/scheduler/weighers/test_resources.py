"""RAM, CPU and disk weighers, normalisation and multipliers."""

import numpy as np
import pytest

from gantt.objects import compute_node
from gantt.scheduler import weighers
from gantt.scheduler.weighers import resources
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

WEIGHERS = [resources.RAMWeigher, resources.CPUWeigher,
            resources.DiskWeigher]


@pytest.mark.parametrize("values, expected", [
    ([], []),
    ([7], [0.0]),
    ([5, 5, 5], [0.0, 0.0, 0.0]),
    ([0, 5, 10], [0.0, 0.5, 1.0]),
    ([10, 0, 5], [1.0, 0.0, 0.5]),
    ([-4, 0, 4], [0.0, 0.5, 1.0]),
    ([1.5, 3.0], [0.0, 1.0]),
])
def test_normalize(values, expected):
    assert np.allclose(weighers.normalize(values), expected)
    assert weighers.normalize(values).shape == (len(expected),)


def _view():
    """Four hosts whose free RAM, VCPU and disk rank differently."""
    return helpers.make_view(
        helpers.node("big-ram", memory_mb=65536, vcpus=4, disk_gb=100),
        helpers.node("big-cpu", memory_mb=8192, vcpus=64, disk_gb=100),
        helpers.node("big-disk", memory_mb=8192, vcpus=4, disk_gb=4000,
                     reserved_memory_mb=4096),
        helpers.node("ratios", memory_mb=8192, vcpus=8, disk_gb=100,
                     ram_ratio=1.5, cpu_ratio=4.0),
        usages={"big-cpu": {"VCPU": 60, "MEMORY_MB": 1024}})


@pytest.mark.parametrize("weigher_class, expected", [
    # free = (total - reserved) * ratio - used
    (resources.RAMWeigher, [65536.0, 7168.0, 4096.0, 12288.0]),
    (resources.CPUWeigher, [4.0, 4.0, 4.0, 32.0]),
    (resources.DiskWeigher, [100.0, 100.0, 4000.0, 100.0]),
])
def test_both_paths_agree(conf, weigher_class, expected):
    view = _view()
    request = helpers.make_request()
    weigher = weigher_class(conf)
    rows = np.arange(view.n)
    columns = weigher.weigh_columns(view, request, rows)
    per_host = [weigher.weigh_host(view.record(r), request) for r in rows]
    assert list(columns) == expected
    assert per_host == expected


@pytest.mark.parametrize("weigher_class", WEIGHERS)
def test_both_paths_agree_on_a_subset_with_local_claims(conf, weigher_class):
    view = _view()
    view.consume(3, {"MEMORY_MB": 2048, "VCPU": 3, "DISK_GB": 50})
    request = helpers.make_request()
    weigher = weigher_class(conf)
    rows = np.array([3, 0])
    columns = weigher.weigh_columns(view, request, rows)
    per_host = [weigher.weigh_host(view.record(r), request) for r in rows]
    assert list(columns) == per_host
    assert per_host[0] == {
        "MEMORY_MB": 12288.0 - 2048, "VCPU": 32.0 - 3,
        "DISK_GB": 100.0 - 50}[weigher.resource_class]


def test_a_host_without_the_class_weighs_zero(conf):
    node = compute_node.ComputeNode(
        uuid=factories.host_uuid("cpu-only"), host="cpu-only",
        nodename="cpu-only", report_sequence=1,
        inventories=[compute_node.Inventory(resource_class="VCPU",
                                            total=8)])
    view = helpers.make_view(helpers.node("full"), node)
    weigher = resources.RAMWeigher(conf)
    rows = np.arange(view.n)
    columns = weigher.weigh_columns(view, helpers.make_request(), rows)
    per_host = [weigher.weigh_host(view.record(r), helpers.make_request())
                for r in rows]
    assert list(columns) == per_host == [65536.0, 0.0]


def _ranking(conf, view, rows=None):
    runner = weighers.WeigherRunner([cls(conf) for cls in WEIGHERS])
    rows = np.arange(view.n) if rows is None else rows
    totals, parts = runner.run(view, helpers.make_request(), rows)
    order = np.argsort(-totals, kind="stable")
    return [view.hosts[rows[i]] for i in order], totals, parts


def _fill_view():
    """Same hosts, different fill levels (free RAM 60, 30, 10 GB)."""
    return helpers.make_view(
        *[helpers.node(h, memory_mb=65536, vcpus=64, disk_gb=1000)
          for h in ("empty", "half", "full")],
        usages={"half": {"MEMORY_MB": 32768, "VCPU": 32, "DISK_GB": 500},
                "full": {"MEMORY_MB": 57344, "VCPU": 56, "DISK_GB": 900}})


@pytest.mark.parametrize("multiplier, order", [
    (1.0, ["empty", "half", "full"]),     # spread: the emptiest host wins
    (-1.0, ["full", "half", "empty"]),    # stack: the fullest host wins
])
def test_multiplier_sign_chooses_spread_or_stack(conf, multiplier, order):
    for option in ("ram_weight_multiplier", "cpu_weight_multiplier",
                   "disk_weight_multiplier"):
        conf.set_override(option, multiplier, "filter_scheduler")
    ranked, totals, _parts = _ranking(conf, _fill_view())
    assert ranked == order
    assert max(totals) == pytest.approx(
        max(0.0, 3 * multiplier))


def test_multipliers_scale_each_weigher(conf):
    conf.set_override("ram_weight_multiplier", 2.0, "filter_scheduler")
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", -1.0, "filter_scheduler")
    view = helpers.make_view(
        helpers.node("ram", memory_mb=65536, vcpus=4, disk_gb=1000),
        helpers.node("mid", memory_mb=32768, vcpus=64, disk_gb=500),
        helpers.node("disk", memory_mb=4096, vcpus=4, disk_gb=100))
    ranked, totals, parts = _ranking(conf, view)
    assert set(parts) == {"RAMWeigher", "CPUWeigher", "DiskWeigher"}
    assert list(parts["CPUWeigher"]) == [0.0, 0.0, 0.0]
    assert np.allclose(parts["DiskWeigher"], [-1.0, -4 / 9, 0.0])
    assert np.allclose(totals, parts["RAMWeigher"] + parts["DiskWeigher"])
    # RAM at 2x outweighs the disk penalty of the biggest host
    assert ranked == ["ram", "mid", "disk"]


def test_normalisation_is_over_the_rows_weighed(conf):
    view = _fill_view()
    ranked, totals, _parts = _ranking(conf, view, rows=np.array([1, 2]))
    assert ranked == ["half", "full"]
    assert list(totals) == [3.0, 0.0]


def test_local_claims_change_the_ranking(conf):
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")
    view = helpers.make_view(helpers.node("a", memory_mb=8192),
                             helpers.node("b", memory_mb=6144))
    assert _ranking(conf, view)[0] == ["a", "b"]
    view.consume(0, {"MEMORY_MB": 4096})
    assert _ranking(conf, view)[0] == ["b", "a"]
