"""SchedulerManager end to end on SQLite: reports, placement, claims."""

import collections
import uuid as uuidlib

import numpy as np
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import models
from gantt.objects import compute_node
from gantt.objects import request_spec
from gantt.objects import usage
from gantt.scheduler import manager as manager_mod
from gantt.scheduler import selections
from gantt.tests import factories

AGG = str(uuidlib.UUID(int=0xA66))

ALLOC = models.Allocation.__table__
RP = models.ResourceProvider.__table__
INV = models.Inventory.__table__
CONSUMERS = models.Consumer.__table__
CELL_A = "aaaaaaaa-0000-4000-8000-000000000001"
CELL_B = "bbbbbbbb-0000-4000-8000-000000000002"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
SMALL = {"vcpus": 1, "memory_mb": 1024, "root_gb": 10}


# -- helpers ------------------------------------------------------------------


def _sized(manager, name, size, **fields):
    """A host whose VCPU, RAM and disk all grow with ``size`` (so that the
    default spreading weighers rank bigger hosts first)."""
    return factories.report(manager, name, vcpus=4 * size,
                            memory_mb=4096 * size, disk_gb=100 * size,
                            **fields)


def _spec(flavor=None, **fields):
    return factories.request(flavor or factories.flavor(**SMALL), **fields)


def _select(manager, count=1, spec=None, **kwargs):
    return manager.select_destinations(spec or _spec(),
                                       factories.uuids(count), **kwargs)


def _allocations(db, consumer=None):
    """``[(host, consumer, class, used)]`` straight from SQL."""
    query = (sa.select(RP.c.name, ALLOC.c.consumer_uuid,
                       ALLOC.c.resource_class, ALLOC.c.used)
             .join(RP, RP.c.id == ALLOC.c.resource_provider_id))
    if consumer is not None:
        query = query.where(ALLOC.c.consumer_uuid == consumer)
    with db.begin() as conn:
        return sorted(tuple(r) for r in conn.execute(query))


def _used(db):
    """``{host: {class: total used}}`` from SQL."""
    used = collections.defaultdict(collections.Counter)
    for host, _consumer, rc, amount in _allocations(db):
        used[host][rc] += amount
    return {h: dict(c) for h, c in used.items()}


def _hosts_of(db, consumer):
    return {host for host, *_ in _allocations(db, consumer)}


def _inventory(db, host):
    with db.begin() as conn:
        return {r.resource_class: r.total for r in conn.execute(
            sa.select(INV.c.resource_class, INV.c.total)
            .join(RP, RP.c.id == INV.c.resource_provider_id)
            .where(RP.c.name == host))}


def _cache_used(manager, host):
    [state] = manager.get_host_states([host])
    return {r.resource_class: r.used for r in state.resources if r.used}


def _cache_total(manager, host):
    [state] = manager.get_host_states([host])
    return {r.resource_class: r.total for r in state.resources}


def _group_spec(policy, rules=None, **fields):
    return _spec(instance_group=request_spec.InstanceGroup(
        uuid=GROUP, policy=policy, rules=dict(rules or {})), **fields)


# -- selections ---------------------------------------------------------------


def test_select_claims_the_best_host_and_returns_alternates(manager):
    for name, size in (("h1", 1), ("h2", 4), ("h3", 3), ("h4", 2)):
        _sized(manager, name, size, cell_uuid=CELL_A)
    [uuid] = factories.uuids(1)
    [selections] = manager.select_destinations(_spec(), [uuid])

    claimed, *alternates = selections
    assert manager.conf.scheduler.max_attempts == 3
    assert [s.service_host for s in selections] == ["h2", "h3", "h4"]
    assert [s.claimed for s in selections] == [True, False, False]
    assert {s.consumer_uuid for s in selections} == {uuid}
    assert {s.cell_uuid for s in selections} == {CELL_A}
    assert claimed.weight >= alternates[0].weight >= alternates[1].weight
    resources = {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}
    for sel in selections:
        assert sel.compute_node_uuid == factories.host_uuid(sel.service_host)
        assert sel.allocation_request.as_mapping() == {
            sel.compute_node_uuid: resources}
    assert claimed.limits == {"VCPU": 16, "MEMORY_MB": 16384, "DISK_GB": 400}
    # only the claimed host holds the allocation
    assert _used(manager.db) == {"h2": resources}
    assert _cache_used(manager, "h2") == resources


@pytest.mark.parametrize("max_attempts, alternates", [
    (1, []),
    (2, ["a2"]),
    (3, ["a2", "a3"]),
    (5, ["a2", "a3"]),     # the cell has no more
])
def test_alternates_come_from_the_claimed_cell_only(conf, manager,
                                                    max_attempts, alternates):
    conf.set_override("max_attempts", max_attempts, "scheduler")
    # ranking: a1 > b1 > b2 > b3 > a2 > a3; cell B ranks in between
    for name, size, cell in (("a1", 9, CELL_A), ("b1", 8, CELL_B),
                             ("b2", 7, CELL_B), ("b3", 6, CELL_B),
                             ("a2", 2, CELL_A), ("a3", 1, CELL_A)):
        _sized(manager, name, size, cell_uuid=cell)
    [selections] = _select(manager)
    assert [s.service_host for s in selections] == ["a1"] + alternates
    assert {s.cell_uuid for s in selections} == {CELL_A}


def test_no_alternates_when_not_asked(manager):
    for name in ("h1", "h2"):
        factories.report(manager, name)
    [selections] = _select(manager, return_alternates=False)
    assert len(selections) == 1
    assert selections[0].claimed


def test_each_instance_gets_its_own_list(manager):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        _sized(manager, name, size)
    uuids = factories.uuids(2)
    result = manager.select_destinations(_spec(), uuids)
    assert [s[0].consumer_uuid for s in result] == uuids
    assert all(s.consumer_uuid == uuid
               for sels, uuid in zip(result, uuids, strict=True)
               for s in sels)
    for uuid, sels in zip(uuids, result, strict=True):
        assert _hosts_of(manager.db, uuid) == {sels[0].service_host}


@pytest.mark.parametrize("vcpus, instances", [(4, 4), (3, 3), (2, 2)])
def test_one_request_can_fill_a_host_exactly(manager, vcpus, instances):
    factories.report(manager, "only", vcpus=vcpus)
    result = _select(manager, instances)
    assert [s[0].service_host for s in result] == ["only"] * instances
    assert _used(manager.db)["only"]["VCPU"] == vcpus
    assert _cache_used(manager, "only")["VCPU"] == vcpus
    with pytest.raises(exception.NoValidHost, match="1 lacked VCPU"):
        _select(manager)


def _ram_only(conf):
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")


def test_instances_of_one_request_see_each_others_claims(conf, manager):
    _ram_only(conf)
    # free RAM 4096 and 3584: after each claim the other host has more
    factories.report(manager, "h1", memory_mb=4096)
    factories.report(manager, "h2", memory_mb=3584)
    result = _select(manager, 4)
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]


def test_instances_see_each_others_claims_across_a_cache_regrowth(
        conf, sqlite_db):
    """A report that regrows the cache's table mid-request (new host, class
    or trait) must not make later instances forget earlier claims."""
    _ram_only(conf)
    grown = []

    def broadcast(_usages):
        # runs right after each claim: a new host with many new classes
        # arrives, and the cache swaps in a bigger table
        if not grown:
            grown.append(True)
            factories.report(mgr, "newcomer", vcpus=0, memory_mb=0, disk_gb=0,
                             extra_inventories=[_inv(f"CUSTOM_C{i}", 1)
                                                for i in range(10)])

    mgr = manager_mod.SchedulerManager(conf, sqlite_db, broadcast=broadcast)
    mgr.load_cache()
    factories.report(mgr, "h1", memory_mb=4096)
    factories.report(mgr, "h2", memory_mb=3584)
    table = mgr.cache.table
    result = _select(mgr, 4)
    assert mgr.cache.table is not table
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]


# -- all or nothing -----------------------------------------------------------


def test_multi_instance_request_is_all_or_nothing(manager):
    factories.report(manager, "h1", vcpus=1)
    factories.report(manager, "h2", vcpus=1)
    uuids = factories.uuids(3)
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(_spec(), uuids)
    assert _allocations(manager.db) == []
    with manager.db.begin() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            CONSUMERS)).scalar() == 0
    assert _cache_used(manager, "h1") == {}
    assert _cache_used(manager, "h2") == {}
    # and the room is really free again
    assert len(_select(manager, 2)) == 2


def test_a_retried_call_gets_the_claim_it_holds_unchanged(manager):
    """A lost reply: asking again answers with the claim already held,
    whatever host a new choice would pick."""
    for name in ("h1", "h2", "h3"):
        _sized(manager, name, 4)
    [uuid] = factories.uuids(1)
    [[first, *_]] = manager.select_destinations(_spec(), [uuid])
    for _ in range(10):
        [[again, *alternates]] = manager.select_destinations(_spec(), [uuid])
        assert again.claimed
        assert again.service_host == first.service_host
        assert again.allocation_request.as_mapping() == (
            first.allocation_request.as_mapping())
        assert first.service_host not in {a.service_host
                                          for a in alternates}
    assert _used(manager.db) == {first.service_host: {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}}


def test_a_claim_is_moved_only_when_asked_to(manager):
    _sized(manager, "h1", 2)
    _sized(manager, "h2", 1)
    [uuid] = factories.uuids(1)
    manager.select_destinations(_spec(), [uuid])
    before = _used(manager.db)
    big = _spec(factories.flavor(vcpus=2, memory_mb=2048, root_gb=20))
    with pytest.raises(exception.ConsumerConflict, match="replace=True"):
        manager.select_destinations(big, [uuid])
    assert _used(manager.db) == before
    [[claimed, *_]] = manager.select_destinations(big, [uuid], replace=True)

    rows = _allocations(manager.db)
    assert {consumer for _h, consumer, _rc, _u in rows} == {uuid}
    assert _used(manager.db) == {claimed.service_host: {
        "VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}
    for host in ("h1", "h2"):
        assert _cache_used(manager, host) == _used(manager.db).get(host, {})


def test_instances_of_which_only_some_hold_claims_conflict(manager):
    _sized(manager, "h1", 4)
    uuids = factories.uuids(2)
    manager.select_destinations(_spec(), uuids[:1])
    before = _used(manager.db)
    with pytest.raises(exception.ConsumerConflict, match=uuids[1]):
        manager.select_destinations(_spec(), uuids)
    assert _used(manager.db) == before
    assert _cache_used(manager, "h1") == before["h1"]


def test_release_says_whether_this_call_freed_the_claim(manager):
    _sized(manager, "h1", 4)
    [uuid] = factories.uuids(1)
    manager.select_destinations(_spec(), [uuid])
    assert manager.release(uuid) is True
    assert manager.release(uuid) is False


# -- server groups ------------------------------------------------------------


def test_hard_anti_affinity_spreads_members(manager):
    for name in ("h1", "h2", "h3"):
        factories.report(manager, name)
    result = manager.select_destinations(_group_spec("anti-affinity"),
                                         factories.uuids(3))
    assert sorted(s[0].service_host for s in result) == ["h1", "h2", "h3"]
    # a later member finds every host taken
    [late] = factories.uuids(1)
    with pytest.raises(exception.NoValidHost,
                       match="3 ServerGroupAntiAffinityFilter"):
        manager.select_destinations(_group_spec("anti-affinity"), [late])
    assert _allocations(manager.db, late) == []


def test_alternates_respect_the_whole_request(manager):
    """Alternates are chosen once every instance is claimed: under
    anti-affinity no alternate is a sibling's host."""
    for name, size in (("h1", 5), ("h2", 4), ("h3", 3), ("h4", 2),
                       ("h5", 1)):
        _sized(manager, name, size)
    result = manager.select_destinations(_group_spec("anti-affinity"),
                                         factories.uuids(2))
    claimed = [sels[0].service_host for sels in result]
    assert claimed == ["h1", "h2"]
    for sels in result:
        assert [s.service_host for s in sels[1:]] == ["h3", "h4"]


def test_hard_anti_affinity_all_or_nothing(manager):
    for name in ("h1", "h2"):
        factories.report(manager, name)
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(_group_spec("anti-affinity"),
                                    factories.uuids(3))
    assert _allocations(manager.db) == []


def test_max_server_per_host(manager):
    for name in ("h1", "h2"):
        factories.report(manager, name)
    spec = _group_spec("anti-affinity", {"max_server_per_host": "2"})
    result = manager.select_destinations(spec, factories.uuids(4))
    hosts = collections.Counter(s[0].service_host for s in result)
    assert hosts == {"h1": 2, "h2": 2}
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(spec, factories.uuids(1))


def test_hard_affinity_keeps_members_together(manager):
    for name, size in (("h1", 1), ("h2", 3), ("h3", 2)):
        _sized(manager, name, size)
    result = manager.select_destinations(_group_spec("affinity"),
                                         factories.uuids(3))
    assert {s[0].service_host for s in result} == {"h2"}
    # later members follow, until the host is full
    [[later, *_]] = manager.select_destinations(_group_spec("affinity"),
                                                factories.uuids(1))
    assert later.service_host == "h2"
    big = factories.flavor(vcpus=12, memory_mb=1024, root_gb=10)
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(_group_spec("affinity", flavor=big),
                                    factories.uuids(1))


def test_soft_policies_do_not_filter(manager):
    factories.report(manager, "only")
    result = manager.select_destinations(_group_spec("soft-anti-affinity"),
                                         factories.uuids(2))
    assert [s[0].service_host for s in result] == ["only", "only"]


# -- reclaim and release ------------------------------------------------------


def _fill(manager, host):
    """Take every VCPU of ``host`` with a consumer of its own."""
    [state] = manager.get_host_states([host])
    free = {r.resource_class: r.free for r in state.resources}
    manager.claimer.claim(factories.uuids(1)[0], {
        factories.host_uuid(host): {"VCPU": free["VCPU"]}})


def test_reclaim_moves_to_the_first_fitting_alternate(manager):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        _sized(manager, name, size)
    [uuid] = factories.uuids(1)
    [[failed, alt1, alt2]] = manager.select_destinations(_spec(), [uuid])
    assert [failed.service_host, alt1.service_host, alt2.service_host] == [
        "h1", "h2", "h3"]
    _fill(manager, "h2")

    moved = manager.reclaim(uuid, failed, [alt1, alt2])

    assert moved.service_host == "h3"
    assert moved.claimed is True
    assert moved.consumer_uuid == uuid
    assert alt2.claimed is False      # the caller's object is left alone
    assert _hosts_of(manager.db, uuid) == {"h3"}
    assert _cache_used(manager, "h1") == {}
    assert _cache_used(manager, "h3") == {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_reclaim_raises_when_no_alternate_fits_and_frees_everything(manager):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        _sized(manager, name, size)
    [uuid] = factories.uuids(1)
    [[failed, *alternates]] = manager.select_destinations(_spec(), [uuid])
    _fill(manager, "h2")
    _fill(manager, "h3")

    with pytest.raises(exception.MaxRetriesExceeded) as raised:
        manager.reclaim(uuid, failed, alternates)

    assert uuid in str(raised.value)
    assert "h2:" in str(raised.value) and "h3:" in str(raised.value)
    assert _allocations(manager.db, uuid) == []
    assert _cache_used(manager, "h1") == {}


def test_reclaim_without_alternates(manager):
    factories.report(manager, "h1")
    [uuid] = factories.uuids(1)
    [[failed]] = manager.select_destinations(_spec(), [uuid],
                                             return_alternates=False)
    with pytest.raises(exception.MaxRetriesExceeded,
                       match="no alternates were given"):
        manager.reclaim(uuid, failed, [])
    assert _allocations(manager.db, uuid) == []


def test_reclaim_keeps_the_group_policy(manager):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        _sized(manager, name, size)
    first, second = factories.uuids(2)
    [[on_h1, *_], [on_h2, *_]] = manager.select_destinations(
        _group_spec("anti-affinity"), [first, second])
    assert (on_h1.service_host, on_h2.service_host) == ("h1", "h2")
    # an alternate on the host of another member is refused
    wrong = on_h1.obj_clone()
    wrong.consumer_uuid = second
    wrong.claimed = False
    right = wrong.obj_clone()
    right.service_host = right.nodename = "h3"
    right.compute_node_uuid = factories.host_uuid("h3")
    right.allocation_request = selections.allocation_request(
        factories.host_uuid("h3"), on_h2.allocation_request.as_mapping()[
            on_h2.compute_node_uuid])

    moved = manager.reclaim(second, on_h2, [wrong, right])
    assert moved.service_host == "h3"
    assert _hosts_of(manager.db, second) == {"h3"}


def test_release_is_idempotent(manager):
    factories.report(manager, "h1")
    [uuid] = factories.uuids(1)
    manager.select_destinations(_spec(), [uuid])
    assert manager.release(uuid) is True
    assert _allocations(manager.db) == []
    assert _cache_used(manager, "h1") == {}
    assert manager.release(uuid) is False
    assert manager.release(factories.uuids(1)[0]) is False


# -- NoValidHost --------------------------------------------------------------


@pytest.mark.parametrize("hosts, spec_fields, reason", [
    ([("disabled", {"disabled": True}), ("small-ram", {"memory_mb": 512}),
      ("small-cpu", {"vcpus": 0})], {},
     ("0 of 3 hosts available: 1 were disabled, 1 lacked MEMORY_MB, "
      "1 lacked VCPU")),
    ([("h1", {}), ("h2", {})], {"availability_zone": "az9"},
     "0 of 2 hosts available: 2 AvailabilityZoneFilter"),
    ([("h1", {}), ("h2", {})], {"ignore_hosts": ["h1", "h2"]},
     "0 of 2 hosts available: 2 ignored"),
    ([("h1", {}), ("h2", {"traits": ["HW_CPU_X86_AVX2"], "vcpus": 0})],
     {"flavor": factories.flavor(
         extra_specs={"trait:HW_CPU_X86_AVX2": "required"})},
     ("0 of 2 hosts available: 1 lacked trait HW_CPU_X86_AVX2, "
      "1 lacked VCPU")),
    ([], {}, "0 of 0 hosts available"),
])
def test_no_valid_host_says_why(manager, hosts, spec_fields, reason):
    for name, fields in hosts:
        factories.report(manager, name, **fields)
    with pytest.raises(exception.NoValidHost) as raised:
        manager.select_destinations(_spec(**spec_fields), factories.uuids(1))
    assert str(raised.value) == "No valid host was found. " + reason


def test_forced_host_skips_filters_but_not_capacity(manager):
    factories.report(manager, "best")
    factories.report(manager, "disabled", disabled=True, vcpus=2)
    [[sel]] = _select(manager, spec=_spec(force_hosts=["disabled"]),
                      return_alternates=False)
    assert sel.service_host == "disabled"
    big = factories.flavor(vcpus=3)
    with pytest.raises(exception.NoValidHost, match="1 lacked VCPU"):
        _select(manager, spec=_spec(big, force_hosts=["disabled"]))


# -- host reports -------------------------------------------------------------


def _db_snapshot(db):
    with db.begin() as conn:
        return {table.name: sorted(tuple(r) for r in conn.execute(
            sa.select(table)))
            for table in models.Base.metadata.sorted_tables}


def _inv(rc, total, **kwargs):
    return compute_node.Inventory(resource_class=rc, total=total, **kwargs)


def _bad_node(problem):
    node = factories.compute_node_obj("h1", vcpus=32)
    if problem == "reserved > total":
        node.inventories[0].reserved = 33
    elif problem == "unknown class":
        node.inventories.append(_inv("FOO_BAR", 1))
    elif problem == "duplicate class":
        node.inventories.append(_inv("VCPU", 8))
    elif problem == "bad trait":
        node.traits = ["HW_CPU_X86_AVX2", "NOT_A_TRAIT"]
    elif problem == "min_unit 0":
        node.inventories[0].min_unit = 0
    elif problem == "max_unit < min_unit":
        node.inventories[0].min_unit = 4
        node.inventories[0].max_unit = 2
    elif problem == "step_size 0":
        node.inventories[0].step_size = 0
    elif problem == "allocation_ratio 0":
        node.inventories[0].allocation_ratio = 0.0
    elif problem == "no report_sequence":
        node.obj_reset_changes()
        delattr(node, "report_sequence")
    return node


@pytest.mark.parametrize("problem, named", [
    ("reserved > total", "VCPU: reserved 33 exceeds total 32"),
    ("unknown class", "'FOO_BAR'"),
    ("duplicate class", "VCPU reported twice"),
    ("bad trait", "'NOT_A_TRAIT'"),
    ("min_unit 0", "min_unit"),
    ("max_unit < min_unit", "max_unit"),
    ("step_size 0", "step_size"),
    ("allocation_ratio 0", "allocation_ratio must be positive"),
    ("no report_sequence", "report_sequence is required"),
])
def test_invalid_report_is_refused_and_changes_nothing(manager, problem,
                                                       named):
    factories.report(manager, "h1", vcpus=16, sequence=1)
    before_db = _db_snapshot(manager.db)
    before_cache = [s.obj_to_dict() for s in manager.get_host_states()]

    with pytest.raises(exception.InvalidRequest) as raised:
        manager.update_resource_stats(_bad_node(problem))

    assert named in str(raised.value)
    assert _db_snapshot(manager.db) == before_db
    assert [s.obj_to_dict() for s in manager.get_host_states()] == (
        before_cache)
    assert manager.get_statistics().reports_applied == 1


def test_invalid_report_of_a_new_host_stores_nothing(manager):
    with pytest.raises(exception.InvalidRequest):
        manager.update_resource_stats(_bad_node("reserved > total"))
    assert all(rows == [] for rows in _db_snapshot(manager.db).values())
    assert len(manager.cache) == 0


@pytest.mark.parametrize("second, applied", [(5, False), (10, False),
                                             (11, True)])
def test_report_sequence_orders_reports(manager, second, applied):
    assert factories.report(manager, "h1", vcpus=8, sequence=10) is True
    assert factories.report(manager, "h1", vcpus=32,
                            sequence=second) is applied
    expected = 32 if applied else 8
    assert _inventory(manager.db, "h1")["VCPU"] == expected
    assert _cache_total(manager, "h1")["VCPU"] == expected


def test_reducing_inventory_below_usage_is_refused_for_that_class(manager):
    factories.report(manager, "h1", vcpus=8, memory_mb=8192, disk_gb=100,
                     sequence=1)
    manager.select_destinations(_spec(factories.flavor(
        vcpus=4, memory_mb=4096, root_gb=50)), factories.uuids(1))
    node = factories.compute_node_obj(
        "h1", vcpus=2, memory_mb=16384, sequence=2,
        extra_inventories=[_inv("CUSTOM_NEW", 3)])
    node.inventories = [i for i in node.inventories
                        if i.resource_class != "DISK_GB"]
    manager.update_resource_stats(node)
    # VCPU (4 used > 2) and DISK_GB (50 used, removed) keep their old
    # inventory; the other classes take the new one
    assert _inventory(manager.db, "h1") == {
        "VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100, "CUSTOM_NEW": 3}
    assert _used(manager.db) == {"h1": {"VCPU": 4, "MEMORY_MB": 4096,
                                        "DISK_GB": 50}}


@pytest.mark.parametrize("inventory, flavor, fits", [
    ({"vcpus": 4}, {"vcpus": 1}, 4),
    ({"vcpus": 4, "cpu_ratio": 1.5}, {"vcpus": 1}, 6),
    ({"vcpus": 4, "cpu_ratio": 1.5}, {"vcpus": 4}, 1),
    ({"memory_mb": 4096, "reserved_memory_mb": 1024}, {"memory_mb": 1024},
     3),
    ({"memory_mb": 4096, "reserved_memory_mb": 1000, "ram_ratio": 2.0},
     {"memory_mb": 2048}, 3),
])
def test_never_claims_beyond_capacity(manager, inventory, flavor, fits):
    factories.report(manager, "h1", **dict({"vcpus": 64, "memory_mb": 65536,
                                            "disk_gb": 10000}, **inventory))
    spec = _spec(factories.flavor(**dict(SMALL, **flavor)))
    for _ in range(fits):
        manager.select_destinations(spec, factories.uuids(1))
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(spec, factories.uuids(1))
    assert len({c for _h, c, _rc, _u in _allocations(manager.db)}) == fits


def test_claim_checks_the_database_not_only_the_cache(manager):
    """A stale cache (room it no longer has) costs a retry, never an
    overcommit."""
    _sized(manager, "h1", 2)     # ranked first but really full
    _sized(manager, "h2", 1)
    _fill(manager, "h1")         # behind the cache's back (another worker)
    assert _cache_used(manager, "h1") == {}
    [[sel, *_]] = _select(manager)
    assert sel.service_host == "h2"
    assert _used(manager.db)["h1"]["VCPU"] == 8
    # the failed claim refreshed h1's usage in the cache
    assert _cache_used(manager, "h1")["VCPU"] == 8


# -- operators ----------------------------------------------------------------


def test_get_statistics_counts(manager):
    factories.report(manager, "h1", vcpus=2, sequence=10)
    factories.report(manager, "h2", vcpus=2, sequence=10)
    factories.report(manager, "h1", vcpus=2, sequence=9)          # stale
    _select(manager, 2)
    with pytest.raises(exception.NoValidHost):
        _select(manager, spec=_spec(factories.flavor(vcpus=3)))
    with pytest.raises(exception.InvalidRequest):
        manager.select_destinations(_spec(), [])

    stats = manager.get_statistics()
    assert stats.worker == "gantt"
    assert (stats.hosts, stats.requests, stats.placements,
            stats.no_valid_host, stats.reports_applied, stats.reports_stale,
            stats.claim_conflicts, stats.messages_rejected) == (
        2, 3, 2, 1, 2, 1, 0, 0)
    assert stats.filter_eliminations["lacked VCPU"] == 2


def test_claims_are_broadcast_to_peers(conf, sqlite_db):
    sent = []
    mgr = manager_mod.SchedulerManager(conf, sqlite_db, broadcast=sent.append)
    mgr.load_cache()
    factories.report(mgr, "h1")
    [uuid] = factories.uuids(1)
    mgr.select_destinations(_spec(), [uuid])
    mgr.release(uuid)
    assert [[(u.resource_provider_uuid, u.usages) for u in batch]
            for batch in sent] == [
        [(factories.host_uuid("h1"),
          {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10})],
        [(factories.host_uuid("h1"), {})]]
    assert sent[1][0].generation == sent[0][0].generation + 1


def test_peer_usage_reaches_the_cache(manager):
    factories.report(manager, "h1")
    [state] = manager.get_host_states(["h1"])
    manager.apply_peer_usage([usage.ProviderUsage(
        resource_provider_uuid=factories.host_uuid("h1"),
        generation=state.generation + 1, usages={"VCPU": 5})])
    assert _cache_used(manager, "h1") == {"VCPU": 5}


def test_a_restarted_worker_sees_the_same_hosts(conf, manager):
    factories.report(manager, "h1", zone="az1", traits=["CUSTOM_A"],
                     aggregates=[AGG], cell_uuid=CELL_A, disabled=True)
    _sized(manager, "h2", 2)
    _select(manager, 3)
    fresh = manager_mod.SchedulerManager(conf, manager.db)
    fresh.load_cache()
    assert fresh.ready.is_set()

    def comparable(states):
        return [dict(s.obj_to_dict(), updated_at=None) for s in states]

    assert comparable(fresh.get_host_states()) == comparable(
        manager.get_host_states())


def test_reclaim_keeps_the_consumer_s_project_and_user(manager):
    for name in ("p1", "p2"):
        manager.update_resource_stats(factories.compute_node_obj(name))
    spec = factories.request(project_id="proj-a", user_id="user-b")
    [sels] = manager.select_destinations(spec, factories.uuids(1))
    manager.reclaim(sels[0].consumer_uuid, sels[0], sels[1:])
    consumers = models.Consumer.__table__
    with manager.db.begin() as conn:
        row = conn.execute(sa.select(consumers.c.project_id,
                                     consumers.c.user_id)).one()
    assert tuple(row) == ("proj-a", "user-b")


def test_cache_holds_the_database_inventory_when_a_cut_is_refused(manager):
    manager.update_resource_stats(factories.compute_node_obj("cut", vcpus=8))
    spec = factories.request(factories.flavor(vcpus=6, memory_mb=1, root_gb=1))
    manager.select_destinations(spec, factories.uuids(1))
    # the agent reports 2 VCPUs while 6 are allocated: refused, kept at 8
    manager.update_resource_stats(factories.compute_node_obj("cut", vcpus=2))
    [state] = manager.get_host_states()
    vcpu = {r.resource_class: r for r in state.resources}["VCPU"]
    assert (vcpu.total, vcpu.used, vcpu.free) == (8, 6, 2)


@pytest.mark.parametrize("field, value", [
    ("aggregates", ["not-a-uuid"]),
    ("availability_zone", "z" * 256),
    ("nodename", "n" * 201),
    ("host", ""),
])
def test_reports_the_database_cannot_store_are_rejected(manager, field,
                                                        value):
    node = factories.compute_node_obj("long")
    setattr(node, field, value)
    with pytest.raises(exception.InvalidRequest, match=field[:-1]):
        manager.update_resource_stats(node)
    assert manager.get_host_states() == []


def test_a_retried_call_can_reuse_the_room_it_already_holds(manager):
    manager.update_resource_stats(factories.compute_node_obj(
        "only", vcpus=2, memory_mb=4096, disk_gb=40))
    spec = factories.request(factories.flavor(vcpus=2, memory_mb=4096,
                                              root_gb=40))
    uuids = factories.uuids(1)
    first = manager.select_destinations(spec, uuids)
    # the reply was lost; the conductor asks again for the same instance
    again = manager.select_destinations(spec, uuids)
    assert again[0][0].service_host == first[0][0].service_host == "only"
    assert _hosts_of(manager.db, uuids[0]) == {"only"}


def test_a_replacement_that_fails_leaves_the_instance_unallocated(manager):
    manager.update_resource_stats(factories.compute_node_obj(
        "only", vcpus=2, memory_mb=4096, disk_gb=40))
    uuids = factories.uuids(1)
    manager.select_destinations(factories.request(factories.flavor(
        vcpus=1, memory_mb=1024, root_gb=10)), uuids)
    too_big = factories.request(factories.flavor(vcpus=4, memory_mb=1024,
                                                 root_gb=10))
    # not asked to replace it: the claim stays as it is
    with pytest.raises(exception.ConsumerConflict):
        manager.select_destinations(too_big, uuids)
    assert _hosts_of(manager.db, uuids[0]) == {"only"}
    # asked to: the caller is told no, and nothing is left allocated
    with pytest.raises(exception.NoValidHost):
        manager.select_destinations(too_big, uuids, replace=True)
    assert _hosts_of(manager.db, uuids[0]) == set()


def test_a_restarted_worker_keeps_numa_cells_and_pci_pools(conf, sqlite_db):
    from gantt.objects import numa
    from gantt.objects import pci
    first = manager_mod.SchedulerManager(conf, sqlite_db)
    first.load_cache()
    node = factories.compute_node_obj("numa-host")
    node.numa_cells = [numa.NUMACell(id=0, cpuset=[0, 1], memory_mb=1024)]
    node.pci_pools = [pci.PciDevicePool(vendor_id="8086", product_id="1520",
                                        numa_node=0, count=4)]
    first.update_resource_stats(node)
    second = manager_mod.SchedulerManager(conf, sqlite_db)
    second.load_cache()
    table = second.cache.table
    row = table.row_by_uuid[node.uuid]
    assert [c.id for c in table.numa_cells[row]] == [0]
    assert [p.count for p in table.pci_pools[row]] == [4]


# -- many instances, one transaction ------------------------------------------


def _transactions(manager):
    """Count the claim transactions a manager commits."""
    counted = []
    original = manager.claimer._retrying

    def retrying(*args, **kwargs):
        counted.append(args[0])
        return original(*args, **kwargs)

    manager.claimer._retrying = retrying
    return counted


def test_new_instances_of_one_request_are_claimed_in_one_transaction(
        conf, manager):
    _ram_only(conf)
    factories.report(manager, "h1", memory_mb=4096)
    factories.report(manager, "h2", memory_mb=3584)
    transactions = _transactions(manager)
    uuids = factories.uuids(4)
    result = manager.select_destinations(_spec(), uuids)
    assert len(transactions) == 1
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]
    for uuid, sels in zip(uuids, result, strict=True):
        assert _hosts_of(manager.db, uuid) == {sels[0].service_host}
        # each instance's alternates leave out its own host
        assert [s.service_host for s in sels[1:]] == (
            ["h2"] if sels[0].service_host == "h1" else ["h1"])
    for host in ("h1", "h2"):
        assert _cache_used(manager, host) == _used(manager.db)[host]
    # the marks of the decisions are gone: only the claims count
    assert not manager.cache.table.pending.any()


def test_a_stale_cache_fails_the_batch_and_each_instance_moves_on(manager):
    """The batch decided on a host that is full behind the cache's back:
    its transaction fails whole, and one-by-one claims place every
    instance elsewhere, never over capacity."""
    _sized(manager, "h1", 4)     # ranked first but really full
    _sized(manager, "h2", 2)
    _sized(manager, "h3", 2)
    _fill(manager, "h1")
    transactions = _transactions(manager)
    result = _select(manager, 3)
    assert {s[0].service_host for s in result} <= {"h2", "h3"}
    assert len(transactions) > 1
    used = _used(manager.db)
    assert used["h1"]["VCPU"] == 16
    assert sum(used.get(h, {}).get("VCPU", 0) for h in ("h2", "h3")) == 3
    assert _cache_used(manager, "h1")["VCPU"] == 16
    assert not manager.cache.table.pending.any()


@pytest.mark.parametrize("count", [1, 3])
def test_a_retried_call_replaces_its_claims_and_sees_their_room(manager,
                                                                count):
    """The reply to the first call was lost and the caller asks again for
    the same instances on a cloud they fill exactly: the second call must
    count the room they hold as free and replace their claims."""
    factories.report(manager, "only", vcpus=count)
    uuids = factories.uuids(count)
    first = manager.select_destinations(_spec(), uuids)
    again = manager.select_destinations(_spec(), uuids)
    assert [s[0].service_host for s in again] == ["only"] * count
    assert [s[0].consumer_uuid for s in again] == [
        s[0].consumer_uuid for s in first]
    consumers = {c for _h, c, _rc, _u in _allocations(manager.db)}
    assert consumers == set(uuids)
    assert _used(manager.db)["only"]["VCPU"] == count
    assert _cache_used(manager, "only")["VCPU"] == count
    assert not manager.cache.table.pending.any()


def test_a_batch_sees_its_own_decisions_across_a_cache_regrowth(
        conf, manager):
    """A report regrows the cache's table while a batch is being decided:
    the later instances must still count the earlier decisions."""
    _ram_only(conf)
    factories.report(manager, "h1", memory_mb=4096)
    factories.report(manager, "h2", memory_mb=3584)
    reserve = manager.cache.reserve
    grown = []

    def reserve_then_grow(provider, resources):
        mark = reserve(provider, resources)
        if not grown:
            grown.append(True)
            factories.report(manager, "newcomer", vcpus=0, memory_mb=0,
                             disk_gb=0,
                             extra_inventories=[_inv(f"CUSTOM_C{i}", 1)
                                                for i in range(10)])
        return mark

    manager.cache.reserve = reserve_then_grow
    table = manager.cache.table
    result = _select(manager, 4)
    assert manager.cache.table is not table
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]
    assert not manager.cache.table.pending.any()


@pytest.mark.parametrize("count", [1, 5, 40, 300])
def test_tree_walk_order_is_best_first_without_sorting_all(count):
    # the walk over weighed hosts when the picked tree does not fit: every
    # position once, weights never increasing, equal weights in row
    # order within a chunk
    rng = np.random.default_rng(count)
    totals = rng.choice([0.0, 1.0, 2.5, -1.0], size=count) + np.where(
        rng.random(count) < 0.5, rng.random(count), 0.0)
    order = list(manager_mod._best_first(totals))
    assert sorted(order) == list(range(count))
    assert np.all(np.diff(totals[order]) <= 0)
    if count <= 32:
        # small enough to sort at once: exactly the stable order
        assert order == list(np.argsort(-totals, kind="stable"))


def test_a_held_claim_on_a_host_forced_in_another_case_is_kept(manager):
    # force_hosts matches host names in any case, as Nova's does, also
    # for the claim an instance already holds
    for name in ("h1", "h2"):
        _sized(manager, name, 4)
    [uuid] = factories.uuids(1)
    [[first, *_]] = manager.select_destinations(
        _spec(force_hosts=["H2"]), [uuid])
    assert first.service_host == "h2"
    [[again, *_]] = manager.select_destinations(
        _spec(force_hosts=["H2"]), [uuid])
    assert again.claimed and again.service_host == "h2"
