"""Every way of weighing gives the host-by-host numbers.

The scheduler weighs with ``WeigherRunner.weigh``; explain uses ``run``,
which weighs every row at once when most rows are candidates and the
candidates only otherwise, with or without each weigher's part; a runner
built with ``vectorised=False`` weighs host by host with Nova's
arithmetic. These tests hold every way to the host-by-host numbers on a
fleet where the shortcuts matter: multipliers that aggregates override,
weighers that depend on the request, a plugin that weighs host by host
only, one whose multiplier is an array of its own, bounds a weigher sets
(``minval``/``maxval``), a weigher with nothing to weigh before others,
one with a zero multiplier, and shared columns whose extremes lie outside
the candidates. (They were written to kill mutants: see
doc/source/contributor/mutation.rst.)
"""

import numpy as np
from oslo_config import cfg
import pytest

from gantt import conf as gantt_conf
from gantt.conf import filter_scheduler
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.pipeline.weighers import image_props
from gantt.scheduler.pipeline.weighers import metrics
from gantt.scheduler.state import aggregates
from gantt.tests.unit.scheduler import helpers

GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
HPC = "a0a0a0a0-0000-4000-8000-0000000000f1"
COUNT = 24
#: the rows of the oldest and newest hypervisor (see _fleet)
OLDEST, NEWEST = 0, 17


def _number(host):
    """h07 -> 7"""
    return int(host[1:])


def _names(view, rows):
    return [view.record(r).host for r in np.arange(view.n)[rows]]


class _PerHost(weighers.BaseWeigher):
    """A plugin that weighs host by host only (no ``weigh_columns``),
    Ubuntu images on some hosts."""

    name = "PerHost"
    multiplier_option = "io_ops_weight_multiplier"

    def weigh_host(self, host, request):
        if request.image_properties.get("os_distro") != "ubuntu":
            return 0.0
        return float(_number(host.host) % 5)


class _Bounded(weighers.BaseWeigher):
    """A plugin whose raw values (0 to 5) lie inside its bounds."""

    name = "Bounded"
    multiplier_option = "ram_weight_multiplier"
    minval = -2
    maxval = 10

    def weigh_host(self, host, request):
        return float(_number(host.host) % 6)

    def weigh_columns(self, view, request, rows):
        return np.array([_number(h) % 6 for h in _names(view, rows)],
                        dtype=float)


class _Capped(_Bounded):
    """The same values, only a maximum set."""

    name = "Capped"
    minval = None


class _OwnMultiplier(weighers.BaseWeigher):
    """A plugin whose multiplier is a fresh array (1 or 2 by host)."""

    name = "OwnMultiplier"
    multiplier_option = "ram_weight_multiplier"

    def multiplier(self, view, rows):
        return np.array([1.0 + _number(h) % 2 for h in _names(view, rows)])

    def host_multiplier(self, host):
        return 1.0 + _number(host.host) % 2

    def weigh_host(self, host, request):
        return float(_number(host.host) % 7)

    def weigh_columns(self, view, request, rows):
        return np.array([_number(h) % 7 for h in _names(view, rows)],
                        dtype=float)


class _Flat(weighers.BaseWeigher):
    """A plugin that gives every host the same value."""

    name = "Flat"
    multiplier_option = "ram_weight_multiplier"

    def weigh_host(self, host, request):
        return 7.0

    def weigh_columns(self, view, request, rows):
        return np.full(weighers.size(view, rows), 7.0)


def _conf():
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    conf.set_override("weight_setting", ["cpu.percent=1.0"], "metrics")
    # a weigher that weighs nothing, between others
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("image_props_weight_multiplier", 1.0,
                      "filter_scheduler")
    return conf


def _runner(conf, vectorised=True):
    # the weighers after one that tells no host apart (Flat; PCIWeigher,
    # as no host has PCI devices) must still count
    return weighers.WeigherRunner([
        _Flat(conf), _OwnMultiplier(conf), _PerHost(conf), _Bounded(conf),
        _Capped(conf)] + plugins.load(
        plugins.WEIGHERS, list(filter_scheduler.DEFAULT_WEIGHERS), conf),
        vectorised=vectorised)


def _fleet():
    nodes = [helpers.node(
        "h%02d" % i, vcpus=8 + i % 5 * 8, memory_mb=4096 * (1 + i % 7),
        disk_gb=100 * (1 + i % 3), num_io_ops=i % 4, num_instances=i % 6,
        # every version once: the oldest on row 0, the newest on row 17
        capabilities={"hypervisor_version": str(1000 + i * 7 % COUNT)},
        stats={"image_props:os_distro=ubuntu": str(i % 4),
               "failed_builds": "1" if i % 5 == 0 else "0"},
        metrics={"cpu.percent": float(i % 9)})
        for i in range(COUNT)]
    cache = helpers.make_cache(*nodes, usages={
        n.host: {"MEMORY_MB": 512 * (i % 5), "VCPU": i % 3}
        for i, n in enumerate(nodes)})
    cache.apply_aggregates(aggregates.AggregateSet([aggregate_obj.Aggregate(
        uuid=HPC, name="hpc", hosts=["h%02d" % i for i in range(0, COUNT, 4)],
        metadata={"ram_weight_multiplier": "3.0",
                  "cpu_weight_multiplier": "0"})]))
    return helpers.view_of(cache)


def _request():
    return helpers.make_request(
        image=request_spec.ImageMeta(properties={"os_distro": "ubuntu"}),
        lookup=helpers.FakeLookup(group_hosts={GROUP: {"h01": 2, "h02": 1}}),
        instance_group=request_spec.InstanceGroup(
            uuid=GROUP, policy="soft-anti-affinity"))


def _mask(rows):
    mask = np.zeros(COUNT, dtype=bool)
    mask[rows] = True
    return mask


#: most hosts are candidates (every row weighed at once), but not the
#: oldest and newest hypervisor; or a few (the candidates weighed)
MOST = [r for r in range(COUNT) if r not in (OLDEST, NEWEST)]
FEW = [1, 2, 5, 9, 14]


def _close(actual, expected):
    assert len(actual) == len(expected)
    assert np.allclose(actual, expected, rtol=0, atol=1e-9), (
        list(actual), list(expected))


@pytest.fixture(scope="module")
def world():
    conf = _conf()
    return conf, _fleet(), _request()


def _host_by_host(world, rows):
    """``(rows, totals, parts)`` weighed host by host."""
    conf, view, request = world
    rows = np.array(rows)
    return (rows,) + _runner(conf, vectorised=False).run(view, request, rows)


@pytest.mark.parametrize("rows", [MOST, FEW], ids=["most", "few"])
def test_explain_gives_each_weighers_host_by_host_part(world, rows):
    conf, view, request = world
    rows, expected, expected_parts = _host_by_host(world, rows)
    totals, parts = _runner(conf).run(view, request, rows)
    _close(totals, expected)
    assert sorted(parts) == sorted(expected_parts)
    for name in expected_parts:
        _close(parts[name], expected_parts[name])
    # the request's own weighers weighed something
    assert np.ptp(expected_parts["ImagePropertiesWeigher"]) > 0
    assert np.ptp(expected_parts["ServerGroupSoftAntiAffinityWeigher"]) > 0


@pytest.mark.parametrize("rows", [MOST, FEW], ids=["most", "few"])
def test_totals_without_parts_are_the_same(world, rows):
    conf, view, request = world
    rows, expected, _parts = _host_by_host(world, rows)
    totals, _parts = _runner(conf).run(view, request, rows, parts=False)
    _close(totals, expected)


@pytest.mark.parametrize("rows", [MOST, FEW], ids=["most", "few"])
def test_the_schedulers_weighing_picks_the_host_by_host_best(world, rows):
    conf, view, request = world
    rows, expected, _parts = _host_by_host(world, rows)
    weighing = _runner(conf).weigh(view, request, _mask(rows))
    assert list(weighing.rows) == list(rows)
    _close(weighing.totals, expected)
    if weighing.full is not None:
        _close([weighing.weight(r) for r in rows], expected)
    assert weighing.rows[np.argmax(weighing.totals)] == rows[
        np.argmax(expected)]


@pytest.mark.parametrize("vectorised", [True, False])
@pytest.mark.parametrize("rows", [MOST, FEW], ids=["most", "few"])
def test_a_weighers_bounds_replace_the_observed_ones(world, rows,
                                                     vectorised):
    # raw values 0..5: normalised between the weigher's -2 and 10, not
    # between the candidates' 0 and 5
    conf, view, request = world
    rows = np.array(rows)
    _totals, parts = _runner(conf, vectorised).run(view, request, rows)
    names = _names(view, rows)
    multiplier = [3.0 if _number(h) % 4 == 0 else 1.0 for h in names]
    raw = np.array([_number(h) % 6 for h in names], dtype=float)
    _close(parts["Bounded"], (raw + 2) / 12 * multiplier)
    _close(parts["Capped"], (raw - raw.min()) / (10 - raw.min()) * multiplier)


def test_integer_values_are_normalised_as_numbers():
    _close(weighers.normalize.normalize(np.array([2, 4, 6])), [0.0, 0.5, 1.0])
    _close(weighers.normalize.normalize(np.array([2, 4, 6]), multiplier=2.0),
           [0.0, 1.0, 2.0])


def test_a_plugin_without_weigh_host_is_named():
    class Lazy(weighers.BaseWeigher):
        name = "Lazy"

    with pytest.raises(NotImplementedError, match="Lazy"):
        Lazy(_conf()).weigh_host(None, None)


CELL_A = "aaaaaaaa-0000-4000-8000-000000000001"
CELL_B = "bbbbbbbb-0000-4000-8000-000000000002"


def _pool(count):
    return pci_obj.PciDevicePool(vendor_id="8086", product_id="154d",
                                 count=count)


def test_pci_hosts_and_the_preferred_cell_weigh_on_every_path():
    # one kind of PCI device on some hosts, two cells, and a move that may
    # cross cells but prefers its own
    conf = _conf()
    view = helpers.make_view(*[helpers.node(
        "h%02d" % i, cell_uuid=CELL_A if i % 2 else CELL_B,
        pci_pools=[_pool(i % 4)] if i % 3 else [])
        for i in range(8)])
    request = helpers.make_request(
        scheduler_hints={"allow_cross_cell_move": ["true"]},
        requested_destination=request_spec.Destination(cell_uuid=CELL_A))
    runner = weighers.WeigherRunner(plugins.load(
        plugins.WEIGHERS, ["PCIWeigher", "CrossCellWeigher"], conf))
    rows = np.arange(1, 8)
    expected, expected_parts = weighers.WeigherRunner(
        runner.weighers, vectorised=False).run(view, request, rows)
    assert np.ptp(expected_parts["PCIWeigher"]) > 0
    assert np.ptp(expected_parts["CrossCellWeigher"]) > 0
    totals, parts = runner.run(view, request, rows)
    _close(totals, expected)
    for name in expected_parts:
        _close(parts[name], expected_parts[name])
    _close(runner.weigh(view, request, _mask8(rows)).totals, expected)


def _mask8(rows):
    mask = np.zeros(8, dtype=bool)
    mask[rows] = True
    return mask


def test_metrics_a_host_misses_count_only_where_they_weigh():
    # "a" is missing on m1 (which is then unavailable) and on m2, whose
    # aggregate sets the metrics multiplier to 0 (so "a" does not count
    # there); m3 misses "b"
    conf = _conf()
    conf.set_override("weight_setting", ["a=1.0", "b=2.0"], "metrics")
    cache = helpers.make_cache(
        helpers.node("m0", metrics={"a": 1.0, "b": 1.0}),
        helpers.node("m1", metrics={"b": 3.0}),
        helpers.node("m2", metrics={"b": 2.0}),
        helpers.node("m3", metrics={"a": 5.0}))
    cache.apply_aggregates(aggregates.AggregateSet([aggregate_obj.Aggregate(
        uuid=HPC, name="quiet", hosts=["m2"],
        metadata={"metrics_weight_multiplier": "0"})]))
    view = helpers.view_of(cache)
    weigher = metrics.MetricsWeigher(conf)
    request = helpers.make_request()
    expected = [3.0, -10000.0, 4.0, -10000.0]
    assert [weigher.weigh_host(view.record(r), request)
            for r in range(4)] == expected
    assert list(weigher.weigh_columns(view, request, weighers.ALL)) == (
        expected)
    assert list(weigher.weigh_columns(view, request, np.arange(4))) == (
        expected)


@pytest.mark.parametrize("setting, expected", [
    # entries that do not parse are left out: as if none were given,
    # every requested property weighs 1
    (["os_distro=x=1"], [4.0, 2.0]),
    (["=2"], [4.0, 2.0]),
    (["os_distro=x", "os_distro=2"], [6.0, 4.0]),
    # a property the setting does not list weighs nothing
    (["os_distro=10"], [30.0, 20.0]),
])
def test_image_properties_weight_setting(setting, expected):
    conf = _conf()
    conf.set_override("image_props_weight_setting", setting,
                      "filter_scheduler")
    view = helpers.make_view(
        helpers.node("h0", stats={"image_props:os_distro=ubuntu": "3",
                                  "image_props:hw_disk_bus=virtio": "1"}),
        helpers.node("h1", stats={"image_props:os_distro=ubuntu": "2"}))
    request = helpers.make_request(image=request_spec.ImageMeta(
        properties={"os_distro": "ubuntu", "hw_disk_bus": "virtio"}))
    weigher = image_props.ImagePropertiesWeigher(conf)
    assert [weigher.weigh_host(view.record(r), request)
            for r in range(2)] == expected
    assert list(weigher.weigh_columns(view, request, weighers.ALL)) == (
        expected)
