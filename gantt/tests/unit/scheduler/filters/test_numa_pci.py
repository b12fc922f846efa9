"""NUMA topology and PCI passthrough: guest topologies from hw: specs, and
whether they fit host cells and device pools (Nova's hardware.py and
PciDeviceStats rules)."""

import pytest

from gantt import exception
from gantt.objects import numa as numa_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline.filters import numa_topology
from gantt.scheduler.pipeline.filters import pci_passthrough
from gantt.scheduler.state import numa
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

GiB_4K_PAGES = 262144   # 1 GiB of 4 KiB pages


def _flavor(vcpus=4, memory_mb=4096, **specs):
    return factories.flavor(vcpus=vcpus, memory_mb=memory_mb,
                            extra_specs=specs)


# -- guest topologies----------------------------------------------------------

@pytest.mark.parametrize("specs, image, cells, dedicated, page", [
    ({}, {}, None, None, None),
    ({"hw:numa_nodes": "2"}, {}, ((2, 2048), (2, 2048)), False, None),
    ({"hw:cpu_policy": "dedicated"}, {}, ((4, 4096),), True, None),
    ({"hw:mem_page_size": "large"}, {}, ((4, 4096),), False, "large"),
    ({"hw:mem_page_size": "2MB"}, {}, ((4, 4096),), False, 2048),
    ({"hw:mem_page_size": "1GB"}, {}, ((4, 4096),), False, 1048576),
    ({"hw:mem_page_size": "2048"}, {}, ((4, 4096),), False, 2048),
    # the image may ask when the flavor does not; the flavor wins
    ({}, {"hw_numa_nodes": "2", "hw_cpu_policy": "dedicated"},
     ((2, 2048), (2, 2048)), True, None),
    # a flavor's dedicated wins over the image's shared (the other way
    # round is an error: test_cpu_policy_sources in test_cpu_pinning.py)
    ({"hw:cpu_policy": "dedicated"}, {"hw_cpu_policy": "shared"},
     ((4, 4096),), True, None),
    # explicit, asymmetric cells
    ({"hw:numa_nodes": "2", "hw:numa_cpus.0": "0", "hw:numa_cpus.1": "1-3",
      "hw:numa_mem.0": "1024", "hw:numa_mem.1": "3072"}, {},
     ((1, 1024), (3, 3072)), False, None),
])
def test_guest_topology(specs, image, cells, dedicated, page):
    topology = numa.guest_topology(_flavor(**specs), image)
    if cells is None:
        assert topology is None
        return
    assert [(c.cpus, c.memory_mb) for c in topology.cells] == list(cells)
    assert (topology.dedicated, topology.page_size) == (dedicated, page)


@pytest.mark.parametrize("specs", [
    {"hw:numa_nodes": "3"},                       # 4 vCPUs over 3 cells
    {"hw:numa_nodes": "8"},                       # more cells than vCPUs
    {"hw:numa_nodes": "0"},
    {"hw:cpu_policy": "mixed"},
    {"hw:mem_page_size": "huge"},
    {"hw:numa_nodes": "2", "hw:numa_cpus.0": "0-1", "hw:numa_mem.0": "2048"},
    {"hw:numa_nodes": "2", "hw:numa_cpus.0": "0-2", "hw:numa_cpus.1": "2-3",
     "hw:numa_mem.0": "2048", "hw:numa_mem.1": "2048"},
])
def test_guest_topologies_nova_refuses(specs):
    with pytest.raises(exception.InvalidRequest):
        numa.guest_topology(_flavor(**specs), {})
    with pytest.raises(exception.InvalidRequest):
        helpers.make_request(_flavor(**specs))


# -- fitting-------------------------------------------------------------------

def _cell(cell_id, cpus=4, pcpus=0, pinned=0, cpu_usage=0, memory=4096,
          memory_usage=0, pages=()):
    pcpuset = list(range(100, 100 + pcpus))
    return numa_obj.NUMACell(
        id=cell_id, cpuset=list(range(cpus)), pcpuset=pcpuset,
        pinned_cpus=pcpuset[:pinned], cpu_usage=cpu_usage, memory_mb=memory,
        memory_usage_mb=memory_usage,
        mempages=[numa_obj.NUMAPagePool(size_kb=s, total=t, used=u)
                  for s, t, u in pages])


HOSTS = {
    # two cells of 4 CPUs / 4 GiB, shared only
    "shared": [_cell(0), _cell(1)],
    # dedicated CPUs: 4 + 2 free (one of cell 1's 3 is pinned)
    "pinned": [_cell(0, pcpus=4), _cell(1, pcpus=3, pinned=1)],
    # huge pages: cell 0 has 2 GiB of free 2M pages, cell 1 1 GiB pages
    "huge": [_cell(0, pages=[(4, GiB_4K_PAGES, 0), (2048, 1536, 512)]),
             _cell(1, pages=[(4, GiB_4K_PAGES, 0), (1048576, 4, 0)])],
    # busy: cell 0 nearly full
    "busy": [_cell(0, cpu_usage=14, memory_usage=3500), _cell(1, cpus=1)],
    "flat": [],
}


def _numa_view(cpu_ratio=4.0, ram_ratio=1.0):
    return helpers.make_view(*[
        helpers.node(name, numa_cells=cells, cpu_ratio=cpu_ratio,
                     ram_ratio=ram_ratio)
        for name, cells in HOSTS.items()])


@pytest.mark.parametrize("flavor, expected", [
    # one cell of 4 shared vCPUs and 4 GiB: any host with such a cell
    (_flavor(**{"hw:numa_nodes": "1"}), [True, True, True, False, False]),
    # 8 vCPUs in one cell: no cell has 8 CPUs (no overcommit within a guest
    # cell against its host cell)
    (_flavor(8, 4096, **{"hw:numa_nodes": "1"}),
     [False, False, False, False, False]),
    # 8 vCPUs over two cells
    (_flavor(8, 8192, **{"hw:numa_nodes": "2"}),
     [True, True, True, False, False]),
    # dedicated: 4 pinned CPUs in one cell, only "pinned" cell 0 has them
    (_flavor(**{"hw:cpu_policy": "dedicated"}),
     [False, True, False, False, False]),
    # dedicated over two cells of 2: cell 1 has 2 free of 3
    (_flavor(**{"hw:cpu_policy": "dedicated", "hw:numa_nodes": "2"}),
     [False, True, False, False, False]),
    (_flavor(6, 4096, **{"hw:cpu_policy": "dedicated",
                         "hw:numa_nodes": "2"}),
     [False, False, False, False, False]),
    # large pages: 2 GiB fits cell 0's 2M pages or cell 1's 1G pages
    (_flavor(2, 2048, **{"hw:mem_page_size": "large"}),
     [False, False, True, False, False]),
    # 4 GiB of large pages: only the 1G pool of cell 1 has room
    (_flavor(2, 4096, **{"hw:mem_page_size": "large"}),
     [False, False, True, False, False]),
    # 2 MiB pages specifically: cell 0 has 2 GiB of them
    (_flavor(2, 3072, **{"hw:mem_page_size": "2MB"}),
     [False, False, False, False, False]),
    (_flavor(2, 2048, **{"hw:mem_page_size": "2048"}),
     [False, False, True, False, False]),
    # small pages: the smallest pool (4K), 1 GiB free per cell
    (_flavor(2, 1024, **{"hw:mem_page_size": "small"}),
     [False, False, True, False, False]),
    (_flavor(2, 2048, **{"hw:mem_page_size": "small"}),
     [False, False, False, False, False]),
    # asymmetric cells: 1 vCPU/3 GiB and 3 vCPUs/1 GiB
    (_flavor(**{"hw:numa_nodes": "2", "hw:numa_cpus.0": "0",
                "hw:numa_cpus.1": "1-3", "hw:numa_mem.0": "3072",
                "hw:numa_mem.1": "1024"}),
     [True, True, True, False, False]),
])
def test_numa_topology_filter(conf, flavor, expected):
    request = helpers.make_request(flavor)
    flt = numa_topology.NUMATopologyFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _numa_view(), request, expected)


def test_numa_shared_cpus_follow_the_vcpu_allocation_ratio(conf):
    # "busy" cell 0 runs 14 shared vCPUs on 4 CPUs: with ratio 4 (16) two
    # more fit, with ratio 1 none (and its cell 1 has a single CPU)
    request = helpers.make_request(_flavor(2, 256,
                                           **{"hw:numa_nodes": "1"}))
    flt = numa_topology.NUMATopologyFilter(conf)
    helpers.assert_both_paths(flt, _numa_view(4.0), request,
                              [True, True, True, True, False])
    helpers.assert_both_paths(flt, _numa_view(1.0), request,
                              [True, True, True, False, False])


def test_instances_of_one_request_count_on_both_ratios(conf):
    # one cell of 4 CPUs and 4 GiB, overcommitted 4x in CPU and 1.5x in
    # RAM (16 vCPUs, 6 GiB): two guests of 4 vCPUs and 3 GiB fit, once
    # the first is counted, and a third does not
    view = helpers.make_view(helpers.node(
        "h1", numa_cells=[_cell(0)], cpu_ratio=4.0, ram_ratio=1.5))
    request = helpers.make_request(_flavor(4, 3072,
                                           **{"hw:numa_nodes": "1"}),
                                   instance_uuids=factories.uuids(3))
    flt = numa_topology.NUMATopologyFilter(conf)
    request.ledger.take(request, view, 0)
    helpers.assert_both_paths(flt, view, request, [True])
    request.ledger.take(request, view, 0)
    helpers.assert_both_paths(flt, view, request, [False])


def test_requests_without_topology_skip_the_filter(conf):
    flt = numa_topology.NUMATopologyFilter(conf)
    assert not flt.applies(helpers.make_request())


# -- PCI-----------------------------------------------------------------------

ALIASES = [
    '{"name": "nic", "vendor_id": "8086", "product_id": "154D", '
    '"device_type": "type-PF"}',
    '{"name": "gpu", "vendor_id": "10de", "product_id": "1db4"}',
    '{"name": "gpu", "vendor_id": "10de", "product_id": "20b0"}',
    '{"name": "vf", "vendor_id": "15b3", "physical_network": "physnet1"}',
]


def _pool(vendor, product, count, numa_node=None, **tags):
    return pci_obj.PciDevicePool(vendor_id=vendor, product_id=product,
                                 count=count, numa_node=numa_node, tags=tags)


def _pci_view():
    return helpers.make_view(
        helpers.node("nics", pci_pools=[
            _pool("8086", "154d", 2, 0, dev_type="type-PF"),
            _pool("8086", "154d", 1, 1, dev_type="type-PF")]),
        helpers.node("gpus", pci_pools=[_pool("10de", "1db4", 1),
                                        _pool("10de", "20b0", 2)]),
        helpers.node("vfs", pci_pools=[
            _pool("15b3", "1018", 4, physical_network="physnet1"),
            _pool("15b3", "1018", 4, physical_network="physnet2")]),
        helpers.node("vf-not-pf", pci_pools=[
            _pool("8086", "154d", 4, dev_type="type-VF")]),
        helpers.node("none"))


@pytest.mark.parametrize("alias, expected", [
    ("nic", [True, False, False, False, False]),
    # pools of one kind on several NUMA nodes add up
    ("nic:3", [True, False, False, False, False]),
    ("nic:4", [False, False, False, False, False]),
    # an alias with two specs takes from either
    ("gpu:3", [False, True, False, False, False]),
    ("gpu:4", [False, False, False, False, False]),
    # tags must match (physical_network)
    ("vf:4", [False, False, True, False, False]),
    ("vf:5", [False, False, False, False, False]),
    # several aliases, each from what the previous left
    ("nic:1, gpu:1", [False, False, False, False, False]),
    ("gpu:1,gpu:2", [False, True, False, False, False]),
])
def test_pci_passthrough(conf, alias, expected):
    conf.set_override("alias", ALIASES, "pci")
    request = helpers.make_request(factories.flavor(
        extra_specs={"pci_passthrough:alias": alias}))
    flt = pci_passthrough.PciPassthroughFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _pci_view(), request, expected)


@pytest.mark.parametrize("alias", ["unknown", "nic:0", "nic:x"])
def test_bad_pci_requests_are_invalid(conf, alias):
    conf.set_override("alias", ALIASES, "pci")
    request = helpers.make_request(factories.flavor(
        extra_specs={"pci_passthrough:alias": alias}))
    with pytest.raises(exception.InvalidRequest):
        pci_passthrough.PciPassthroughFilter(conf).applies(request)


def test_requests_without_pci_skip_the_filter(conf):
    request = helpers.make_request(image=request_spec.ImageMeta())
    assert not pci_passthrough.PciPassthroughFilter(conf).applies(request)


@pytest.mark.parametrize("alias", ["not json", '{"vendor_id": "8086"}'])
def test_a_bad_alias_stops_the_service_at_start_up(conf, alias):
    conf.set_override("alias", [alias], "pci")
    with pytest.raises(exception.ConfigurationError):
        pci_passthrough.PciPassthroughFilter(conf)
