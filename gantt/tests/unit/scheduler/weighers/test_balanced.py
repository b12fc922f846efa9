"""BalancedAllocationWeigher: both paths, the ranking it gives, its
multiplier and per-aggregate override, and a property test."""

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.pipeline.weighers import balanced
from gantt.scheduler.pipeline.weighers import resources
from gantt.scheduler.state import aggregates
from gantt.scheduler.state import host_view
from gantt.tests import factories
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.scheduler import helpers

AGG = "a0a0a0a0-0000-4000-8000-0000000000b1"
KEY = "balanced_allocation_weight_multiplier"


def _flavor(vcpus=1, memory_mb=1024, root_gb=10, **kwargs):
    return factories.flavor(vcpus=vcpus, memory_mb=memory_mb,
                            root_gb=root_gb, **kwargs)


def raw(weigher, view, request, rows=None):
    """Raw values on both paths, which must agree."""
    rows = np.arange(view.n) if rows is None else np.asarray(rows)
    columns = weigher.weigh_columns(view, request, rows)
    per_host = [weigher.weigh_host(view.record(r), request) for r in rows]
    assert columns.shape == (len(rows),)
    assert np.allclose(columns, per_host, rtol=0, atol=1e-12)
    return per_host


def _view():
    """Hosts of 10 VCPU, 10 GB RAM and 100 GB disk, filled differently."""
    names = ("even", "ram-full", "cpu-full", "empty")
    usages = {"even": {"VCPU": 5, "MEMORY_MB": 5120, "DISK_GB": 50},
              "ram-full": {"VCPU": 1, "MEMORY_MB": 9216, "DISK_GB": 10},
              "cpu-full": {"VCPU": 9, "MEMORY_MB": 1024, "DISK_GB": 10}}
    return helpers.make_view(
        *[helpers.node(n, vcpus=10, memory_mb=10240, disk_gb=100)
          for n in names], usages=usages)


def test_raw_value_is_minus_the_spread_of_the_fractions(conf):
    request = helpers.make_request(_flavor(vcpus=1, memory_mb=1024,
                                           root_gb=10))
    values = raw(balanced.BalancedAllocationWeigher(conf), _view(), request)
    # after the placement: (.6, .6, .6), (.2, 1, .2), (1, .2, .2), (.1,)*3
    spread = np.std([0.2, 1.0, 0.2])
    assert np.allclose(values, [0.0, -spread, -spread, 0.0])


def test_a_skewed_flavor_goes_where_its_class_is_emptiest(conf):
    view = helpers.make_view(
        *[helpers.node(n, vcpus=10, memory_mb=10240, disk_gb=100)
          for n in ("cpu-used", "ram-used")],
        usages={"cpu-used": {"VCPU": 5, "MEMORY_MB": 1024, "DISK_GB": 30},
                "ram-used": {"VCPU": 1, "MEMORY_MB": 5120, "DISK_GB": 30}})
    # 4 VCPUs: (.9, .2, .4) on cpu-used, (.5, .6, .4) on ram-used
    request = helpers.make_request(_flavor(vcpus=4, memory_mb=1024,
                                           root_gb=10))
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request)
    assert values == pytest.approx([-np.std([0.9, 0.2, 0.4]),
                                    -np.std([0.5, 0.6, 0.4])])
    assert values[1] > values[0]


def test_fractions_count_local_claims_and_are_capped(conf):
    view = _view()
    view.consume(3, {"VCPU": 8, "MEMORY_MB": 1024})
    request = helpers.make_request(_flavor(vcpus=4, memory_mb=1024,
                                           root_gb=10))
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request,
                 rows=[3, 1])
    # "empty" now: VCPU 12/10 capped at 1, RAM .2, disk .1
    assert values[0] == pytest.approx(-np.std([1.0, 0.2, 0.1]))


def test_classes_the_request_asks_for_are_weighed(conf):
    gpu = compute_node.Inventory(resource_class="VGPU", total=4)
    view = helpers.make_view(
        helpers.node("h0", vcpus=10, memory_mb=10240, disk_gb=100,
                     extra_inventories=[gpu]),
        helpers.node("h1", vcpus=10, memory_mb=10240, disk_gb=100),
        usages={"h0": {"VGPU": 3}})
    request = helpers.make_request(_flavor(
        vcpus=1, memory_mb=1024, root_gb=10,
        extra_specs={"resources:VGPU": "1"}))
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request)
    assert values[0] == pytest.approx(-np.std([0.1, 0.1, 0.1, 1.0]))
    # h1 has no VGPU: its three classes only
    assert values[1] == pytest.approx(0.0)
    # without the request's class, VGPU is not weighed
    plain = raw(balanced.BalancedAllocationWeigher(conf), view,
                helpers.make_request(_flavor()))
    assert plain == pytest.approx([0.0, 0.0])


def test_a_host_with_fewer_than_two_classes_weighs_zero(conf):
    cpu_only = compute_node.ComputeNode(
        uuid=factories.host_uuid("cpu-only"), host="cpu-only",
        nodename="cpu-only", report_sequence=1,
        inventories=[compute_node.Inventory(resource_class="VCPU",
                                            total=8)])
    view = helpers.make_view(cpu_only, helpers.node("full"),
                             usages={"full": {"VCPU": 16}})
    values = raw(balanced.BalancedAllocationWeigher(conf), view,
                 helpers.make_request(_flavor()))
    assert values[0] == 0.0 and values[1] < 0.0


def test_the_configured_classes(conf):
    conf.set_override("balanced_allocation_resource_classes",
                      ["VCPU", "MEMORY_MB"], "filter_scheduler")
    weigher = balanced.BalancedAllocationWeigher(conf)
    # the flavor asks for DISK_GB: it is weighed as well
    assert weigher._classes(helpers.make_request(_flavor())) == (
        "VCPU", "MEMORY_MB", "DISK_GB")
    assert not weigher.constant(_view(), helpers.make_request(_flavor()))


def test_the_multiplier_is_off_by_default_and_overridden_by_aggregates(conf):
    assert conf.filter_scheduler.balanced_allocation_weight_multiplier == 0.0
    cache = helpers.make_cache(*[helpers.node(h) for h in ("h0", "h1")])
    cache.apply_aggregates(aggregates.AggregateSet([aggregate_obj.Aggregate(
        uuid=AGG, name="a", hosts=["h0"], metadata={KEY: "2.5"})]))
    view = host_view.HostView(cache.table, helpers.NOW,
                              helpers.SERVICE_DOWN_TIME)
    weigher = balanced.BalancedAllocationWeigher(conf)
    rows = np.arange(view.n)
    columns = np.broadcast_to(weigher.multiplier(view, rows), view.n)
    per_host = [weigher.host_multiplier(view.record(r)) for r in rows]
    assert list(columns) == per_host == [2.5, 0.0]


def _only(name, *inventories):
    """A host offering just ``inventories`` (resource class, total,
    reserved)."""
    return compute_node.ComputeNode(
        uuid=factories.host_uuid(name), host=name, nodename=name,
        report_sequence=1,
        inventories=[compute_node.Inventory(resource_class=rc, total=total,
                                            reserved=reserved)
                     for rc, total, reserved in inventories])


def test_two_classes_are_enough_to_be_weighed(conf):
    # a host with VCPU and RAM but no disk: (.5, .1) after the placement
    view = helpers.make_view(
        _only("no-disk", ("VCPU", 10, 0), ("MEMORY_MB", 10240, 0)),
        usages={"no-disk": {"VCPU": 4}})
    request = helpers.make_request(_flavor(vcpus=1, memory_mb=1024,
                                           root_gb=10))
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request)
    assert values == pytest.approx([-np.std([0.5, 0.1])])
    # and two configured classes, for a request of those two, weigh
    conf.set_override("balanced_allocation_resource_classes",
                      ["VCPU", "MEMORY_MB"], "filter_scheduler")
    weigher = balanced.BalancedAllocationWeigher(conf)
    request = helpers.make_request(_flavor(vcpus=1, memory_mb=1024,
                                           root_gb=0))
    assert weigher._classes(request) == ("VCPU", "MEMORY_MB")
    assert not weigher.constant(view, request)


def test_a_class_with_no_room_left_is_not_weighed(conf):
    # "reserved" holds its whole disk back: its capacity is 0, so only
    # VCPU and RAM are weighed there, as on "diskless"
    view = helpers.make_view(
        _only("reserved", ("VCPU", 10, 0), ("MEMORY_MB", 10240, 0),
              ("DISK_GB", 100, 100)),
        _only("diskless", ("VCPU", 10, 0), ("MEMORY_MB", 10240, 0)),
        usages={"reserved": {"VCPU": 4}, "diskless": {"VCPU": 4}})
    request = helpers.make_request(_flavor(vcpus=1, memory_mb=1024,
                                           root_gb=10))
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request)
    assert values == pytest.approx([-np.std([0.5, 0.1])] * 2)


def test_a_configured_class_no_host_offers_is_skipped(conf):
    conf.set_override("balanced_allocation_resource_classes",
                      ["VGPU", "VCPU", "MEMORY_MB", "DISK_GB"],
                      "filter_scheduler")
    values = raw(balanced.BalancedAllocationWeigher(conf), _view(),
                 helpers.make_request(_flavor()))
    spread = np.std([0.2, 1.0, 0.2])
    assert np.allclose(values, [0.0, -spread, -spread, 0.0])


def test_a_fleet_without_the_classes_weighs_zero(conf):
    # network agents only: none offers VCPU, RAM or disk
    view = helpers.make_view(_only("agent0", ("CUSTOM_L3_ROUTER", 10, 0)),
                             _only("agent1", ("CUSTOM_L3_ROUTER", 10, 0)))
    values = raw(balanced.BalancedAllocationWeigher(conf), view,
                 helpers.make_request(_flavor()))
    assert values == [0.0, 0.0]


def _runners(conf):
    classes = [balanced.BalancedAllocationWeigher, resources.RAMWeigher]
    return [weighers.WeigherRunner([c(conf) for c in classes],
                                   vectorised=v) for v in (True, False)]


def test_runners_agree_with_balanced_and_stacking(conf):
    conf.set_override(KEY, 2.0, "filter_scheduler")
    conf.set_override("ram_weight_multiplier", -1.0, "filter_scheduler")
    view = _view()
    request = helpers.make_request(_flavor(vcpus=4, memory_mb=1024,
                                           root_gb=10))
    results = [runner.run(view, request, np.arange(view.n))[0]
               for runner in _runners(conf)]
    assert np.allclose(results[0], results[1])
    weighing = _runners(conf)[0].weigh(view, request,
                                       np.ones(view.n, dtype=bool))
    assert np.allclose(weighing.totals, results[0])
    # balanced (x2) outweighs stacking RAM (x1): "even" stays even
    assert view.hosts[int(np.argmax(results[0]))] == "even"


def test_the_scale_is_fixed_not_the_candidates_spread(conf):
    # a host weighs (1 - 2 * deviation) * multiplier, however close the
    # candidates are to each other
    conf.set_override(KEY, 2.0, "filter_scheduler")
    view = _view()
    request = helpers.make_request(_flavor())
    values = np.array(raw(balanced.BalancedAllocationWeigher(conf), view,
                          request))
    for runner in _runners(conf):
        runner.weighers = runner.weighers[:1]
        totals, _parts = runner.run(view, request, np.arange(view.n))
        assert np.allclose(totals, 2.0 * (1 + 2 * values))


# -- property test ----------------------------------------------------------

CONF = None


def _conf():
    global CONF
    if CONF is None:
        fx = gantt_fixtures.Conf()
        fx.setUp()
        CONF = fx.conf
    CONF.set_override(KEY, 1.5, "filter_scheduler")
    return CONF


@st.composite
def hosts(draw):
    count = draw(st.integers(1, 8))
    nodes, usages = [], {}
    for i in range(count):
        name = "h%d" % i
        sizes = {"VCPU": draw(st.integers(1, 64)),
                 "MEMORY_MB": draw(st.integers(512, 65536)),
                 "DISK_GB": draw(st.integers(0, 2000))}
        extra = ([compute_node.Inventory(resource_class="VGPU", total=4)]
                 if draw(st.booleans()) else [])
        nodes.append(helpers.node(
            name, vcpus=sizes["VCPU"], memory_mb=sizes["MEMORY_MB"],
            disk_gb=max(sizes["DISK_GB"], 1),
            cpu_ratio=draw(st.sampled_from([1.0, 4.0, 16.0])),
            ram_ratio=draw(st.sampled_from([1.0, 1.5])),
            extra_inventories=extra))
        usages[name] = {rc: draw(st.integers(0, 2 * size))
                        for rc, size in sizes.items()}
    return nodes, usages


@st.composite
def requests(draw):
    extra = ({"resources:VGPU": "1"} if draw(st.booleans()) else {})
    return _flavor(vcpus=draw(st.integers(1, 16)),
                   memory_mb=draw(st.integers(1, 32768)),
                   root_gb=draw(st.integers(0, 500)), extra_specs=extra)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(hosts(), requests(), st.data())
def test_property_both_paths_and_runners_agree(fleet, flavor, data):
    conf = _conf()
    nodes, usages = fleet
    view = helpers.make_view(*nodes, usages=usages)
    rows = data.draw(st.lists(st.integers(0, view.n - 1), min_size=1,
                              unique=True))
    request = helpers.make_request(flavor)
    values = raw(balanced.BalancedAllocationWeigher(conf), view, request,
                 rows=rows)
    assert all(-0.5 <= v <= 0.0 for v in values)
    rows = np.array(rows)
    mask = np.zeros(view.n, dtype=bool)
    mask[rows] = True
    totals = [runner.run(view, request, rows, mask=mask)[0]
              for runner in _runners(conf)]
    assert np.allclose(totals[0], totals[1])
