"""The Placer end to end on SQLite: placement, groups, retried calls,
batches, alternates."""

import collections

import numpy as np
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.scheduler.pipeline import picking
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")


def test_select_claims_the_best_host_and_returns_alternates(scheduler):
    for name, size in (("h1", 1), ("h2", 4), ("h3", 3), ("h4", 2)):
        h.sized(scheduler, name, size, cell_uuid=h.CELL_A)
    [uuid] = factories.uuids(1)
    [selections] = scheduler.placer.select_destinations(h.make_spec(), [uuid])

    claimed, *alternates = selections
    assert scheduler.stats.conf.scheduler.max_attempts == 3
    assert [s.service_host for s in selections] == ["h2", "h3", "h4"]
    assert [s.claimed for s in selections] == [True, False, False]
    assert {s.consumer_uuid for s in selections} == {uuid}
    assert {s.cell_uuid for s in selections} == {h.CELL_A}
    assert claimed.weight >= alternates[0].weight >= alternates[1].weight
    resources = {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}
    for sel in selections:
        assert sel.compute_node_uuid == factories.host_uuid(sel.service_host)
        assert sel.allocation_request.as_mapping() == {
            sel.compute_node_uuid: resources}
    assert claimed.limits == {"VCPU": 16, "MEMORY_MB": 16384, "DISK_GB": 400}
    # only the claimed host holds the allocation
    assert h.used(scheduler.stats.db) == {"h2": resources}
    assert h.cache_used(scheduler, "h2") == resources


@pytest.mark.parametrize("max_attempts, alternates", [
    (1, []),
    (2, ["a2"]),
    (3, ["a2", "a3"]),
    (5, ["a2", "a3"]),     # the cell has no more
])
def test_alternates_come_from_the_claimed_cell_only(conf, scheduler,
                                                    max_attempts, alternates):
    conf.set_override("max_attempts", max_attempts, "scheduler")
    # ranking: a1 > b1 > b2 > b3 > a2 > a3; cell B ranks in between
    for name, size, cell in (("a1", 9, h.CELL_A), ("b1", 8, h.CELL_B),
                             ("b2", 7, h.CELL_B), ("b3", 6, h.CELL_B),
                             ("a2", 2, h.CELL_A), ("a3", 1, h.CELL_A)):
        h.sized(scheduler, name, size, cell_uuid=cell)
    [selections] = h.select(scheduler)
    assert [s.service_host for s in selections] == ["a1"] + alternates
    assert {s.cell_uuid for s in selections} == {h.CELL_A}


def test_no_alternates_when_not_asked(scheduler):
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    [selections] = h.select(scheduler, return_alternates=False)
    assert len(selections) == 1
    assert selections[0].claimed


def test_each_instance_gets_its_own_list(scheduler):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        h.sized(scheduler, name, size)
    uuids = factories.uuids(2)
    result = scheduler.placer.select_destinations(h.make_spec(), uuids)
    assert [s[0].consumer_uuid for s in result] == uuids
    assert all(s.consumer_uuid == uuid
               for sels, uuid in zip(result, uuids, strict=True)
               for s in sels)
    for uuid, sels in zip(uuids, result, strict=True):
        assert h.hosts_of(scheduler.stats.db, uuid) == {sels[0].service_host}


@pytest.mark.parametrize("vcpus, instances", [(4, 4), (3, 3), (2, 2)])
def test_one_request_can_fill_a_host_exactly(scheduler, vcpus, instances):
    h.report(scheduler, "only", vcpus=vcpus)
    result = h.select(scheduler, instances)
    assert [s[0].service_host for s in result] == ["only"] * instances
    assert h.used(scheduler.stats.db)["only"]["VCPU"] == vcpus
    assert h.cache_used(scheduler, "only")["VCPU"] == vcpus
    with pytest.raises(exception.NoValidHost, match="1 lacked VCPU"):
        h.select(scheduler)


def test_instances_of_one_request_see_each_others_claims(conf, scheduler):
    h.ram_only(conf)
    # free RAM 4096 and 3584: after each claim the other host has more
    h.report(scheduler, "h1", memory_mb=4096)
    h.report(scheduler, "h2", memory_mb=3584)
    result = h.select(scheduler, 4)
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]


def test_instances_see_each_others_claims_across_a_cache_regrowth(
        conf, sqlite_db):
    """A report that regrows the cache's table mid-request (new host, class
    or trait) must not make later instances forget earlier claims."""
    h.ram_only(conf)
    grown = []

    def broadcast(_usages):
        # runs right after each claim: a new host with many new classes
        # arrives, and the cache swaps in a bigger table
        if not grown:
            grown.append(True)
            h.report(mgr, "newcomer", vcpus=0, memory_mb=0, disk_gb=0,
                    extra_inventories=[h.inv(f"CUSTOM_C{i}", 1)
                                       for i in range(10)])

    mgr = scheduler_mod.build(conf, sqlite_db, broadcast=broadcast)
    mgr.stats.load_cache()
    h.report(mgr, "h1", memory_mb=4096)
    h.report(mgr, "h2", memory_mb=3584)
    table = mgr.stats.cache.table
    result = h.select(mgr, 4)
    assert mgr.stats.cache.table is not table
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]


def test_multi_instance_request_is_all_or_nothing(scheduler):
    h.report(scheduler, "h1", vcpus=1)
    h.report(scheduler, "h2", vcpus=1)
    uuids = factories.uuids(3)
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(h.make_spec(), uuids)
    assert h.allocations(scheduler.stats.db) == []
    with scheduler.stats.db.begin() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            h.CONSUMERS)).scalar() == 0
    assert h.cache_used(scheduler, "h1") == {}
    assert h.cache_used(scheduler, "h2") == {}
    # and the room is really free again
    assert len(h.select(scheduler, 2)) == 2


def test_a_retried_call_gets_the_claim_it_holds_unchanged(scheduler):
    """A lost reply: asking again answers with the claim already held,
    whatever host a new choice would pick."""
    for name in ("h1", "h2", "h3"):
        h.sized(scheduler, name, 4)
    [uuid] = factories.uuids(1)
    [[first, *_]] = scheduler.placer.select_destinations(h.make_spec(), [uuid])
    for _ in range(10):
        [[again, *alternates]] = scheduler.placer.select_destinations(
            h.make_spec(), [uuid])
        assert again.claimed
        assert again.service_host == first.service_host
        assert again.allocation_request.as_mapping() == (
            first.allocation_request.as_mapping())
        assert first.service_host not in {a.service_host
                                          for a in alternates}
    assert h.used(scheduler.stats.db) == {first.service_host: {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}}


def test_a_claim_is_moved_only_when_asked_to(scheduler):
    h.sized(scheduler, "h1", 2)
    h.sized(scheduler, "h2", 1)
    [uuid] = factories.uuids(1)
    scheduler.placer.select_destinations(h.make_spec(), [uuid])
    before = h.used(scheduler.stats.db)
    big = h.make_spec(factories.flavor(vcpus=2, memory_mb=2048, root_gb=20))
    with pytest.raises(exception.ConsumerConflict, match="replace=True"):
        scheduler.placer.select_destinations(big, [uuid])
    assert h.used(scheduler.stats.db) == before
    [[claimed, *_]] = scheduler.placer.select_destinations(
        big, [uuid], replace=True)

    rows = h.allocations(scheduler.stats.db)
    assert {consumer for _h, consumer, _rc, _u in rows} == {uuid}
    assert h.used(scheduler.stats.db) == {claimed.service_host: {
        "VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}
    for host in ("h1", "h2"):
        assert h.cache_used(
            scheduler, host) == h.used(scheduler.stats.db).get(host, {})


def test_instances_of_which_only_some_hold_claims_conflict(scheduler):
    h.sized(scheduler, "h1", 4)
    uuids = factories.uuids(2)
    scheduler.placer.select_destinations(h.make_spec(), uuids[:1])
    before = h.used(scheduler.stats.db)
    with pytest.raises(exception.ConsumerConflict, match=uuids[1]):
        scheduler.placer.select_destinations(h.make_spec(), uuids)
    assert h.used(scheduler.stats.db) == before
    assert h.cache_used(scheduler, "h1") == before["h1"]


def test_hard_anti_affinity_spreads_members(scheduler):
    for name in ("h1", "h2", "h3"):
        h.report(scheduler, name)
    result = scheduler.placer.select_destinations(
        h.group_spec("anti-affinity"),
        factories.uuids(3))
    assert sorted(s[0].service_host for s in result) == ["h1", "h2", "h3"]
    # a later member finds every host taken
    [late] = factories.uuids(1)
    with pytest.raises(exception.NoValidHost,
                       match="3 ServerGroupAntiAffinityFilter"):
        scheduler.placer.select_destinations(
            h.group_spec("anti-affinity"), [late])
    assert h.allocations(scheduler.stats.db, late) == []


def test_alternates_respect_the_whole_request(scheduler):
    """Alternates are chosen once every instance is claimed: under
    anti-affinity no alternate is a sibling's host."""
    for name, size in (("h1", 5), ("h2", 4), ("h3", 3), ("h4", 2),
                       ("h5", 1)):
        h.sized(scheduler, name, size)
    result = scheduler.placer.select_destinations(
        h.group_spec("anti-affinity"),
        factories.uuids(2))
    claimed = [sels[0].service_host for sels in result]
    assert claimed == ["h1", "h2"]
    for sels in result:
        assert [s.service_host for s in sels[1:]] == ["h3", "h4"]


def test_hard_anti_affinity_all_or_nothing(scheduler):
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(h.group_spec("anti-affinity"),
                                    factories.uuids(3))
    assert h.allocations(scheduler.stats.db) == []


def test_max_server_per_host(scheduler):
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    spec = h.group_spec("anti-affinity", {"max_server_per_host": "2"})
    result = scheduler.placer.select_destinations(spec, factories.uuids(4))
    hosts = collections.Counter(s[0].service_host for s in result)
    assert hosts == {"h1": 2, "h2": 2}
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(spec, factories.uuids(1))


def test_hard_affinity_keeps_members_together(scheduler):
    for name, size in (("h1", 1), ("h2", 3), ("h3", 2)):
        h.sized(scheduler, name, size)
    result = scheduler.placer.select_destinations(h.group_spec("affinity"),
                                         factories.uuids(3))
    assert {s[0].service_host for s in result} == {"h2"}
    # later members follow, until the host is full
    [[later, *_]] = scheduler.placer.select_destinations(
        h.group_spec("affinity"),
        factories.uuids(1))
    assert later.service_host == "h2"
    big = factories.flavor(vcpus=12, memory_mb=1024, root_gb=10)
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(
            h.group_spec("affinity", flavor=big),
            factories.uuids(1))


def test_soft_policies_do_not_filter(scheduler):
    h.report(scheduler, "only")
    result = scheduler.placer.select_destinations(
        h.group_spec("soft-anti-affinity"),
        factories.uuids(2))
    assert [s[0].service_host for s in result] == ["only", "only"]


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
def test_no_valid_host_says_why(scheduler, hosts, spec_fields, reason):
    for name, fields in hosts:
        h.report(scheduler, name, **fields)
    with pytest.raises(exception.NoValidHost) as raised:
        scheduler.placer.select_destinations(
            h.make_spec(**spec_fields), factories.uuids(1))
    assert str(raised.value) == "No valid host was found. " + reason


def test_forced_host_skips_filters_but_not_capacity(scheduler):
    h.report(scheduler, "best")
    h.report(scheduler, "disabled", disabled=True, vcpus=2)
    [[sel]] = h.select(scheduler, spec=h.make_spec(force_hosts=["disabled"]),
                      return_alternates=False)
    assert sel.service_host == "disabled"
    big = factories.flavor(vcpus=3)
    with pytest.raises(exception.NoValidHost, match="1 lacked VCPU"):
        h.select(scheduler, spec=h.make_spec(big, force_hosts=["disabled"]))


@pytest.mark.parametrize("inventory, flavor, fits", [
    ({"vcpus": 4}, {"vcpus": 1}, 4),
    ({"vcpus": 4, "cpu_ratio": 1.5}, {"vcpus": 1}, 6),
    ({"vcpus": 4, "cpu_ratio": 1.5}, {"vcpus": 4}, 1),
    ({"memory_mb": 4096, "reserved_memory_mb": 1024}, {"memory_mb": 1024},
     3),
    ({"memory_mb": 4096, "reserved_memory_mb": 1000, "ram_ratio": 2.0},
     {"memory_mb": 2048}, 3),
])
def test_never_claims_beyond_capacity(scheduler, inventory, flavor, fits):
    h.report(scheduler, "h1", **dict({"vcpus": 64, "memory_mb": 65536,
                                   "disk_gb": 10000}, **inventory))
    spec = h.make_spec(factories.flavor(**dict(h.SMALL, **flavor)))
    for _ in range(fits):
        scheduler.placer.select_destinations(spec, factories.uuids(1))
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(spec, factories.uuids(1))
    assert len(
        {c for _h, c, _rc, _u in h.allocations(scheduler.stats.db)}) == fits


def test_claim_checks_the_database_not_only_the_cache(scheduler):
    """A stale cache (room it no longer has) costs a retry, never an
    overcommit."""
    h.sized(scheduler, "h1", 2)     # ranked first but really full
    h.sized(scheduler, "h2", 1)
    h.fill(scheduler, "h1")         # behind the cache's back (another worker)
    assert h.cache_used(scheduler, "h1") == {}
    [[sel, *_]] = h.select(scheduler)
    assert sel.service_host == "h2"
    assert h.used(scheduler.stats.db)["h1"]["VCPU"] == 8
    # the failed claim refreshed h1's usage in the cache
    assert h.cache_used(scheduler, "h1")["VCPU"] == 8


def test_get_statistics_counts(scheduler):
    h.report(scheduler, "h1", vcpus=2, sequence=10)
    h.report(scheduler, "h2", vcpus=2, sequence=10)
    h.report(scheduler, "h1", vcpus=2, sequence=9)          # stale
    h.select(scheduler, 2)
    with pytest.raises(exception.NoValidHost):
        h.select(scheduler, spec=h.make_spec(factories.flavor(vcpus=3)))
    with pytest.raises(exception.InvalidRequest):
        scheduler.placer.select_destinations(h.make_spec(), [])

    stats = scheduler.operator.get_statistics()
    assert stats.worker == "gantt"
    assert (stats.hosts, stats.requests, stats.placements,
            stats.no_valid_host, stats.reports_applied, stats.reports_stale,
            stats.claim_conflicts, stats.messages_rejected) == (
        2, 3, 2, 1, 2, 1, 0, 0)
    assert stats.filter_eliminations["lacked VCPU"] == 2


def test_a_retried_call_can_reuse_the_room_it_already_holds(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "only", vcpus=2, memory_mb=4096, disk_gb=40))
    spec = factories.request(factories.flavor(vcpus=2, memory_mb=4096,
                                              root_gb=40))
    uuids = factories.uuids(1)
    first = scheduler.placer.select_destinations(spec, uuids)
    # the reply was lost; the conductor asks again for the same instance
    again = scheduler.placer.select_destinations(spec, uuids)
    assert again[0][0].service_host == first[0][0].service_host == "only"
    assert h.hosts_of(scheduler.stats.db, uuids[0]) == {"only"}


def test_a_replacement_that_fails_leaves_the_instance_unallocated(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "only", vcpus=2, memory_mb=4096, disk_gb=40))
    uuids = factories.uuids(1)
    scheduler.placer.select_destinations(factories.request(factories.flavor(
        vcpus=1, memory_mb=1024, root_gb=10)), uuids)
    too_big = factories.request(factories.flavor(vcpus=4, memory_mb=1024,
                                                 root_gb=10))
    # not asked to replace it: the claim stays as it is
    with pytest.raises(exception.ConsumerConflict):
        scheduler.placer.select_destinations(too_big, uuids)
    assert h.hosts_of(scheduler.stats.db, uuids[0]) == {"only"}
    # asked to: the caller is told no, and nothing is left allocated
    with pytest.raises(exception.NoValidHost):
        scheduler.placer.select_destinations(too_big, uuids, replace=True)
    assert h.hosts_of(scheduler.stats.db, uuids[0]) == set()


def test_new_instances_of_one_request_are_claimed_in_one_transaction(
        conf, scheduler):
    h.ram_only(conf)
    h.report(scheduler, "h1", memory_mb=4096)
    h.report(scheduler, "h2", memory_mb=3584)
    transactions = h.transactions(scheduler)
    uuids = factories.uuids(4)
    result = scheduler.placer.select_destinations(h.make_spec(), uuids)
    assert len(transactions) == 1
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]
    for uuid, sels in zip(uuids, result, strict=True):
        assert h.hosts_of(scheduler.stats.db, uuid) == {sels[0].service_host}
        # each instance's alternates leave out its own host
        assert [s.service_host for s in sels[1:]] == (
            ["h2"] if sels[0].service_host == "h1" else ["h1"])
    for host in ("h1", "h2"):
        assert h.cache_used(
            scheduler, host) == h.used(scheduler.stats.db)[host]
    # the marks of the decisions are gone: only the claims count
    assert not scheduler.stats.cache.table.pending.any()


def test_a_stale_cache_fails_the_batch_and_each_instance_moves_on(scheduler):
    """The batch decided on a host that is full behind the cache's back:
    its transaction fails whole, and one-by-one claims place every
    instance elsewhere, never over capacity."""
    h.sized(scheduler, "h1", 4)     # ranked first but really full
    h.sized(scheduler, "h2", 2)
    h.sized(scheduler, "h3", 2)
    h.fill(scheduler, "h1")
    transactions = h.transactions(scheduler)
    result = h.select(scheduler, 3)
    assert {s[0].service_host for s in result} <= {"h2", "h3"}
    assert len(transactions) > 1
    used = h.used(scheduler.stats.db)
    assert used["h1"]["VCPU"] == 16
    assert sum(used.get(h, {}).get("VCPU", 0) for h in ("h2", "h3")) == 3
    assert h.cache_used(scheduler, "h1")["VCPU"] == 16
    assert not scheduler.stats.cache.table.pending.any()


@pytest.mark.parametrize("count", [1, 3])
def test_a_retried_call_replaces_its_claims_and_sees_their_room(scheduler,
                                                                count):
    """The reply to the first call was lost and the caller asks again for
    the same instances on a cloud they fill exactly: the second call must
    count the room they hold as free and replace their claims."""
    h.report(scheduler, "only", vcpus=count)
    uuids = factories.uuids(count)
    first = scheduler.placer.select_destinations(h.make_spec(), uuids)
    again = scheduler.placer.select_destinations(h.make_spec(), uuids)
    assert [s[0].service_host for s in again] == ["only"] * count
    assert [s[0].consumer_uuid for s in again] == [
        s[0].consumer_uuid for s in first]
    consumers = {c for _h, c, _rc, _u in h.allocations(scheduler.stats.db)}
    assert consumers == set(uuids)
    assert h.used(scheduler.stats.db)["only"]["VCPU"] == count
    assert h.cache_used(scheduler, "only")["VCPU"] == count
    assert not scheduler.stats.cache.table.pending.any()


def test_a_batch_sees_its_own_decisions_across_a_cache_regrowth(
        conf, scheduler):
    """A report regrows the cache's table while a batch is being decided:
    the later instances must still count the earlier decisions."""
    h.ram_only(conf)
    h.report(scheduler, "h1", memory_mb=4096)
    h.report(scheduler, "h2", memory_mb=3584)
    reserve = scheduler.stats.cache.reserve
    grown = []

    def reserve_then_grow(provider, resources):
        mark = reserve(provider, resources)
        if not grown:
            grown.append(True)
            h.report(scheduler, "newcomer", vcpus=0, memory_mb=0, disk_gb=0,
                    extra_inventories=[h.inv(f"CUSTOM_C{i}", 1)
                                       for i in range(10)])
        return mark

    scheduler.stats.cache.reserve = reserve_then_grow
    table = scheduler.stats.cache.table
    result = h.select(scheduler, 4)
    assert scheduler.stats.cache.table is not table
    assert [s[0].service_host for s in result] == ["h1", "h2", "h1", "h2"]
    assert not scheduler.stats.cache.table.pending.any()


@pytest.mark.parametrize("count", [1, 5, 40, 300])
def test_tree_walk_order_is_best_first_without_sorting_all(count):
    # the walk over weighed hosts when the picked tree does not fit: every
    # position once, weights never increasing, equal weights in row
    # order within a chunk
    rng = np.random.default_rng(count)
    totals = rng.choice([0.0, 1.0, 2.5, -1.0], size=count) + np.where(
        rng.random(count) < 0.5, rng.random(count), 0.0)
    order = list(picking.best_first(totals))
    assert sorted(order) == list(range(count))
    assert np.all(np.diff(totals[order]) <= 0)
    if count <= 32:
        # small enough to sort at once: exactly the stable order
        assert order == list(np.argsort(-totals, kind="stable"))


def test_a_held_claim_on_a_host_forced_in_another_case_is_kept(scheduler):
    # force_hosts matches host names in any case, as Nova's does, also
    # for the claim an instance already holds
    for name in ("h1", "h2"):
        h.sized(scheduler, name, 4)
    [uuid] = factories.uuids(1)
    [[first, *_]] = scheduler.placer.select_destinations(
        h.make_spec(force_hosts=["H2"]), [uuid])
    assert first.service_host == "h2"
    [[again, *_]] = scheduler.placer.select_destinations(
        h.make_spec(force_hosts=["H2"]), [uuid])
    assert again.claimed and again.service_host == "h2"


def test_a_held_claim_on_an_ignored_host_is_not_the_answer(scheduler):
    # Nova's evacuation asks again for an instance that holds its claim,
    # ignoring that claim's host: the claim does not satisfy the request,
    # and it is not moved unasked
    for name in ("h1", "h2"):
        h.sized(scheduler, name, 4)
    [uuid] = factories.uuids(1)
    [[first, *_]] = scheduler.placer.select_destinations(
        h.make_spec(force_hosts=["h2"]), [uuid])

    with pytest.raises(exception.ConsumerConflict):
        scheduler.placer.select_destinations(
            h.make_spec(ignore_hosts=["H2"]), [uuid])
    held = scheduler.placer.lookup.allocations_of([uuid])
    assert list(held[uuid]) == [first.compute_node_uuid]
