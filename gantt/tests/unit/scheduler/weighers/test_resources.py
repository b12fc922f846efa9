"""RAM, CPU and disk weighers, normalisation and multipliers."""

import numpy as np
import pytest

from gantt.objects import compute_node
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.pipeline.weighers import host_counts
from gantt.scheduler.pipeline.weighers import normalize
from gantt.scheduler.pipeline.weighers import resources
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
    assert np.allclose(normalize.normalize(values), expected)
    assert normalize.normalize(values).shape == (len(expected),)


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


@pytest.mark.parametrize("weigher_class, capacity_aware, expected", [
    # Nova's free RAM and disk: total - reserved - used, no ratio
    (resources.RAMWeigher, False, [65536.0, 7168.0, 4096.0, 8192.0]),
    (resources.DiskWeigher, False, [100.0, 100.0, 4000.0, 100.0]),
    # Nova's free VCPUs: total * ratio - used
    (resources.CPUWeigher, False, [4.0, 4.0, 4.0, 32.0]),
    # free_capacity_weighing: (total - reserved) * ratio - used
    (resources.RAMWeigher, True, [65536.0, 7168.0, 4096.0, 12288.0]),
    (resources.CPUWeigher, True, [4.0, 4.0, 4.0, 32.0]),
    (resources.DiskWeigher, True, [100.0, 100.0, 4000.0, 100.0]),
])
def test_both_paths_agree(conf, weigher_class, capacity_aware, expected):
    conf.set_override("free_capacity_weighing", capacity_aware,
                      "filter_scheduler")
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
        "MEMORY_MB": 8192.0 - 2048, "VCPU": 32.0 - 3,
        "DISK_GB": 100.0 - 50}[weigher.resource_class]


@pytest.mark.parametrize("capacity_aware", [False, True])
def test_a_host_without_the_class_weighs_zero(conf, capacity_aware):
    # even while it still counts usage of the class (its inventory went,
    # an instance's allocation stayed): no negative free RAM
    conf.set_override("free_capacity_weighing", capacity_aware,
                      "filter_scheduler")
    node = compute_node.ComputeNode(
        uuid=factories.host_uuid("cpu-only"), host="cpu-only",
        nodename="cpu-only", report_sequence=1,
        inventories=[compute_node.Inventory(resource_class="VCPU",
                                            total=8)])
    view = helpers.make_view(helpers.node("full"), node,
                             usages={"cpu-only": {"MEMORY_MB": 512}})
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
    # each weigher normalises from 0: free / the most free
    full = 8192 / 65536 + 8 / 64 + 100 / 1000
    assert np.allclose(totals, multiplier * np.array([3.0, 1.5, full]))


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
    assert np.allclose(parts["DiskWeigher"], [-1.0, -0.5, -0.1])
    assert np.allclose(totals, parts["RAMWeigher"] + parts["DiskWeigher"])
    # RAM at 2x outweighs the disk penalty of the biggest host
    assert ranked == ["ram", "mid", "disk"]


def test_normalisation_is_over_the_rows_weighed(conf):
    view = _fill_view()
    ranked, totals, _parts = _ranking(conf, view, rows=np.array([1, 2]))
    assert ranked == ["half", "full"]
    # "half" has the most free of the rows weighed
    assert np.allclose(totals, [3.0, 8192 / 32768 + 8 / 32 + 100 / 500])


def test_local_claims_change_the_ranking(conf):
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")
    view = helpers.make_view(helpers.node("a", memory_mb=8192),
                             helpers.node("b", memory_mb=6144))
    assert _ranking(conf, view)[0] == ["a", "b"]
    view.consume(0, {"MEMORY_MB": 4096})
    assert _ranking(conf, view)[0] == ["b", "a"]


def _three_runners(conf, classes):
    """The scheduler's dense totals, and the sparse and per-host runs."""
    return [weighers.WeigherRunner([c(conf) for c in classes],
                                   vectorised=v) for v in (True, False)]


def _ranked_every_way(conf, view, classes):
    """The hosts best first, which every runner must agree on."""
    rows = np.arange(view.n)
    rankings = []
    for runner in _three_runners(conf, classes):
        totals, _parts = runner.run(view, helpers.make_request(), rows)
        rankings.append([view.hosts[i]
                         for i in np.argsort(-totals, kind="stable")])
        weighing = runner.weigh(view, helpers.make_request(),
                                np.ones(view.n, dtype=bool))
        assert np.allclose(weighing.totals, totals)
    assert rankings[0] == rankings[1]
    return rankings[0]


def test_an_overcommitted_host_weighs_as_zero_free_ram(conf):
    # Nova clamps free RAM and VCPUs at 0 (minval) and normalises from 0:
    # "over" owes 3 GB of RAM, which must not make "full" look roomy
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")
    view = helpers.make_view(
        helpers.node("roomy", memory_mb=4096, vcpus=2),
        helpers.node("full", memory_mb=4096, vcpus=4),
        helpers.node("over", memory_mb=4096, vcpus=4, ram_ratio=2.0),
        usages={"roomy": {"MEMORY_MB": 3072}, "full": {"MEMORY_MB": 4096},
                "over": {"MEMORY_MB": 7168}})
    # RAM 1024 / 0 / -3072 -> 1, 0, 0; VCPU 2 / 4 / 4 -> 0.5, 1, 1
    assert _ranked_every_way(conf, view, WEIGHERS) == [
        "roomy", "full", "over"]


def test_ram_weigher_weighs_free_ram_without_the_ratio(conf):
    # Nova's free_ram_mb is total - reserved - used: a 1.5 ratio does not
    # make 8 GB weigh more than 10 GB
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")
    view = helpers.make_view(
        helpers.node("overcommits", memory_mb=8192, ram_ratio=1.5),
        helpers.node("bigger", memory_mb=10240))
    assert _ranked_every_way(conf, view, WEIGHERS) == [
        "bigger", "overcommits"]
    # the capacity-aware option weighs 12 GB of capacity against 10
    conf.set_override("free_capacity_weighing", True, "filter_scheduler")
    assert _ranked_every_way(conf, view, WEIGHERS) == [
        "overcommits", "bigger"]


def test_disk_and_cpu_weighers_weigh_nova_s_quantities(conf):
    # free disk: total - reserved - used (ratio ignored); free VCPUs:
    # total * ratio - used (reserved VCPUs not subtracted)
    conf.set_override("ram_weight_multiplier", 0.0, "filter_scheduler")
    node = helpers.node(
        "odd", vcpus=4, cpu_ratio=2.0, disk_gb=100, disk_ratio=3.0,
        extra_inventories=())
    for inv in node.inventories:
        if inv.resource_class == "VCPU":
            inv.reserved = 2
        if inv.resource_class == "DISK_GB":
            inv.reserved = 10
    view = helpers.make_view(node, usages={"odd": {"VCPU": 1,
                                                   "DISK_GB": 20}})
    request = helpers.make_request()
    cpu = resources.CPUWeigher(conf)
    disk = resources.DiskWeigher(conf)
    assert cpu.weigh_columns(view, request, np.arange(1))[0] == 4 * 2 - 1
    assert disk.weigh_host(view.record(0), request) == 100 - 10 - 20
    assert cpu.weigh_host(view.record(0), request) == 7
    assert disk.weigh_columns(view, request, np.arange(1))[0] == 70


def test_io_ops_weigher_normalises_from_zero(conf):
    # Nova's IoOpsWeigher has minval 0: 2 and 4 operations weigh 0.5 and
    # 1 (times the -1.0 default), not 0 and 1
    view = helpers.make_view(helpers.node("calm", num_io_ops=2),
                             helpers.node("busy", num_io_ops=4))
    for runner in _three_runners(conf, [host_counts.IoOpsWeigher]):
        totals, _parts = runner.run(view, helpers.make_request(),
                                    np.arange(view.n))
        assert np.allclose(totals, [-0.5, -1.0])
