"""The scheduler on provider trees and sharing providers (SQLite)."""

import uuid

import pytest

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.objects import selection
from gantt.tests import factories as f
from gantt.tests.functional import test_provider_trees as trees

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")

POOL_AGG = str(uuid.UUID(int=0x77))


def _held(scheduler, consumer):
    return scheduler.placer.lookup.consumer_allocations(consumer)


def test_tree_host_claims_on_the_children(scheduler):
    node = trees.tree_node("t1")
    result = scheduler.stats.report_resource_stats(node)
    assert result.applied and result.refused == {}
    consumer = str(uuid.uuid4())
    sels = scheduler.placer.select_destinations(
        trees._vm_with_vf("CUSTOM_PHYSNET_B"), [consumer])[0]
    numa1, pf1 = f.host_uuid("t1-numa1"), f.host_uuid("t1-pf1")
    want = {node.uuid: {"DISK_GB": 10},
            numa1: {"VCPU": 2, "MEMORY_MB": 2048}, pf1: {"SRIOV_NET_VF": 1}}
    assert sels[0].allocation_request.as_mapping() == want
    assert _held(scheduler, consumer) == want
    # the cache's row holds the tree's sums, usage included
    state = scheduler.operator.get_host_states(["t1"])[0]
    used = {r.resource_class: (r.total, r.used) for r in state.resources}
    assert used["VCPU"] == (16, 2) and used["SRIOV_NET_VF"] == (8, 1)


def test_tree_fills_up_then_says_why(scheduler):
    scheduler.stats.report_resource_stats(trees.tree_node("t2"))
    for _ in range(4):
        scheduler.placer.select_destinations(trees._vm_with_vf("CUSTOM_PHYSNET_A"),
                                    [str(uuid.uuid4())])
    with pytest.raises(exception.NoValidHost) as err:
        scheduler.placer.select_destinations(trees._vm_with_vf("CUSTOM_PHYSNET_A"),
                                    [str(uuid.uuid4())])
    assert "no allocation candidate in its provider tree" in str(err.value)


def test_a_restarted_worker_loads_trees_and_pools(conf, scheduler):
    scheduler.stats.report_resource_stats(trees.tree_node("t3"))
    scheduler.stats.update_provider(trees._pool_report())
    consumer = str(uuid.uuid4())
    scheduler.placer.select_destinations(trees._vm_with_vf("CUSTOM_PHYSNET_B"),
                                [consumer])
    from gantt import scheduler as scheduler_mod
    fresh = scheduler_mod.build(conf, scheduler.stats.db)
    fresh.stats.load_cache()
    index = fresh.stats.cache.table.providers
    assert len(index.tree(f.host_uuid("t3"))) == 5
    assert index.get(trees.POOL).sharing
    pf1 = index.get(f.host_uuid("t3-pf1"))
    assert pf1.usage == {"SRIOV_NET_VF": 1}


def test_pool_serves_diskless_hosts(scheduler):
    node = f.compute_node_obj("dl1", aggregates=[trees.POOL_AGG])
    node.inventories = [i for i in node.inventories
                        if i.resource_class != "DISK_GB"]
    scheduler.stats.update_resource_stats(node)
    scheduler.stats.update_provider(trees._pool_report(total=100))
    consumer = str(uuid.uuid4())
    sels = scheduler.placer.select_destinations(
        f.request(f.flavor(vcpus=1, memory_mb=512, root_gb=60)), [consumer])
    assert sels[0][0].allocation_request.as_mapping() == {
        node.uuid: {"VCPU": 1, "MEMORY_MB": 512},
        trees.POOL: {"DISK_GB": 60}}
    # 60 of 100 GB used: another 60 GB does not fit in the pool
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(
            f.request(f.flavor(vcpus=1, memory_mb=512, root_gb=60)),
            [str(uuid.uuid4())])
    found = scheduler.placer.get_allocation_candidates(
        f.request(f.flavor(vcpus=0, memory_mb=0, root_gb=40)))
    assert [c.allocation_request.as_mapping() for c in found] == [
        {trees.POOL: {"DISK_GB": 40}}]


def test_invalid_child_is_refused(scheduler):
    node = trees.tree_node("t4")
    node.child_providers[0].traits = ["NOT_A_TRAIT"]
    with pytest.raises(exception.InvalidRequest, match="NOT_A_TRAIT"):
        scheduler.stats.report_resource_stats(node)
    assert scheduler.operator.get_host_states(["t4"]) == []


def test_standalone_provider_report_is_sequence_guarded(scheduler):
    assert scheduler.stats.update_provider(
        trees._pool_report(sequence=5)).applied
    stale = scheduler.stats.update_provider(
        trees._pool_report(total=5, sequence=4))
    assert not stale.applied
    assert scheduler.stats.cache.table.providers.get(trees.POOL).capacity(
        "DISK_GB") == 1000
    assert isinstance(stale, provider.ReportResult)


def _big_misfit_and_smalls(scheduler, smalls):
    """The biggest host, weighed first, has its PHYSNET_A PF on a NUMA
    cell with one CPU (its columns, the tree's sums, cannot tell); the
    small ones have one PF on each physnet."""
    big = trees.tree_node(
        "big", physnets=("CUSTOM_PHYSNET_B", "CUSTOM_PHYSNET_A"),
        cpus_per_cell=32, mem_per_cell=262144)
    numa1 = big.child_providers[2]
    numa1.inventories = [trees._inv("VCPU", 1),
                         trees._inv("MEMORY_MB", 262144)]
    scheduler.stats.report_resource_stats(big)
    for i in range(smalls):
        scheduler.stats.report_resource_stats(trees.tree_node("small%d" % i))


def test_a_misfit_tree_gives_way_to_the_next_best(scheduler, monkeypatch):
    # the biggest host (weighed first) has no PF on PHYSNET_A; of the ten
    # smaller ones, only the solver can tell which fit
    _big_misfit_and_smalls(scheduler, 10)
    calls = _counting_solver(monkeypatch)
    sels = scheduler.placer.select_destinations(
        trees._vm_with_vf("CUSTOM_PHYSNET_A"), [str(uuid.uuid4())])[0]
    assert sels[0].service_host.startswith("small")
    # the misfit and the next best: not every tree of the fleet
    assert calls[:2] == [f.host_uuid("big"),
                         f.host_uuid(sels[0].service_host)]
    # alternates need two more (the misfit is known now): 4 of 11 trees
    assert len(calls) <= 4


def _counting_solver(monkeypatch):
    from gantt.scheduler.pipeline import allocation_candidates as ac
    calls = []
    real = ac.first_candidate

    def counting(source, query, root):
        calls.append(root)
        return real(source, query, root)

    monkeypatch.setattr(ac, "first_candidate", counting)
    return calls


def test_a_misfit_tree_is_solved_again_only_once_it_changed(scheduler,
                                                            monkeypatch):
    big = f.host_uuid("big")
    _big_misfit_and_smalls(scheduler, 3)
    calls = _counting_solver(monkeypatch)
    wants_a = trees._vm_with_vf("CUSTOM_PHYSNET_A")
    scheduler.placer.select_destinations(wants_a, [str(uuid.uuid4())])
    assert calls.count(big) == 1
    # the same shape again: the misfit is known, not solved
    del calls[:]
    sels = scheduler.placer.select_destinations(
        wants_a, [str(uuid.uuid4())])[0]
    assert big not in calls and sels[0].service_host.startswith("small")
    # another shape is solved on its own account (and fits on big)
    wants_b = trees._vm_with_vf("CUSTOM_PHYSNET_B")
    assert scheduler.placer.select_destinations(
        wants_b, [str(uuid.uuid4())])[0][0].service_host == "big"
    # the big host changes (here: its agent now reports 8 CPUs on cell
    # 1 too): it is solved again, fits, and is no longer a known misfit
    scheduler.stats.report_resource_stats(trees.tree_node(
        "big", physnets=("CUSTOM_PHYSNET_B", "CUSTOM_PHYSNET_A"),
        cpus_per_cell=32, mem_per_cell=262144))
    del calls[:]
    held = len(scheduler.placer.layouts.misfits)
    scheduler.placer.select_destinations(wants_a, [str(uuid.uuid4())])
    assert big in calls and len(scheduler.placer.layouts.misfits) == held - 1


def test_a_misfit_for_want_of_pool_room_fits_once_the_pool_grows(scheduler):
    # a diskless tree served by a pool: the pool's change alone (not the
    # tree's) must make the tree worth solving again
    node = trees.tree_node("dl2", aggregates=[trees.POOL_AGG])
    node.inventories = []
    scheduler.stats.report_resource_stats(node)
    scheduler.stats.update_provider(trees._pool_report(total=5))
    wants = trees._vm_with_vf("CUSTOM_PHYSNET_A")       # 10 GB of disk
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    assert len(scheduler.placer.layouts.misfits) == 1
    scheduler.stats.update_provider(trees._pool_report(total=100, sequence=2))
    sels = scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping()[trees.POOL] == {
        "DISK_GB": 10}


def _diskless_tree_on_a_small_pool(scheduler, name):
    node = trees.tree_node(name, aggregates=[trees.POOL_AGG])
    node.inventories = []
    scheduler.stats.report_resource_stats(node)
    scheduler.stats.update_provider(trees._pool_report(total=15))


def _report_second_pool(scheduler, pool_uuid, aggregate):
    """A roomy pool next to the small one, in ``aggregate``."""
    report = trees._pool_report(total=100)
    report.provider.uuid, report.provider.name = pool_uuid, "ceph-pool-2"
    report.provider.aggregates = [aggregate]
    scheduler.stats.update_provider(report)


def test_a_misfit_for_want_of_pool_room_fits_once_the_pool_frees(scheduler):
    # only the pool's usage moves (a volume on it is deleted; no report of
    # the pool, no change to the tree): the pool's new state must make
    # the tree worth solving again
    _diskless_tree_on_a_small_pool(scheduler, "dl3")
    volume = str(uuid.uuid4())
    scheduler.claims.claim_allocations(volume, selection.AllocationRequest(
        allocations=[selection.AllocationItem(
            resource_provider_uuid=trees.POOL, resources={"DISK_GB": 10})]))
    wants = trees._vm_with_vf("CUSTOM_PHYSNET_A")       # 10 GB of disk
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    assert len(scheduler.placer.layouts.misfits) == 1
    scheduler.claims.release(volume)
    sels = scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping()[trees.POOL] == {
        "DISK_GB": 10}


def test_a_misfit_for_want_of_pool_room_fits_once_a_pool_joins(scheduler):
    # the first pool does not change; a second one in the tree's
    # aggregate must make the tree worth solving again
    _diskless_tree_on_a_small_pool(scheduler, "dl4")
    wants = trees._vm_with_vf("CUSTOM_PHYSNET_A")
    scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    second = str(uuid.UUID(int=0x99))
    _report_second_pool(scheduler, second, trees.POOL_AGG)
    sels = scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping()[second] == {
        "DISK_GB": 10}


def test_a_misfit_fits_once_an_operator_lists_it_by_another_pool(scheduler):
    # nothing reported changes: the operator lists the host in the
    # aggregate of a second pool, which then serves it too
    _diskless_tree_on_a_small_pool(scheduler, "dl5")
    second, second_agg = str(uuid.UUID(int=0x98)), str(uuid.UUID(int=0x97))
    _report_second_pool(scheduler, second, second_agg)
    wants = trees._vm_with_vf("CUSTOM_PHYSNET_A")
    scheduler.placer.select_destinations(
        wants, [str(uuid.uuid4())])   # 10 of 15
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    scheduler.operator.set_aggregate(aggregate_obj.Aggregate(
        uuid=second_agg, name="ceph-2", hosts=["dl5"], metadata={}))
    sels = scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping()[second] == {
        "DISK_GB": 10}


def test_a_tree_without_the_trait_anywhere_is_not_solved(scheduler,
                                                         monkeypatch):
    # no provider of "bb" has PHYSNET_A: its columns say so, so the
    # solver never runs on it although it is weighed first
    scheduler.stats.report_resource_stats(trees.tree_node(
        "bb", physnets=("CUSTOM_PHYSNET_B", "CUSTOM_PHYSNET_B"),
        mem_per_cell=262144))
    calls = _counting_solver(monkeypatch)
    wants_a = trees._vm_with_vf("CUSTOM_PHYSNET_A")
    with pytest.raises(exception.NoValidHost) as err:
        scheduler.placer.select_destinations(wants_a, [str(uuid.uuid4())])
    assert "1 lacked trait CUSTOM_PHYSNET_A" in str(err.value)
    scheduler.stats.report_resource_stats(trees.tree_node("ab"))
    sels = scheduler.placer.select_destinations(
        wants_a, [str(uuid.uuid4())])[0]
    assert sels[0].service_host == "ab"
    assert f.host_uuid("bb") not in calls
    # the trait on a child (the PF), not on the root, is enough
    assert scheduler.placer.select_destinations(
        trees._vm_with_vf("CUSTOM_PHYSNET_B"),
        [str(uuid.uuid4())])[0][0].service_host == "bb"


def test_a_trait_a_sharing_provider_has_does_not_narrow_trees(scheduler):
    # the unsuffixed group's trait may come from the pool the disk comes
    # from: a tree without it must still be solved
    node = trees.tree_node("dl6", aggregates=[trees.POOL_AGG])
    node.inventories = []
    scheduler.stats.report_resource_stats(node)
    report = trees._pool_report()
    report.provider.traits = ["MISC_SHARES_VIA_AGGREGATE",
                              "CUSTOM_STORAGE_FAST"]
    scheduler.stats.update_provider(report)
    flavor = f.flavor(vcpus=0, memory_mb=0, root_gb=10, extra_specs={
        "trait:CUSTOM_STORAGE_FAST": "required"})
    sels = scheduler.placer.select_destinations(f.request(flavor),
                                       [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping() == {
        trees.POOL: {"DISK_GB": 10}}


def test_a_misfit_tree_fits_again_once_an_instance_on_it_goes(scheduler):
    # only the tree's usage moves (a release; no report): its PHYSNET_A
    # cell has room again
    scheduler.stats.report_resource_stats(
        trees.tree_node("tf", cpus_per_cell=2))
    wants_a = trees._vm_with_vf("CUSTOM_PHYSNET_A")
    first = str(uuid.uuid4())
    scheduler.placer.select_destinations(wants_a, [first])
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(wants_a, [str(uuid.uuid4())])
    assert len(scheduler.placer.layouts.misfits) == 1
    scheduler.claims.release(first)
    sels = scheduler.placer.select_destinations(
        wants_a, [str(uuid.uuid4())])[0]
    assert sels[0].service_host == "tf"


def test_a_plain_host_a_pool_serves_fits_again_once_it_frees(scheduler):
    # a host that is one provider, in a pool's aggregate, is solved too
    # (the pool may give what it lacks); its room lives in its row, not
    # in a provider tree, so a misfit must not be remembered for it
    scheduler.stats.report_resource_stats(f.compute_node_obj(
        "p1", vcpus=4, memory_mb=4096, aggregates=[trees.POOL_AGG]))
    scheduler.stats.update_provider(trees._pool_report())
    flavor = f.flavor(vcpus=2, memory_mb=4096, root_gb=10)
    first = str(uuid.uuid4())
    scheduler.placer.select_destinations(f.request(flavor), [first])
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(
            f.request(flavor), [str(uuid.uuid4())])
    scheduler.claims.release(first)
    sels = scheduler.placer.select_destinations(f.request(flavor),
                                       [str(uuid.uuid4())])[0]
    assert sels[0].service_host == "p1"


def test_uppercase_granular_suffixes_in_extra_specs(scheduler):
    scheduler.stats.report_resource_stats(trees.tree_node("up1"))
    flavor = f.flavor(vcpus=0, memory_mb=0, root_gb=0, extra_specs={
        "resources_CPU:VCPU": "2", "resources_NET:SRIOV_NET_VF": "1",
        "trait_NET:CUSTOM_PHYSNET_B": "required"})
    sels = scheduler.placer.select_destinations(
        f.request(flavor, group_policy="isolate",
                  same_subtree=[["_CPU", "_NET"]]), [str(uuid.uuid4())])
    assert sels[0][0].allocation_request.as_mapping() == {
        f.host_uuid("up1-numa1"): {"VCPU": 2},
        f.host_uuid("up1-pf1"): {"SRIOV_NET_VF": 1}}


def _tree_with_an_overfull_cell(scheduler, name):
    """NUMA cell 0 holds 6 VCPUs of a consumer, then its agent shrinks it
    to 2 (Placement keeps usage above a shrunk inventory); cell 1 has its
    8 VCPUs free. The tree's sums say 10 - 6 = 4 free."""
    scheduler.stats.report_resource_stats(trees.tree_node(name))
    numa0 = f.host_uuid("%s-numa0" % name)
    scheduler.claims.claim_allocations(
        str(uuid.uuid4()), selection.AllocationRequest(
        allocations=[selection.AllocationItem(
        resource_provider_uuid=numa0, resources={"VCPU": 6})]))
    shrunk = trees.tree_node(name)
    shrunk.child_providers[0].inventories = [
        trees._inv("VCPU", 2), trees._inv("MEMORY_MB", 16384)]
    scheduler.stats.report_resource_stats(shrunk, force=True)
    return f.host_uuid("%s-numa1" % name)


def test_an_overfull_child_does_not_hide_its_siblings_room(scheduler):
    # Placement judges each provider: cell 1 alone can give 6 VCPUs
    numa1 = _tree_with_an_overfull_cell(scheduler, "ov1")
    wants = f.request(f.flavor(vcpus=6, memory_mb=1024, root_gb=10))
    found = scheduler.placer.get_allocation_candidates(wants)
    assert found and all(
        c.allocation_request.as_mapping()[numa1]["VCPU"] == 6
        for c in found)
    assert scheduler.operator.explain(wants).passed == 1
    sels = scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])[0]
    assert sels[0].allocation_request.as_mapping()[numa1]["VCPU"] == 6


def test_an_overfull_child_still_leaves_too_little(scheduler):
    # 9 VCPUs fit on no provider of the tree, nor in its sums
    _tree_with_an_overfull_cell(scheduler, "ov2")
    wants = f.request(f.flavor(vcpus=9, memory_mb=1024, root_gb=10))
    with pytest.raises(exception.NoValidHost, match="lacked VCPU"):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
    assert scheduler.placer.get_allocation_candidates(wants) == []


def test_a_group_requiring_and_forbidding_a_trait_is_invalid(scheduler):
    # a tree host is solved, where the conflict was a ValueError
    scheduler.stats.report_resource_stats(trees.tree_node("cf1"))
    wants = f.request(f.flavor(vcpus=0, memory_mb=0, root_gb=10),
                      request_groups=[request_spec.RequestGroup(
                          suffix="_NET", resources={"SRIOV_NET_VF": 1},
                          required_traits=["CUSTOM_PHYSNET_A"],
                          forbidden_traits=["CUSTOM_PHYSNET_A"])])
    with pytest.raises(exception.InvalidRequest, match="CUSTOM_PHYSNET_A"):
        scheduler.placer.get_allocation_candidates(wants)
    with pytest.raises(exception.InvalidRequest, match="CUSTOM_PHYSNET_A"):
        scheduler.placer.select_destinations(wants, [str(uuid.uuid4())])
