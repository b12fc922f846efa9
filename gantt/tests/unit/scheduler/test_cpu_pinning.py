"""CPU pinning as Nova does it: PCPU requests, mixed and emulator threads
policies, thread policies on SMT hosts, and what one instance of a request
leaves for the next (NUMA cells, pages, PCI devices).

Each table row is a behaviour Nova documents (flavor extra specs and
image properties reference, "CPU topologies" admin guide) or implements in
``nova/scheduler/utils.py`` (``ResourceRequest``) and
``nova/virt/hardware.py``.
"""

import pytest

from gantt import exception
from gantt.objects import base as objects_base
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa as numa_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.scheduler import placer as placer_mod
from gantt.scheduler.pipeline.filters import numa_topology
from gantt.scheduler.pipeline.filters import pci_passthrough
from gantt.scheduler.state import numa
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

HT = "HW_CPU_HYPERTHREADING"
PAIRS = [[0, 4], [1, 5], [2, 6], [3, 7]]      # 4 cores x 2 threads


def _flavor(vcpus=4, memory_mb=4096, **specs):
    return factories.flavor(vcpus=vcpus, memory_mb=memory_mb,
                            extra_specs=specs)


def _request(flavor, image=None):
    return helpers.make_request(
        flavor, image=request_spec.ImageMeta(properties=image)
        if image else None)


def _unsuffixed(request):
    [group] = [g for g in request.groups if g.suffix == ""]
    return group


# -- flavor and image -> resources and traits ---------------------------------


@pytest.mark.parametrize("specs, image, resources, required, forbidden", [
    # dedicated: PCPU instead of VCPU (Nova since Train); no VCPU fallback
    ({"hw:cpu_policy": "dedicated"}, {}, {"PCPU": 4}, set(), set()),
    ({}, {"hw_cpu_policy": "dedicated"}, {"PCPU": 4}, set(), set()),
    ({"hw:cpu_policy": "shared"}, {}, {"VCPU": 4}, set(), set()),
    ({}, {}, {"VCPU": 4}, set(), set()),
    # mixed: the dedicated mask's vCPUs are PCPU, the others VCPU
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-1"}, {},
     {"VCPU": 2, "PCPU": 2}, set(), set()),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0"}, {},
     {"VCPU": 1, "PCPU": 3}, set(), set()),
    # ... or, with hw:cpu_realtime, the realtime mask's
    ({"hw:cpu_policy": "mixed", "hw:cpu_realtime": "yes",
      "hw:cpu_realtime_mask": "^0-2"}, {}, {"VCPU": 3, "PCPU": 1},
     set(), set()),
    ({"hw:cpu_policy": "mixed", "hw:cpu_realtime": "yes"},
     {"hw_cpu_realtime_mask": "^0"}, {"VCPU": 1, "PCPU": 3}, set(), set()),
    # emulator threads isolated: one more PCPU
    ({"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate"},
     {}, {"PCPU": 5}, set(), set()),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0",
      "hw:emulator_threads_policy": "isolate"}, {},
     {"VCPU": 3, "PCPU": 2}, set(), set()),
    ({"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "share"},
     {}, {"PCPU": 4}, set(), set()),
    # thread policies also ask for hosts without / with SMT
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"}, {},
     {"PCPU": 4}, set(), {HT}),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require"}, {},
     {"PCPU": 4}, {HT}, set()),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "prefer"}, {},
     {"PCPU": 4}, set(), set()),
    ({"hw:cpu_policy": "dedicated"}, {"hw_cpu_thread_policy": "require"},
     {"PCPU": 4}, {HT}, set()),
    # a flavor's prefer lets the image choose
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "prefer"},
     {"hw_cpu_thread_policy": "isolate"}, {"PCPU": 4}, set(), {HT}),
    # the trait itself stands for the thread policy
    ({"hw:cpu_policy": "dedicated", "trait:%s" % HT: "forbidden"}, {},
     {"PCPU": 4}, set(), {HT}),
    # explicit resources: PCPU means dedicated, and no VCPU is added
    ({"resources:PCPU": "4"}, {}, {"PCPU": 4}, set(), set()),
    ({"resources:PCPU": "5", "hw:emulator_threads_policy": "isolate"}, {},
     {"PCPU": 5}, set(), set()),
    ({"resources:VCPU": "2"}, {}, {"VCPU": 2}, set(), set()),
    # a flavor's dedicated wins over an image's shared
    ({"hw:cpu_policy": "dedicated"}, {"hw_cpu_policy": "shared"},
     {"PCPU": 4}, set(), set()),
])
def test_cpu_policy_becomes_resources(specs, image, resources, required,
                                      forbidden):
    request = _request(_flavor(**specs), image)
    group = _unsuffixed(request)
    assert group.resources == dict(resources, MEMORY_MB=4096, DISK_GB=20)
    assert group.required_traits == required
    assert group.forbidden_traits == forbidden


def test_pcpu_in_a_numbered_group_replaces_the_flavors_vcpu():
    # Nova adds the flavor's VCPU only when no group names VCPU or PCPU
    request = _request(_flavor(**{"resources1:PCPU": "4"}))
    assert _unsuffixed(request).resources == {"MEMORY_MB": 4096,
                                              "DISK_GB": 20}
    assert request.resources["PCPU"] == 4 and "VCPU" not in request.resources
    assert request.numa.dedicated


@pytest.mark.parametrize("specs, image, cells, policy, thread", [
    # (vCPUs, pinned, emulator pCPUs) per guest cell
    ({"hw:cpu_policy": "dedicated"}, {}, [(4, 4, 0)], "dedicated", None),
    ({"resources:PCPU": "4"}, {}, [(4, 4, 0)], "dedicated", None),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0",
      "hw:numa_nodes": "2"}, {}, [(2, 1, 0), (2, 2, 0)], "mixed", None),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "1,3",
      "hw:numa_nodes": "2"}, {}, [(2, 1, 0), (2, 1, 0)], "mixed", None),
    # emulator threads go with guest cell 0
    ({"hw:cpu_policy": "dedicated", "hw:numa_nodes": "2",
      "hw:emulator_threads_policy": "isolate"}, {},
     [(2, 2, 1), (2, 2, 0)], "dedicated", None),
    ({"hw:cpu_policy": "dedicated", "trait:%s" % HT: "required"}, {},
     [(4, 4, 0)], "dedicated", "require"),
    ({}, {"hw_cpu_policy": "dedicated", "hw_cpu_thread_policy": "isolate"},
     [(4, 4, 0)], "dedicated", "isolate"),
    # resources:VCPU means shared: no topology of its own
    ({"resources:VCPU": "4"}, {}, None, None, None),
])
def test_guest_cells(specs, image, cells, policy, thread):
    topology = _request(_flavor(**specs), image).numa
    if cells is None:
        assert topology is None
        return
    assert [(c.cpus, c.pinned, c.reserved) for c in topology.cells] == cells
    assert (topology.cpu_policy, topology.thread_policy) == (policy, thread)


@pytest.mark.parametrize("specs, image, named", [
    ({"hw:cpu_policy": "pinned"}, {}, "'pinned'"),
    ({}, {"hw_cpu_policy": "Dedicated"}, "'Dedicated'"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "sometimes"},
     {}, "'sometimes'"),
    ({"hw:cpu_policy": "dedicated"}, {"hw_cpu_thread_policy": "never"},
     "'never'"),
    ({"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "own"},
     {}, "'own'"),
    # explicit VCPU/PCPU and a CPU policy: Nova's "use one or the other"
    ({"hw:cpu_policy": "dedicated", "resources:VCPU": "4"}, {},
     "resources:VCPU"),
    ({"hw:cpu_policy": "shared", "resources:PCPU": "4"}, {},
     "resources:PCPU"),
    ({"resources:VCPU": "4"}, {"hw_cpu_policy": "dedicated"},
     "resources:VCPU"),
    ({"resources:VCPU": "2", "resources:PCPU": "2"}, {},
     "resources:VCPU=2 and resources:PCPU=2"),
    ({"resources:PCPU": "3"}, {}, "resources:PCPU=3"),
    ({"resources:PCPU": "4", "hw:emulator_threads_policy": "isolate"}, {},
     "resources:PCPU=4"),
    # images may not ask for more pinning than the flavor allows
    ({"hw:cpu_policy": "shared"}, {"hw_cpu_policy": "dedicated"},
     "hw_cpu_policy=dedicated"),
    ({"hw:cpu_policy": "shared"}, {"hw_cpu_policy": "mixed"},
     "hw_cpu_policy=mixed"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0"},
     {"hw_cpu_policy": "dedicated"}, "hw_cpu_policy=dedicated"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"},
     {"hw_cpu_thread_policy": "require"}, "hw_cpu_thread_policy=require"),
    # thread and emulator policies, masks and realtime need pinning
    ({"hw:cpu_thread_policy": "prefer"}, {}, "prefer"),
    ({"trait:%s" % HT: "required"}, {}, "require"),
    ({"hw:emulator_threads_policy": "isolate"}, {},
     "hw:emulator_threads_policy=isolate"),
    ({"hw:cpu_dedicated_mask": "0"}, {}, "hw:cpu_dedicated_mask"),
    ({"hw:cpu_realtime": "yes", "hw:cpu_realtime_mask": "^0"}, {},
     "hw:cpu_realtime"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_dedicated_mask": "0"}, {},
     "hw:cpu_dedicated_mask"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require",
      "trait:%s" % HT: "required"}, {}, "trait:%s" % HT),
    # mixed: a mask that leaves both kinds, within the flavor's vCPUs
    ({"hw:cpu_policy": "mixed"}, {}, "hw:cpu_dedicated_mask"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "2-5"}, {},
     "'2-5' names vCPU(s) 4,5"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-3"}, {},
     "'0-3'"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0-3"}, {},
     "'^0-3'"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "x-1"}, {},
     "'x-1'"),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0",
      "hw:cpu_realtime": "yes", "hw:cpu_realtime_mask": "^0"}, {},
     "not both"),
    # realtime: some vCPU must be left for the emulator threads
    ({"hw:cpu_policy": "dedicated", "hw:cpu_realtime": "yes"}, {},
     "emulator"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_realtime": "yes",
      "hw:cpu_realtime_mask": "4-5"}, {}, "'4-5'"),
])
def test_cpu_specs_nova_refuses(specs, image, named):
    with pytest.raises(exception.InvalidRequest) as err:
        _request(_flavor(**specs), image)
    assert named in str(err.value)


# -- fitting ------------------------------------------------------------------


def _cell(cell_id=0, pcpus=range(8), cpus=range(8, 12), pinned=(),
          siblings=(), memory=8192, memory_usage=0, pages=()):
    return numa_obj.NUMACell(
        id=cell_id, cpuset=list(cpus), pcpuset=list(pcpus),
        pinned_cpus=list(pinned), memory_mb=memory,
        memory_usage_mb=memory_usage, siblings=[list(s) for s in siblings],
        mempages=[numa_obj.NUMAPagePool(size_kb=s, total=t)
                  for s, t in pages])


HOSTS = {
    # 4 cores x 2 threads dedicated, 4 shared CPUs (cpu_dedicated_set)
    "smt": [_cell(siblings=PAIRS)],
    # three threads of three cores pinned: one whole core left
    "smt-busy": [_cell(siblings=PAIRS, pinned=[0, 1, 2])],
    # no siblings reported: each CPU is its own core (no SMT); 1 shared
    "no-smt": [_cell(cpus=[8])],
    # shared and dedicated are one set (legacy vcpu_pin_set)
    "legacy": [_cell(cpus=range(8), siblings=PAIRS)],
    "legacy-busy": [_cell(cpus=range(8), siblings=PAIRS, pinned=[0])],
    "flat": [],
}


def _view():
    return helpers.make_view(*[helpers.node(name, numa_cells=cells)
                               for name, cells in HOSTS.items()])


def _pinned(vcpus, **specs):
    return _flavor(vcpus, 1024, **dict({"hw:cpu_policy": "dedicated"},
                                       **specs))


@pytest.mark.parametrize("flavor, expected", [
    # smt, smt-busy, no-smt, legacy, legacy-busy, flat
    (_pinned(4), [True, True, True, True, True, False]),
    (_pinned(6), [True, False, True, True, True, False]),
    # prefer takes any free pCPUs when siblings are short
    (_pinned(5, **{"hw:cpu_thread_policy": "prefer"}),
     [True, True, True, True, True, False]),
    # require: sibling threads only; never without SMT
    (_pinned(4, **{"hw:cpu_thread_policy": "require"}),
     [True, False, False, True, True, False]),
    (_pinned(2, **{"hw:cpu_thread_policy": "require"}),
     [True, True, False, True, True, False]),
    (_pinned(8, **{"hw:cpu_thread_policy": "require"}),
     [True, False, False, True, False, False]),
    # isolate: a whole free core per vCPU; with SMT only on legacy cells
    # (Nova bug #1889633); without SMT it is plain pinning
    (_pinned(2, **{"hw:cpu_thread_policy": "isolate"}),
     [False, False, True, True, True, False]),
    (_pinned(4, **{"hw:cpu_thread_policy": "isolate"}),
     [False, False, True, True, False, False]),
    (_pinned(8, **{"hw:cpu_thread_policy": "isolate"}),
     [False, False, True, False, False, False]),
    # emulator threads: one pCPU more, on another core with isolate
    (_pinned(7, **{"hw:emulator_threads_policy": "isolate"}),
     [True, False, True, True, False, False]),
    (_pinned(3, **{"hw:cpu_thread_policy": "isolate",
                   "hw:emulator_threads_policy": "isolate"}),
     [False, False, True, True, True, False]),
    (_pinned(4, **{"hw:cpu_thread_policy": "isolate",
                   "hw:emulator_threads_policy": "isolate"}),
     [False, False, True, False, False, False]),
    # mixed: 2 shared vCPUs need 2 CPUs of cpuset (no-smt has 1)
    (_flavor(4, 1024, **{"hw:cpu_policy": "mixed",
                         "hw:cpu_dedicated_mask": "0-1"}),
     [True, True, False, True, True, False]),
    (_flavor(8, 1024, **{"hw:cpu_policy": "mixed",
                         "hw:cpu_dedicated_mask": "^0-1"}),
     [True, False, False, True, True, False]),
    (_flavor(4, 1024, **{"hw:cpu_policy": "mixed",
                         "hw:cpu_dedicated_mask": "0-1",
                         "hw:cpu_thread_policy": "require"}),
     [True, True, False, True, True, False]),
])
def test_thread_policies_and_mixed(conf, flavor, expected):
    request = helpers.make_request(flavor)
    flt = numa_topology.NUMATopologyFilter(conf)
    helpers.assert_both_paths(flt, _view(), request, expected)


def test_pinned_memory_is_not_overcommitted(conf):
    # Nova: "oversubscription is not possible with pinned instances"
    view = helpers.make_view(helpers.node("h", ram_ratio=1.5, numa_cells=[
        _cell(memory=4096, memory_usage=2048)]))
    flt = numa_topology.NUMATopologyFilter(conf)
    shared = helpers.make_request(_flavor(2, 3072, **{"hw:numa_nodes": "1"}))
    helpers.assert_both_paths(flt, view, shared, [True])
    pinned = helpers.make_request(_flavor(2, 3072,
                                          **{"hw:cpu_policy": "dedicated"}))
    helpers.assert_both_paths(flt, view, pinned, [False])


def _host_cell(name):
    return numa.HostCell.from_obj(HOSTS[name][0])


@pytest.mark.parametrize("host, count, reserved, policy, pcpus", [
    # prefer packs onto sibling threads, the most per core first
    ("smt", 2, 0, None, {0, 4}),
    ("smt", 3, 0, "prefer", {0, 4, 1}),
    ("smt", 2, 1, None, {0, 4, 1}),
    # not enough siblings: any free pCPUs, one thread per core first
    ("smt-busy", 4, 0, "prefer", {3, 4, 5, 6}),
    ("smt-busy", 2, 0, "require", {3, 7}),
    ("no-smt", 3, 0, "prefer", {0, 1, 2}),
    # isolate takes whole cores (the emulator pCPU's too)
    ("legacy", 2, 0, "isolate", {0, 4, 1, 5}),
    # (the emulator pCPU comes from the first other core with a free
    # thread, here the busy core of pCPU 0)
    ("legacy-busy", 1, 1, "isolate", {1, 5, 0, 4}),
    ("legacy-busy", 3, 1, "isolate", set(range(8))),
    ("no-smt", 2, 0, "isolate", {0, 1}),
    # what does not fit
    ("smt", 2, 0, "isolate", None),
    ("no-smt", 1, 0, "require", None),
    ("smt-busy", 5, 1, None, None),
])
def test_which_pcpus_an_instance_takes(host, count, reserved, policy,
                                       pcpus):
    taken = numa.pin(_host_cell(host), count, reserved, policy)
    assert taken == (None if pcpus is None else frozenset(pcpus))


def test_siblings_are_normalised():
    cell = numa.HostCell.from_obj(_cell(
        pcpus=[0, 1, 2, 3], cpus=[], siblings=[[0, 1], [1, 2], [9]]))
    # 1 is in its first set only, 3 (in none) and 2 are cores of their own
    assert cell.siblings == (frozenset([0, 1]), frozenset([2]),
                             frozenset([3]))
    assert cell.threads == 2
    plain = numa.HostCell.from_obj(_cell(pcpus=[0, 1], cpus=[]))
    assert (plain.siblings, plain.threads) == (
        (frozenset([0]), frozenset([1])), 1)


def test_an_old_agents_cell_has_no_siblings():
    primitive = _cell(siblings=PAIRS).obj_to_primitive(target_version="1.0")
    assert "siblings" not in primitive["gantt_object.data"]
    cell = objects_base.GanttObject.obj_from_primitive(primitive)
    assert cell.siblings == []
    assert numa.HostCell.from_obj(cell).threads == 1


# -- instances of one request -------------------------------------------------


PCI_ALIAS = ['{"name": "nic", "vendor_id": "8086", "product_id": "154d"}']


def _fill(conf, flt, view, request, rows=None):
    """Place instances of ``request`` one by one, as the scheduler does
    (first passing row each time): the rows, until none passes."""
    placed = []
    for _ in range(20):
        columns, per_host = helpers.both_paths(flt, view, request)
        assert columns == per_host
        passing = [r for r, ok in enumerate(columns)
                   if ok and (rows is None or r in rows)]
        if not passing:
            return placed
        placed.append(passing[0])
        request.record_placement(view, passing[0])
    raise AssertionError("never full")


@pytest.mark.parametrize("cells, specs, vcpus, memory, instances", [
    # 4 free pCPUs, 2 per instance
    ([_cell(pcpus=range(4))], {"hw:cpu_policy": "dedicated"}, 2, 512, 2),
    # emulator threads take one more each
    ([_cell(pcpus=range(6))], {"hw:cpu_policy": "dedicated",
                               "hw:emulator_threads_policy": "isolate"},
     2, 512, 2),
    # isolate takes the whole core: 4 cores, 1 vCPU each
    ([_cell(cpus=range(8), siblings=PAIRS)],
     {"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"},
     1, 512, 4),
    # require: pairs of siblings
    ([_cell(siblings=PAIRS)],
     {"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require"},
     2, 512, 4),
    # two cells, one guest cell each, dedicated over both
    ([_cell(0, pcpus=range(2)), _cell(1, pcpus=range(10, 12))],
     {"hw:cpu_policy": "dedicated"}, 1, 512, 4),
    # huge pages: 2 GiB of 2M pages, 1 GiB per instance
    ([_cell(pages=[(4, 262144), (2048, 1024)])],
     {"hw:mem_page_size": "large"}, 1, 1024, 2),
    # shared vCPUs within the cell (ratio 1): 4 CPUs, 2 per instance
    ([_cell(cpus=range(4))], {"hw:numa_nodes": "1"}, 2, 512, 2),
    # memory of the cell (ratio 1): 8 GiB, 3 GiB per instance
    ([_cell()], {"hw:numa_nodes": "1"}, 1, 3072, 2),
    # pinned memory: no overcommit either
    ([_cell(memory=2048)], {"hw:cpu_policy": "dedicated"}, 1, 1024, 2),
])
def test_later_instances_see_what_earlier_ones_took(conf, cells, specs,
                                                    vcpus, memory,
                                                    instances):
    view = helpers.make_view(helpers.node("h", numa_cells=cells))
    request = helpers.make_request(_flavor(vcpus, memory, **specs))
    flt = numa_topology.NUMATopologyFilter(conf)
    assert _fill(conf, flt, view, request) == [0] * instances
    # a request of its own starts from the cache again
    fresh = helpers.make_request(_flavor(vcpus, memory, **specs))
    assert helpers.both_paths(flt, view, fresh) == ([True], [True])
    # and so does one whose decisions were dropped
    request.forget_placements()
    assert helpers.both_paths(flt, view, request) == ([True], [True])


def test_instances_spread_when_a_host_is_full(conf):
    view = helpers.make_view(
        helpers.node("a", numa_cells=[_cell(pcpus=range(4))]),
        helpers.node("b", numa_cells=[_cell(pcpus=range(2))]))
    request = helpers.make_request(_pinned(2))
    flt = numa_topology.NUMATopologyFilter(conf)
    assert _fill(conf, flt, view, request) == [0, 0, 1]


def test_pci_devices_taken_by_earlier_instances(conf):
    conf.set_override("alias", PCI_ALIAS, "pci")
    view = helpers.make_view(
        helpers.node("a", pci_pools=[pci_obj.PciDevicePool(
            vendor_id="8086", product_id="154d", count=3, numa_node=0)]),
        helpers.node("b", pci_pools=[pci_obj.PciDevicePool(
            vendor_id="8086", product_id="154d", count=1, numa_node=1)]))
    request = helpers.make_request(factories.flavor(
        extra_specs={"pci_passthrough:alias": "nic:2"}))
    flt = pci_passthrough.PciPassthroughFilter(conf)
    assert flt.applies(request)
    assert _fill(conf, flt, view, request) == [0]


def test_pci_and_numa_together(conf):
    conf.set_override("alias", PCI_ALIAS, "pci")
    view = helpers.make_view(helpers.node(
        "a", numa_cells=[_cell(pcpus=range(8))],
        pci_pools=[pci_obj.PciDevicePool(vendor_id="8086",
                                         product_id="154d", count=2)]))
    request = helpers.make_request(_pinned(
        2, **{"pci_passthrough:alias": "nic"}))
    numa_flt = numa_topology.NUMATopologyFilter(conf)
    pci_flt = pci_passthrough.PciPassthroughFilter(conf)
    assert pci_flt.applies(request)
    for _ in range(2):
        assert helpers.both_paths(pci_flt, view, request) == ([True], [True])
        request.record_placement(view, 0)
    # 4 of 8 pCPUs are left, no device
    assert helpers.both_paths(numa_flt, view, request) == ([True], [True])
    assert helpers.both_paths(pci_flt, view, request) == ([False], [False])


def test_the_ledger_ignores_a_row_that_holds_another_host(conf):
    view = helpers.make_view(helpers.node("a", numa_cells=[
        _cell(pcpus=range(2))]))
    request = helpers.make_request(_pinned(2))
    request.record_placement(view, 0)
    cells = view.record(0).numa_cells
    assert request.ledger.numa_cells(0, "another-uuid", cells) == cells
    assert request.ledger.numa_cells(0, view.record(0).uuid, cells) != cells


# -- through the scheduler ---------------------------------------------------


@pytest.mark.parametrize("together", [True, False])
def test_two_pinned_instances_do_not_share_pcpus(conf, scheduler, monkeypatch,
                                                 together):
    if not together:
        monkeypatch.setattr(placer_mod.Placer,
                            "_can_claim_together",
                            staticmethod(lambda *a: False))
    pcpu = [cn_obj.Inventory(resource_class="PCPU", total=8)]
    # PCPU inventory for two instances, but one cell of 4 free pCPUs each:
    # only one 4-vCPU pinned guest fits per host
    for name in ("a", "b"):
        assert scheduler.stats.update_resource_stats(
            factories.compute_node_obj(
            name, extra_inventories=pcpu, numa_cells=[_cell(
            pcpus=range(4), cpus=[])]))
    with pytest.raises(exception.NoValidHost) as err:
        scheduler.placer.select_destinations(
            factories.request(_pinned(4)), factories.uuids(3),
            return_alternates=False)
    assert "NUMATopologyFilter" in str(err.value)
    placed = scheduler.placer.select_destinations(
        factories.request(_pinned(4)), factories.uuids(2))
    assert sorted(s[0].service_host for s in placed) == ["a", "b"]
    # the alternates are weighed once both are placed: none is left
    assert [len(s) for s in placed] == [1, 1]


def test_a_failed_batch_claim_forgets_its_decisions(conf, scheduler,
                                                    monkeypatch):
    pcpu = [cn_obj.Inventory(resource_class="PCPU", total=8)]
    for name in ("a", "b"):
        assert scheduler.stats.update_resource_stats(
            factories.compute_node_obj(
            name, extra_inventories=pcpu, numa_cells=[_cell(
            pcpus=range(4), cpus=[])]))
    real = scheduler.claims.claimer.claim_new
    calls = []

    def lose_the_race_once(claims, **kwargs):
        calls.append(len(claims))
        if len(calls) == 1:
            raise exception.ClaimConflict(provider="a", seen=1,
                                          consumer=claims[0].consumer_uuid)
        return real(claims, **kwargs)

    monkeypatch.setattr(
        scheduler.claims.claimer, "claim_new", lose_the_race_once)
    placed = scheduler.placer.select_destinations(
        factories.request(_pinned(4)), factories.uuids(2),
        return_alternates=False)
    # the one-by-one claims decide again, from what the cache says
    assert calls[0] == 2
    assert sorted(s[0].service_host for s in placed) == ["a", "b"]


def test_a_mixed_guest_node_may_have_no_dedicated_vcpu(conf):
    # Nova accepts 2 vCPUs over 2 guest nodes with vCPU 1 dedicated: node
    # 0 is all shared, node 1 all pinned (and 0-1 of 4 vCPUs the other way
    # round)
    flavor = _flavor(2, 2048, **{"hw:cpu_policy": "mixed",
                                 "hw:cpu_dedicated_mask": "^0",
                                 "hw:numa_nodes": "2"})
    request = helpers.make_request(flavor)
    assert [(c.cpus, c.pinned, c.shared) for c in request.numa.cells] == [
        (1, 0, 1), (1, 1, 0)]
    assert _unsuffixed(request).resources["PCPU"] == 1
    two_cells = [_cell(0), _cell(1, pcpus=range(12, 20),
                                 cpus=range(20, 24))]
    view = helpers.make_view(helpers.node("two", numa_cells=two_cells),
                             helpers.node("one", numa_cells=[_cell()]))
    flt = numa_topology.NUMATopologyFilter(conf)
    helpers.assert_both_paths(flt, view, request, [True, False])
    flavor = _flavor(4, 2048, **{"hw:cpu_policy": "mixed",
                                 "hw:cpu_dedicated_mask": "0-1",
                                 "hw:numa_nodes": "2"})
    assert [(c.pinned, c.shared) for c in
            helpers.make_request(flavor).numa.cells] == [(2, 0), (0, 2)]


def test_isolated_emulator_threads_need_a_pinned_vcpu_beside_them(conf):
    # Nova reserves the emulator pCPU only next to pinned vCPUs of guest
    # node 0: with that node all shared, the guest fits no host
    flavor = _flavor(2, 2048, **{"hw:cpu_policy": "mixed",
                                 "hw:cpu_dedicated_mask": "^0",
                                 "hw:numa_nodes": "2",
                                 "hw:emulator_threads_policy": "isolate"})
    request = helpers.make_request(flavor)
    assert [(c.pinned, c.reserved) for c in request.numa.cells] == [
        (0, 1), (1, 0)]
    two_cells = [_cell(0), _cell(1, pcpus=range(12, 20),
                                 cpus=range(20, 24))]
    view = helpers.make_view(helpers.node("two", numa_cells=two_cells))
    flt = numa_topology.NUMATopologyFilter(conf)
    helpers.assert_both_paths(flt, view, request, [False])
    assert numa.pin(numa.HostCell.from_obj(_cell()), 0, 1) is None
