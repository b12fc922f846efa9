"""Property test: the column path and the per-host path agree.

Hypothesis draws random fleets (resources, usage, zones, cells, traits,
aggregates with metadata, capabilities, stats, metrics, NUMA cells, PCI
pools, local claims) and random requests (flavor extra specs, image
properties, zones, projects, server groups, hints), and checks, for every
built-in filter, that ``passes_columns`` equals ``host_passes`` row by row,
and for every built-in weigher that ``weigh_columns`` and the column
multiplier equal ``weigh_host`` and ``host_multiplier``; and that the two
runners (vectorised and per host) give the same mask, tally and weights.
"""

import json

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest

from gantt.conf import filter_scheduler
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import numa as numa_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import aggregates
from gantt.tests import factories
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.scheduler import helpers

ALL_FILTERS = sorted(
    ep.name for ep in __import__("stevedore").ExtensionManager(
        plugins.FILTERS).list_entry_points())
# the defaults and Gantt's own weighers, which are not among them
ALL_WEIGHERS = list(filter_scheduler.DEFAULT_WEIGHERS) + [
    "BalancedAllocationWeigher", "LeastRoutersWeigher",
    "LeastNetworksWeigher", "CapacityWeigher",
    "AllocatedCapacityWeigher", "VolumeNumberWeigher", "GoodnessWeigher"]

AGGS = ["a0a0a0a0-0000-4000-8000-00000000000%d" % i for i in range(5)]
CELLS = ["c0c0c0c0-0000-4000-8000-00000000000%d" % i for i in range(2)]
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
VM = {"h%d" % i: "11111111-1111-4111-8111-1111111111%02d" % i
      for i in range(12)}
ZONES = [None, "az1", "az2"]
TRAITS = ["CUSTOM_GOLD", "COMPUTE_STATUS_DISABLED", "COMPUTE_ACCELERATORS",
          "COMPUTE_IMAGE_TYPE_QCOW2", "HW_ARCH_X86_64"]
SUPPORTED = [
    '[["x86_64", "qemu", "hvm"]]',
    '[["x86_64", "kvm", "hvm"], ["i686", "kvm", "hvm"]]',
    '[["aarch64", "qemu", "hvm"]]', "[]", "not json",
]
QUERIES = [
    '[">=", "$free_ram_mb", 1024]',
    '["and", [">", "$vcpus_total", 4], ["<", "$num_instances", 3]]',
    '["or", ["=", "$num_io_ops", 0], ["in", "$vcpus_used", 1, 2]]',
    '["=", "$host", "h1"]',
    '["not", ["=", "$num_io_ops", 1]]',
    '["<", "$capabilities.hypervisor_type", 5]',
    '[">=", "$metrics.cpu.percent", 0.5]',
    '["and", [">=", "$free_disk_mb", 1000], ["<=", "$total_usable_ram_mb", '
    '8192]]',
]
META_VALUES = {
    "availability_zone": ["az1", "az2"],
    "filter_tenant_id": ["p1", "p1,p2"],
    "filter_tenant_id2": ["p2"],
    "instance_type": ["m1.small", "m1.small, x", "m1.big"],
    "max_io_ops_per_host": ["2", "0", "junk"],
    "max_instances_per_host": ["3", "1", "x"],
    "ram_weight_multiplier": ["2", "-1.5", "junk"],
    "io_ops_weight_multiplier": ["0", "3"],
    "balanced_allocation_weight_multiplier": ["0", "4", "junk"],
    "metrics_weight_multiplier": ["0", "2"],
    "build_failure_weight_multiplier": ["1", "nan"],
    "ssd": ["true", "3", "true,false"],
    "hypervisor_type": ["QEMU"],
    "os_distro": ["ubuntu", "ubuntu,centos"],
    "trait:CUSTOM_GOLD": ["required"],
}


@st.composite
def metadata(draw):
    keys = draw(st.lists(st.sampled_from(sorted(META_VALUES)), unique=True,
                         max_size=4))
    return {k: draw(st.sampled_from(META_VALUES[k])) for k in keys}


def _configure(conf):
    """(Re)apply this test's options. NOTE: oslo.config option groups share
    their option table between ConfigOpts instances, so another test's
    ``conf.reset()`` clears these overrides too: every test applies them
    again before it runs."""
    conf.set_override("alias", [
        '{"name": "nic", "vendor_id": "8086", "product_id": "154d"}',
        '{"name": "nic", "vendor_id": "15b3", "product_id": "1017"}',
        '{"name": "gpu", "vendor_id": "10de", "device_type": "type-PCI"}',
    ], "pci")
    conf.set_override("weight_setting", ["cpu.percent=-1.0",
                                         "memory.free=0.5"], "metrics")
    conf.set_override("isolated_images", ["img-iso"], "filter_scheduler")
    conf.set_override("isolated_hosts", ["h1", "h2"], "filter_scheduler")
    conf.set_override("image_props_weight_multiplier", 2.0,
                      "filter_scheduler")
    conf.set_override("max_io_ops_per_host", 2, "filter_scheduler")
    conf.set_override("balanced_allocation_weight_multiplier", 2.0,
                      "filter_scheduler")
    conf.set_override("max_instances_per_host", 4, "filter_scheduler")


def _conf():
    conf = gantt_fixtures.make_conf()
    _configure(conf)
    return conf


CONF = _conf()
FILTERS = plugins.load(plugins.FILTERS, ALL_FILTERS, CONF)
WEIGHERS = plugins.load(plugins.WEIGHERS, ALL_WEIGHERS, CONF)


# -- fleets -------------------------------------------------------------------

page_pool = st.builds(
    lambda size, total, used: numa_obj.NUMAPagePool(
        size_kb=size, total=total, used=min(used, total)),
    st.sampled_from([4, 2048, 1048576]), st.integers(0, 4096),
    st.integers(0, 4096))


@st.composite
def numa_cell(draw, cell_id):
    cpus = draw(st.integers(0, 8))
    pcpus = draw(st.integers(0, 8))
    pcpuset = list(range(100, 100 + pcpus))
    pools = draw(st.lists(page_pool, max_size=3,
                          unique_by=lambda p: p.size_kb))
    return numa_obj.NUMACell(
        id=cell_id, cpuset=list(range(cpus)), pcpuset=pcpuset,
        pinned_cpus=draw(st.lists(st.sampled_from(pcpuset), unique=True))
        if pcpuset else [],
        cpu_usage=draw(st.integers(0, 12)),
        memory_mb=draw(st.sampled_from([1024, 4096, 8192])),
        memory_usage_mb=draw(st.integers(0, 8192)), mempages=pools)


pci_pool = st.builds(
    lambda kind, numa_node, count: pci_obj.PciDevicePool(
        vendor_id=kind[0], product_id=kind[1], numa_node=numa_node,
        count=count, tags={"dev_type": kind[2]}),
    st.sampled_from([("8086", "154d", "type-PF"), ("15b3", "1017", "type-VF"),
                     ("10DE", "1db4", "type-PCI"), ("1234", "0001",
                                                    "type-PCI")]),
    st.sampled_from([None, 0, 1]), st.integers(0, 3))


@st.composite
def host(draw, index):
    name = "h%d" % index
    caps = {}
    if draw(st.booleans()):
        caps["hypervisor_type"] = draw(st.sampled_from(["QEMU", "kvm"]))
    if draw(st.booleans()):
        caps["supported_instances"] = draw(st.sampled_from(SUPPORTED))
    if draw(st.booleans()):
        caps["hypervisor_version"] = draw(st.sampled_from(
            ["6002000", "8000000", "2000", "x", "-3"]))
    if draw(st.booleans()):
        caps["cpu_info"] = draw(st.sampled_from([
            '{"features": ["avx"], "arch": "x86_64"}', '{"arch": "ppc"}',
            "oops"]))
    if draw(st.booleans()):
        caps["cpu_info:features"] = "avx avx2"
    if draw(st.booleans()):
        caps["host_ip"] = draw(st.sampled_from(
            ["10.0.1.5", "10.0.2.5", "fd00::5", "bogus"]))
    stats = draw(st.dictionaries(
        st.sampled_from(["failed_builds", "image_props:os_distro=ubuntu",
                         "image_props:hw_disk_bus=virtio",
                         "hypervisor_type", "ssd"]),
        st.sampled_from(["0", "1", "3", "x", "QEMU", "2.5"]), max_size=3))
    metrics = draw(st.dictionaries(
        st.sampled_from(["cpu.percent", "memory.free"]),
        st.floats(-10, 10, allow_nan=False), max_size=2))
    cells = draw(st.integers(0, 3))
    return factories.compute_node_obj(
        name, vcpus=draw(st.integers(1, 16)),
        memory_mb=draw(st.sampled_from([2048, 8192, 65536])),
        disk_gb=draw(st.sampled_from([10, 100, 1000])),
        cpu_ratio=draw(st.sampled_from([1.0, 4.0])),
        ram_ratio=draw(st.sampled_from([1.0, 1.5])),
        zone=draw(st.sampled_from(ZONES)),
        cell_uuid=draw(st.sampled_from([None] + CELLS)),
        disabled=draw(st.booleans()),
        traits=draw(st.lists(st.sampled_from(TRAITS), unique=True)),
        aggregates=draw(st.lists(st.sampled_from(AGGS), unique=True,
                                 max_size=2)),
        capabilities=caps, num_instances=draw(st.integers(0, 6)),
        num_io_ops=draw(st.integers(0, 4)), stats=stats, metrics=metrics,
        numa_cells=[draw(numa_cell(i)) for i in range(cells)],
        pci_pools=draw(st.lists(pci_pool, max_size=3)),
        location=draw(st.sampled_from(LOCATIONS)))


#: where hosts are: two rows, three racks, and hosts without a rack or
#: without any location
LOCATIONS = [None, "row=a/rack=a1", "row=a/rack=a2", "row=b/rack=b1",
             "row=b"]

level_policy = st.builds(
    request_spec.GroupLevelPolicy,
    level=st.sampled_from(["row", "rack", "host"]),
    rule=st.sampled_from(["affinity", "anti-affinity", "max-per", "spread",
                          "soft-affinity", "soft-anti-affinity"]),
    limit=st.integers(1, 2), weight=st.sampled_from([0.5, 1.0]))


@st.composite
def fleet(draw):
    count = draw(st.integers(1, 10))
    nodes = [draw(host(i)) for i in range(count)]
    names = [n.host for n in nodes]
    aggs = [aggregate_obj.Aggregate(
        uuid=uuid, name="agg%d" % i,
        hosts=draw(st.lists(st.sampled_from(names), unique=True,
                            max_size=6)),
        metadata=draw(metadata()))
        for i, uuid in enumerate(AGGS) if draw(st.booleans())]
    usages = {n.host: draw(st.fixed_dictionaries({
        "VCPU": st.integers(0, 20), "MEMORY_MB": st.integers(0, 70000),
        "DISK_GB": st.integers(0, 1000)})) for n in nodes
        if draw(st.booleans())}
    ages = {n.host: 3600 for n in nodes if draw(st.integers(0, 5)) == 0}
    cache = helpers.make_cache(*nodes, ages=ages, usages=usages)
    cache.apply_aggregates(aggregates.AggregateSet(aggs))
    consumed = draw(st.lists(st.tuples(
        st.integers(0, count - 1), st.sampled_from(["VCPU", "MEMORY_MB"]),
        st.integers(1, 2048)), max_size=2))
    return cache, consumed


# -- requests -----------------------------------------------------------------

SPEC_VALUES = {
    "capabilities:hypervisor_type": ["QEMU", "s== kvm", "<or> QEMU <or> kvm"],
    "capabilities:cpu_info:features": ["<in> avx", "<all-in> avx avx2"],
    "capabilities:cpu_info:arch": ["x86_64", "ppc"],
    "hypervisor_type": ["QEMU", "kvm"],
    "ssd": ["true", "3"],
    "aggregate_instance_extra_specs:ssd": ["true", "<or> true <or> 3"],
    "aggregate_instance_extra_specs:os_distro": ["ubuntu", "s!= centos"],
    "hw:cpu_policy": ["dedicated", "shared"],
    "hw:mem_page_size": ["small", "large", "any", "2048", "2MB"],
    "hw:numa_nodes": ["1", "2"],
    "pci_passthrough:alias": ["nic:2", "gpu", "nic, gpu:2", "nic"],
    "accel:device_profile": ["dp1"],
    "hw:virtio_packed_ring": ["true", "false"],
}


@st.composite
def extra_specs(draw, vcpus):
    keys = draw(st.lists(st.sampled_from(sorted(SPEC_VALUES)), unique=True,
                         max_size=3))
    specs = {k: draw(st.sampled_from(SPEC_VALUES[k])) for k in keys}
    if int(specs.get("hw:numa_nodes", 1)) > vcpus:
        specs["hw:numa_nodes"] = "1"
    return specs


@st.composite
def request_for(draw, names):
    vcpus = draw(st.sampled_from([1, 2, 4]))
    specs = draw(extra_specs(vcpus))
    props = draw(st.dictionaries(st.sampled_from([
        "hw_architecture", "img_hv_type", "hw_vm_mode",
        "img_hv_requested_version", "os_distro", "disk_format",
        "hw_disk_bus"]), st.sampled_from([
            "x86_64", "i386", "qemu", "hvm", ">=6.0", ">= 2.0,<8", "ubuntu",
            "centos", "qcow2", "virtio"]), max_size=3))
    group = None
    policy = draw(st.sampled_from([None, "affinity", "anti-affinity",
                                   "soft-affinity", "soft-anti-affinity"]))
    placed = {}
    if policy:
        placed = draw(st.dictionaries(st.sampled_from(names),
                                      st.integers(1, 3), max_size=3))
        rules = ({"max_server_per_host": "2"}
                 if policy == "anti-affinity" and draw(st.booleans())
                 else {})
        group = request_spec.InstanceGroup(
            uuid=GROUP, policy=policy, rules=rules,
            level_policies=draw(st.lists(
                level_policy, max_size=2,
                unique_by=lambda p: (p.level, p.rule))))
    hints = {}
    if draw(st.booleans()):
        hints["query"] = [draw(st.sampled_from(QUERIES))]
    if draw(st.booleans()):
        hints[draw(st.sampled_from(["same_host", "different_host"]))] = [
            VM[n] for n in draw(st.lists(st.sampled_from(names),
                                         max_size=2))] or [VM["h0"]]
    if draw(st.booleans()):
        hints["allow_cross_cell_move"] = ["true"]
    if draw(st.booleans()):
        near, cidr = draw(st.sampled_from(
            [("10.0.1.1", "/24"), ("10.0.1.1", "/16"), ("fd00::1", "/64")]))
        hints["build_near_host_ip"], hints["cidr"] = [near], [cidr]
    destination = (request_spec.Destination(
        cell_uuid=draw(st.sampled_from(CELLS)))
        if draw(st.booleans()) else None)
    return helpers.make_request(
        factories.flavor(
            name=draw(st.sampled_from(["m1.small", "m1.big"])),
            vcpus=vcpus, memory_mb=vcpus * 1024,
            root_gb=draw(st.sampled_from([1, 20])), extra_specs=specs),
        lookup=helpers.FakeLookup(group_hosts={GROUP: placed},
                                  consumer_hosts={v: h for h, v in
                                                  VM.items()}),
        image=request_spec.ImageMeta(
            id=draw(st.sampled_from(["img-iso", "img-1"])), properties=props)
        if draw(st.booleans()) or props else None,
        availability_zone=draw(st.sampled_from(ZONES)),
        project_id=draw(st.sampled_from(["p1", "p2", None])),
        instance_group=group, scheduler_hints=hints,
        requested_destination=destination)


def _view(cache, consumed):
    view = cache.view(helpers.SERVICE_DOWN_TIME)
    for row, rc, amount in consumed:
        view.consume(row, {rc: amount})
    return view


@st.composite
def scenario(draw):
    cache, consumed = draw(fleet())
    names = list(cache.table.hosts[:cache.table.n])
    view, request = _view(cache, consumed), draw(request_for(names))
    if request.instance_group is not None:
        request.instance_group.places = view     # as a CycleState does
    return view, request


SETTINGS = settings(max_examples=250, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenario())
def test_every_filter_agrees_on_every_row(case):
    _configure(CONF)
    view, request = case
    for flt in FILTERS:
        if not flt.applies(request):
            continue
        columns = flt.passes_columns(view, request)
        per_host = [bool(flt.host_passes(view.record(r), request))
                    for r in range(view.n)]
        if columns is not None:
            assert [bool(v) for v in columns] == per_host, flt.name


@SETTINGS
@given(scenario())
def test_every_weigher_agrees_on_every_row(case):
    _configure(CONF)
    view, request = case
    rows = np.arange(view.n)
    records = [view.record(r) for r in rows]
    for weigher in WEIGHERS:
        columns = weigher.weigh_columns(view, request, rows)
        per_host = [weigher.weigh_host(h, request) for h in records]
        if columns is not None:
            assert np.allclose(columns, per_host), weigher.name
        multiplier = np.broadcast_to(weigher.multiplier(view, rows),
                                     len(rows))
        assert np.allclose(multiplier, [weigher.host_multiplier(h)
                                        for h in records]), weigher.name


@SETTINGS
@given(scenario())
def test_both_runners_give_the_same_decision(case):
    _configure(CONF)
    view, request = case
    mask = np.ones(view.n, dtype=bool)
    fast = filters.FilterRunner(FILTERS).run(view, request, mask)
    slow = filters.FilterRunner(FILTERS, vectorised=False).run(
        view, request, mask)
    assert list(fast.mask) == list(slow.mask)
    assert fast.removed == slow.removed
    rows = np.flatnonzero(fast.mask)
    totals, parts = weighers.WeigherRunner(WEIGHERS).run(view, request, rows)
    totals2, parts2 = weighers.WeigherRunner(
        WEIGHERS, vectorised=False).run(view, request, rows)
    assert np.allclose(totals, totals2)
    assert set(parts) == set(parts2)
    for name in parts:
        assert np.allclose(parts[name], parts2[name]), name
    # what the scheduler itself runs: the same totals, and for the
    # candidates only (every row weighed when most are candidates)
    weighing = weighers.WeigherRunner(WEIGHERS).weigh(view, request,
                                                      fast.mask)
    assert list(weighing.rows) == list(rows)
    assert np.allclose(weighing.totals, totals2)
    if weighing.full is not None:
        assert np.all(weighing.full[~fast.mask] == -np.inf)
        for i, row in enumerate(rows):
            assert np.isclose(weighing.weight(row), totals2[i])


def test_every_built_in_plugin_is_covered():
    assert len(FILTERS) == 28 and len(WEIGHERS) == 21
    # the queries above include ones only the per-host path can evaluate
    assert any('"not"' in q for q in QUERIES)
    assert json.loads(QUERIES[0])[0] == ">="


@pytest.mark.parametrize("query, vectorised", [
    (QUERIES[0], True), (QUERIES[1], True), (QUERIES[2], True),
    (QUERIES[3], False), (QUERIES[4], False), (QUERIES[5], False),
])
def test_json_filter_uses_columns_for_numeric_queries(query, vectorised):
    view = helpers.make_view(helpers.node("h0"), helpers.node("h1"))
    request = helpers.make_request(scheduler_hints={"query": [query]})
    flt = next(f for f in FILTERS if f.name == "JsonFilter")
    assert (flt.passes_columns(view, request) is not None) is vectorised
