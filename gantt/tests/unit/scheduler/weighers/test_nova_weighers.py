"""The weighers beyond RAM/CPU/disk, per-aggregate multipliers, minval /
maxval, and the dense and sparse runners, against Nova's rules."""

import numpy as np
import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.pipeline.weighers import affinity
from gantt.scheduler.pipeline.weighers import build_failure
from gantt.scheduler.pipeline.weighers import cross_cell
from gantt.scheduler.pipeline.weighers import host_counts
from gantt.scheduler.pipeline.weighers import hypervisor_version
from gantt.scheduler.pipeline.weighers import image_props
from gantt.scheduler.pipeline.weighers import metrics
from gantt.scheduler.pipeline.weighers import pci
from gantt.scheduler.pipeline.weighers import resources
from gantt.scheduler.state import aggregates
from gantt.tests.unit.scheduler import helpers

GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
CELL_A = "aaaaaaaa-0000-4000-8000-000000000001"
CELL_B = "bbbbbbbb-0000-4000-8000-000000000002"
AGG = "a0a0a0a0-0000-4000-8000-000000000001"
AGG2 = "a0a0a0a0-0000-4000-8000-000000000002"


raw = helpers.raw


def _pool(count):
    return pci_obj.PciDevicePool(vendor_id="8086", product_id="154d",
                                 count=count)


@pytest.mark.parametrize("weigher_class, nodes, expected", [
    (host_counts.IoOpsWeigher,
     [dict(num_io_ops=0), dict(num_io_ops=3), dict(num_io_ops=7)],
     [0.0, 3.0, 7.0]),
    (host_counts.NumInstancesWeigher,
     [dict(num_instances=5), dict(num_instances=0), dict()], [5.0, 0.0, 0.0]),
    # fewer free devices weigh more: 100 - min(free, 99)
    (pci.PCIWeigher, [dict(), dict(pci_pools=[_pool(2), _pool(3)]),
                      dict(pci_pools=[_pool(500)])], [100.0, 95.0, 1.0]),
    (build_failure.BuildFailureWeigher,
     [dict(stats={"failed_builds": "3"}), dict(stats={}),
      dict(stats={"failed_builds": "junk"})], [3.0, 0.0, 0.0]),
    (hypervisor_version.HypervisorVersionWeigher,
     [dict(capabilities={"hypervisor_version": "8000000"}),
      dict(capabilities={"hypervisor_version": "6002000"}), dict()],
     [8000000.0, 6002000.0, 0.0]),
])
def test_raw_values(conf, weigher_class, nodes, expected):
    view = helpers.make_view(*[helpers.node("h%d" % i, **n)
                               for i, n in enumerate(nodes)])
    assert raw(weigher_class(conf), view, helpers.make_request()) == expected


@pytest.mark.parametrize("option, default", [
    ("io_ops_weight_multiplier", -1.0),
    ("num_instances_weight_multiplier", 0.0),
    ("hypervisor_version_weight_multiplier", 1.0),
    ("pci_weight_multiplier", 1.0),
    ("soft_affinity_weight_multiplier", 1.0),
    ("soft_anti_affinity_weight_multiplier", 1.0),
    ("build_failure_weight_multiplier", 1000000.0),
    ("cross_cell_move_weight_multiplier", 1000000.0),
    ("image_props_weight_multiplier", 0.0),
])
def test_nova_default_multipliers(conf, option, default):
    assert getattr(conf.filter_scheduler, option) == default


def test_build_failures_weigh_negatively(conf):
    view = helpers.make_view(helpers.node("ok"),
                             helpers.node("bad", stats={"failed_builds": "2"}))
    totals, _parts = weighers.WeigherRunner(
        [build_failure.BuildFailureWeigher(conf)]).run(
        view, helpers.make_request(), np.arange(2))
    assert list(totals) == [0.0, -1000000.0]


def _group_request(policy, placed):
    return helpers.make_request(
        lookup=helpers.FakeLookup(group_hosts={GROUP: placed}),
        instance_group=request_spec.InstanceGroup(uuid=GROUP, policy=policy))


@pytest.mark.parametrize("policy, soft, anti", [
    ("soft-affinity", [2.0, 1.0, 0.0], [0.0, 0.0, 0.0]),
    ("soft-anti-affinity", [0.0, 0.0, 0.0], [-2.0, -1.0, 0.0]),
    # hard policies are filters: the weighers add nothing
    ("affinity", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
])
def test_soft_affinity(conf, policy, soft, anti):
    view = helpers.make_view(*[helpers.node(h) for h in ("h0", "h1", "h2")])
    request = _group_request(policy, {"h0": 2, "h1": 1})
    assert raw(affinity.ServerGroupSoftAffinityWeigher(conf), view,
               request) == soft
    assert raw(affinity.ServerGroupSoftAntiAffinityWeigher(conf), view,
               request) == anti


@pytest.mark.parametrize("hints, destination, expected", [
    ({"allow_cross_cell_move": ["true"]}, CELL_A, [1.0, -1.0, -1.0]),
    # without the hint the cell is a restriction (candidates), not a weight
    ({}, CELL_A, [0.0, 0.0, 0.0]),
    ({"allow_cross_cell_move": ["true"]}, None, [0.0, 0.0, 0.0]),
])
def test_cross_cell(conf, hints, destination, expected):
    view = helpers.make_view(helpers.node("a", cell_uuid=CELL_A),
                             helpers.node("b", cell_uuid=CELL_B),
                             helpers.node("none"))
    request = helpers.make_request(
        scheduler_hints=hints,
        requested_destination=request_spec.Destination(
            cell_uuid=destination) if destination else None)
    assert raw(cross_cell.CrossCellWeigher(conf), view, request) == expected


@pytest.mark.parametrize("multiplier, setting, expected", [
    # every requested property weighs 1 per instance sharing it
    (1.0, [], [3.0 + 1.0, 2.0, 0.0]),
    # only the listed properties, with their ratios
    (1.0, ["os_distro=10", "hw_disk_bus=0"], [30.0, 20.0, 0.0]),
    # a zero multiplier disables the weigher (Nova)
    (0.0, [], [0.0, 0.0, 0.0]),
])
def test_image_properties_weigher(conf, multiplier, setting, expected):
    conf.set_override("image_props_weight_multiplier", multiplier,
                      "filter_scheduler")
    conf.set_override("image_props_weight_setting", setting,
                      "filter_scheduler")
    view = helpers.make_view(
        helpers.node("h0", stats={"image_props:os_distro=ubuntu": "3",
                                  "image_props:hw_disk_bus=virtio": "1"}),
        helpers.node("h1", stats={"image_props:os_distro=ubuntu": "2",
                                  "image_props:os_distro=centos": "5"}),
        helpers.node("h2"))
    request = helpers.make_request(image=request_spec.ImageMeta(
        properties={"os_distro": "ubuntu", "hw_disk_bus": "virtio"}))
    assert raw(image_props.ImagePropertiesWeigher(conf), view,
               request) == expected


@pytest.mark.parametrize("required, expected", [
    (True, [1.0 * 2 - 0.5 * 4, -10000.0, -10000.0]),
    (False, [1.0 * 2 - 0.5 * 4, -10000.0, -10000.0]),
])
def test_metrics_weigher(conf, required, expected):
    conf.set_override("weight_setting", ["cpu=1.0", "mem=-0.5"], "metrics")
    conf.set_override("required", required, "metrics")
    view = helpers.make_view(
        helpers.node("h0", metrics={"cpu": 2.0, "mem": 4.0}),
        helpers.node("h1", metrics={"cpu": 2.0}),
        helpers.node("h2"))
    assert raw(metrics.MetricsWeigher(conf), view,
               helpers.make_request()) == expected


def test_metrics_with_a_zero_ratio_ignore_missing_metrics(conf):
    conf.set_override("weight_setting", ["cpu=1.0", "mem=0"], "metrics")
    view = helpers.make_view(helpers.node("h0", metrics={"cpu": 3.0}))
    assert raw(metrics.MetricsWeigher(conf), view,
               helpers.make_request()) == [3.0]


# -- multipliers overridden by aggregates--------------------------------------

def _agg_view(metadata, metadata2=None):
    cache = helpers.make_cache(*[helpers.node(h) for h in ("h0", "h1", "h2")])
    aggs = [aggregate_obj.Aggregate(uuid=AGG, name="a", hosts=["h0", "h1"],
                                    metadata=metadata)]
    if metadata2 is not None:
        aggs.append(aggregate_obj.Aggregate(uuid=AGG2, name="b",
                                            hosts=["h1"], metadata=metadata2))
    cache.apply_aggregates(aggregates.AggregateSet(aggs))
    return cache.view(helpers.SERVICE_DOWN_TIME)


@pytest.mark.parametrize("weigher_class, key, values, expected", [
    # the aggregate's value replaces the option (1.0) on its hosts
    (resources.RAMWeigher, "ram_weight_multiplier", ("3.5", None),
     [3.5, 3.5, 1.0]),
    # several aggregates: the smallest value
    (resources.RAMWeigher, "ram_weight_multiplier", ("3.5", "0.5"),
     [3.5, 0.5, 1.0]),
    # a value that does not parse: the option
    (resources.CPUWeigher, "cpu_weight_multiplier", ("x", None),
     [1.0, 1.0, 1.0]),
    (resources.CPUWeigher, "cpu_weight_multiplier", ("2", "x"),
     [2.0, 1.0, 1.0]),
    (host_counts.IoOpsWeigher, "io_ops_weight_multiplier", ("0", None),
     [0.0, 0.0, -1.0]),
    (metrics.MetricsWeigher, "metrics_weight_multiplier", ("4", None),
     [4.0, 4.0, 1.0]),
    # BuildFailureWeigher negates its multiplier
    (build_failure.BuildFailureWeigher, "build_failure_weight_multiplier",
     ("10", None), [-10.0, -10.0, -1000000.0]),
])
def test_aggregate_multipliers(conf, weigher_class, key, values, expected):
    view = _agg_view({key: values[0]},
                     None if values[1] is None else {key: values[1]})
    weigher = weigher_class(conf)
    rows = np.arange(view.n)
    columns = np.broadcast_to(weigher.multiplier(view, rows), view.n)
    per_host = [weigher.host_multiplier(view.record(r)) for r in rows]
    assert list(columns) == expected
    assert per_host == expected


# -- runners-------------------------------------------------------------------

class _Bounded(weighers.BaseWeigher):
    name = "Bounded"
    multiplier_option = "ram_weight_multiplier"
    minval = 0

    def weigh_host(self, host, request):
        return float(host.num_io_ops - 2)

    def weigh_columns(self, view, request, rows):
        return view.column("num_io_ops")[rows] - 2.0


def test_minval_clips_and_anchors_the_normalisation(conf):
    # raw -2, 0, 4 -> clipped to 0, 0, 4 -> normalised from 0, not -2
    view = helpers.make_view(*[helpers.node("h%d" % i, num_io_ops=n)
                               for i, n in enumerate((0, 2, 6, 4))])
    rows = np.arange(view.n)
    for runner in (weighers.WeigherRunner([_Bounded(conf)]),
                   weighers.WeigherRunner([_Bounded(conf)],
                                          vectorised=False)):
        totals, _parts = runner.run(view, helpers.make_request(), rows)
        assert list(totals) == [0.0, 0.0, 1.0, 0.5]


@pytest.mark.parametrize("rows", [[0, 1, 2, 3], [1, 3], [3]])
def test_dense_sparse_and_per_host_runners_agree(conf, rows):
    conf.set_override("io_ops_weight_multiplier", 2.0, "filter_scheduler")
    view = helpers.make_view(*[
        helpers.node("h%d" % i, memory_mb=m, num_io_ops=io)
        for i, (m, io) in enumerate(((4096, 1), (8192, 0), (2048, 5),
                                     (65536, 2)))])
    classes = [resources.RAMWeigher, host_counts.IoOpsWeigher,
               pci.PCIWeigher]
    rows = np.array(rows)
    mask = np.zeros(view.n, dtype=bool)
    mask[rows] = True
    results = [weighers.WeigherRunner([c(conf) for c in classes],
                                      vectorised=v).run(view,
                                                        helpers.make_request(),
                                                        rows, mask=mask)
               for v in (True, False)]
    for (totals, parts), (totals2, parts2) in [results]:
        assert np.allclose(totals, totals2)
        assert set(parts) == set(parts2) == {c.__name__ for c in classes}
        for name in parts:
            assert np.allclose(parts[name], parts2[name])
            assert len(parts[name]) == len(rows)


def test_the_scheduler_s_totals_without_parts_are_the_same(conf):
    view = _agg_view({"ram_weight_multiplier": "3"})
    classes = [resources.RAMWeigher, resources.CPUWeigher,
               host_counts.IoOpsWeigher, build_failure.BuildFailureWeigher]
    runner = weighers.WeigherRunner([c(conf) for c in classes])
    rows = np.arange(view.n)
    mask = np.ones(view.n, dtype=bool)
    request = helpers.make_request()
    with_parts, parts = runner.run(view, request, rows, mask=mask)
    without, no_parts = runner.run(view, request, rows, mask=mask,
                                   parts=False)
    assert np.allclose(with_parts, without)
    assert len(parts) == len(classes) and len(no_parts) == 0
