"""HostStateCache: report ordering, replacement, growth and operator view."""

import pytest

from gantt.objects import compute_node
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers


def _custom(rc, total, **kwargs):
    return compute_node.Inventory(resource_class=rc, total=total, **kwargs)


def _state(cache, name, service_down_time=helpers.SERVICE_DOWN_TIME):
    [state] = cache.host_states(service_down_time, hosts=[name])
    return state


def _resources(state):
    return {r.resource_class: r for r in state.resources}


# -- report ordering ----------------------------------------------------------


@pytest.mark.parametrize("second_sequence, applied", [
    (9, False),    # older: a reordered cast
    (10, False),   # equal: a duplicated cast
    (11, True),    # newer
])
def test_only_a_newer_report_replaces_the_stored_one(second_sequence,
                                                     applied):
    cache = helpers.make_cache()
    assert cache.apply_report(helpers.host_report(factories.compute_node_obj(
        "h1", vcpus=8, sequence=10)))
    assert cache.apply_report(helpers.host_report(factories.compute_node_obj(
        "h1", vcpus=32, sequence=second_sequence))) is applied
    vcpu = _resources(_state(cache, "h1"))["VCPU"]
    assert vcpu.total == (32 if applied else 8)
    assert _state(cache, "h1").report_sequence == (
        second_sequence if applied else 10)
    assert len(cache) == 1


def test_newer_report_replaces_inventory_traits_and_aggregates():
    cache = helpers.make_cache(factories.compute_node_obj(
        "h1", sequence=1, traits=["HW_CPU_X86_AVX2", "CUSTOM_OLD"],
        aggregates=["agg-a"], zone="az1",
        extra_inventories=[_custom("CUSTOM_GPU", 4)]))
    assert "CUSTOM_GPU" in _resources(_state(cache, "h1"))

    assert cache.apply_report(helpers.host_report(factories.compute_node_obj(
        "h1", sequence=2, vcpus=4, traits=["CUSTOM_NEW"],
        aggregates=["agg-b"], zone="az2")))

    table = cache.table
    row = table.row_by_uuid[factories.host_uuid("h1")]
    gpu = table.resource_classes.get("CUSTOM_GPU")
    # a class no longer reported offers nothing
    assert not table.has_inventory[row, gpu]
    assert table.total[row, gpu] == 0
    state = _state(cache, "h1")
    assert sorted(_resources(state)) == ["DISK_GB", "MEMORY_MB", "VCPU"]
    assert _resources(state)["VCPU"].total == 4
    assert state.traits == ["CUSTOM_NEW"]
    assert state.aggregates == ["agg-b"]
    assert state.availability_zone == "az2"
    view = host_view.HostView(table, helpers.NOW, 60)
    assert list(view.fits("CUSTOM_GPU", 1)) == [False]
    assert list(view.has_trait("CUSTOM_OLD")) == [False]
    assert list(view.in_aggregate("agg-a")) == [False]


def test_host_renamed_by_a_newer_report_moves_in_the_host_index():
    cache = helpers.make_cache(factories.compute_node_obj("h1", sequence=1))
    node = factories.compute_node_obj("h1", sequence=2)
    node.host = "h1-renamed"
    cache.apply_report(helpers.host_report(node))
    view = cache.view(60)
    assert list(view.rows_of_hosts(["h1"])) == [False]
    assert list(view.rows_of_hosts(["h1-renamed"])) == [True]


# -- growth -------------------------------------------------------------------


def _assert_host_intact(table, i):
    name = f"h{i:03d}"
    row = table.row_by_uuid[factories.host_uuid(name)]
    assert row == i
    assert table.hosts[row] == name
    assert table.nodenames[row] == name
    col = table.resource_classes.get("VCPU")
    assert table.total[row, col] == 10 + i
    assert table.has_inventory[row, col]
    assert table.rows_by_host[name] == [row]


def test_growth_past_the_initial_row_capacity_keeps_earlier_rows():
    cache = helpers.make_cache()
    initial = cache.table.row_capacity
    assert initial == 64
    for i in range(initial * 2 + 5):
        assert cache.apply_report(helpers.host_report(
            factories.compute_node_obj(f"h{i:03d}", vcpus=10 + i)))
    table = cache.table
    assert table.n == initial * 2 + 5
    assert table.row_capacity >= table.n
    for i in range(table.n):
        _assert_host_intact(table, i)
    # spare rows hold no host: nothing leaks into the host index
    assert set(table.rows_by_host) == {f"h{i:03d}" for i in range(table.n)}


@pytest.mark.parametrize("kind", ["resource_classes", "traits", "aggregates"])
def test_growth_past_the_initial_column_capacity_keeps_earlier_rows(kind):
    cache = helpers.make_cache(*[
        factories.compute_node_obj(f"h{i:03d}", vcpus=10 + i,
                                   traits=["CUSTOM_T0"], aggregates=["agg0"])
        for i in range(3)])
    names = [f"CUSTOM_X{i}" for i in range(12)]    # 3 + 12 > 8 columns
    if kind == "resource_classes":
        extra = {"extra_inventories": [_custom(n, 5 + i)
                                       for i, n in enumerate(names)]}
    elif kind == "traits":
        extra = {"traits": names}
    else:
        extra = {"aggregates": names}
    node = factories.compute_node_obj("h003", vcpus=13, **extra)
    assert cache.apply_report(helpers.host_report(node))

    table = cache.table
    for i in range(4):
        _assert_host_intact(table, i)
    view = host_view.HostView(table, helpers.NOW, 60)
    # the old hosts keep their memberships; only h003 has the new names
    assert list(view.has_trait("CUSTOM_T0")) == [True] * 3 + [False]
    assert list(view.in_aggregate("agg0")) == [True] * 3 + [False]
    record = view.record(3)
    if kind == "resource_classes":
        assert {n: record.resources[n].total for n in names} == {
            n: 5 + i for i, n in enumerate(names)}
        assert table.total.shape[1] >= 15
    elif kind == "traits":
        assert record.traits == frozenset(names)
    else:
        assert record.aggregates == frozenset(names)
    first = view.record(0)
    assert first.traits == frozenset(["CUSTOM_T0"])
    assert first.aggregates == frozenset(["agg0"])
    assert not set(names) & set(first.resources)


def test_view_taken_before_growth_keeps_consistent_shapes():
    cache = helpers.make_cache(*[
        factories.compute_node_obj(f"h{i:03d}", vcpus=10 + i)
        for i in range(64)])
    old = cache.view(60)
    # a new host, new classes, traits and aggregates: every array is regrown
    for i in range(64, 70):
        cache.apply_report(helpers.host_report(factories.compute_node_obj(
            f"h{i:03d}", vcpus=10 + i,
            extra_inventories=[_custom(f"CUSTOM_R{j}", 4)
                                           for j in range(10)],
            traits=[f"CUSTOM_T{j}" for j in range(10)],
            aggregates=[f"agg{j}" for j in range(10)])))
    assert cache.table is not old.table

    assert old.n == 64
    for column in (old.hosts, old.uuids, old.nodenames, old.up(),
                   old.column("disabled"), old.fits("VCPU", 1),
                   old.fits("CUSTOM_R3", 1), old.has_trait("CUSTOM_T3"),
                   old.in_aggregate("agg3"), old.rows_of_hosts(["h065"])):
        assert column.shape == (64,)
    assert not old.fits("CUSTOM_R3", 1).any()
    assert old.row_of(factories.host_uuid("h065")) is None
    assert old.record(63).resources["VCPU"].total == 73
    col = old.rc_column("VCPU")
    assert old.free(col).shape == (64,)
    assert list(old.free(col)[:2]) == [10.0, 11.0]

    new = cache.view(60)
    assert new.n == 70
    assert new.fits("CUSTOM_R3", 4).sum() == 6


# -- usage --------------------------------------------------------------------


@pytest.mark.parametrize("generation, applied, used", [
    (4, False, 3),   # older news: ignored
    (5, False, 3),   # the same generation is the same state: not news
    (6, True, 7),    # newer
])
def test_apply_usage_ignores_an_older_generation(generation, applied, used):
    node = factories.compute_node_obj("h1")
    cache = helpers.make_cache(node)
    assert cache.apply_usage(node.uuid, 5, {"VCPU": 3})
    assert cache.apply_usage(node.uuid, generation, {"VCPU": 7}) is applied
    state = _state(cache, "h1")
    assert _resources(state)["VCPU"].used == used
    assert state.generation == (generation if applied else 5)


def test_apply_usage_replaces_the_whole_usage():
    node = factories.compute_node_obj("h1")
    cache = helpers.make_cache(node)
    cache.apply_usage(node.uuid, 1, {"VCPU": 3, "MEMORY_MB": 512})
    cache.apply_usage(node.uuid, 2, {"VCPU": 1, "CUSTOM_UNKNOWN": 5})
    used = {rc: r.used for rc, r in _resources(_state(cache, "h1")).items()}
    assert used == {"VCPU": 1, "MEMORY_MB": 0, "DISK_GB": 0}


def test_apply_usage_for_an_unknown_provider_is_ignored():
    cache = helpers.make_cache(factories.compute_node_obj("h1"))
    assert not cache.apply_usage(factories.host_uuid("nope"), 1, {"VCPU": 1})


def _kept_room_matches_the_columns(table):
    """Each kept room column holds what its expression gives now."""
    n = table.n
    used, total = table.used[:n], table.total[:n]
    for kept, expected in (
            ("free", table.capacity[:n] - used),
            ("free_unreserved", total - table.reserved[:n] - used),
            ("free_overcommitted",
             total * table.allocation_ratio[:n] - used)):
        assert (getattr(table, kept)[:n] == expected).all(), kept


def test_room_is_kept_with_every_report_and_usage():
    nodes = [factories.compute_node_obj("h%d" % i, extra_inventories=[
        _custom("CUSTOM_X", 10 + i, reserved=1, allocation_ratio=1.5)])
        for i in range(3)]
    cache = helpers.make_cache(*nodes, usages={"h1": {"CUSTOM_X": 4}})
    _kept_room_matches_the_columns(cache.table)
    cache.apply_usage(nodes[0].uuid, 7, {"VCPU": 3, "MEMORY_MB": 100})
    _kept_room_matches_the_columns(cache.table)
    # a newer report with less inventory: the room shrinks with it
    assert cache.apply_report(helpers.host_report(factories.compute_node_obj(
        "h0", sequence=nodes[0].report_sequence + 1, vcpus=2)))
    cache.apply_usage(nodes[0].uuid, 8, {"VCPU": 30})
    _kept_room_matches_the_columns(cache.table)
    assert cache.table.free[cache.table.row_by_uuid[nodes[0].uuid],
                            cache.table.resource_classes.get("VCPU")] < 0


# -- operator view ------------------------------------------------------------


@pytest.mark.parametrize("total, reserved, ratio, used, free", [
    (16, 0, 1.0, 0, 16),
    (16, 2, 1.0, 4, 10),
    (16, 2, 4.0, 4, 52),
    (10, 1, 1.5, 0, 13),    # int(13.5)
    (8, 0, 1.0, 10, -2),    # overcommitted by a shrunken inventory
])
def test_host_states_free_is_capacity_minus_used(total, reserved, ratio,
                                                 used, free):
    node = factories.compute_node_obj("h1", extra_inventories=[_custom(
        "CUSTOM_X", total, reserved=reserved, allocation_ratio=ratio)])
    cache = helpers.make_cache(node, usages={"h1": {"CUSTOM_X": used}})
    res = _resources(_state(cache, "h1"))["CUSTOM_X"]
    assert (res.total, res.reserved, res.allocation_ratio, res.used,
            res.free) == (total, reserved, ratio, used, free)


@pytest.mark.parametrize("age, up", [
    (0, True), (59.5, True), (60, True), (60.5, False), (3600, False),
])
def test_host_states_up_follows_service_down_time(age, up):
    clock = [helpers.NOW]
    cache = cache_mod.HostStateCache(clock=lambda: clock[0])
    cache.apply_report(helpers.host_report(factories.compute_node_obj("h1"),
                               received_at=helpers.NOW))
    clock[0] = helpers.NOW + age
    assert _state(cache, "h1", service_down_time=60).up is up


def test_host_states_reports_identity_and_membership():
    cell = "4c7d3bd2-7c2c-4b3e-9d0f-2a5c1f0e9a11"
    cache = helpers.make_cache(
        factories.compute_node_obj(
            "h1", zone="az1", cell_uuid=cell, traits=["CUSTOM_A"],
            aggregates=["agg1"], disabled=True, num_instances=3,
            num_io_ops=2, sequence=77),
        factories.compute_node_obj("h2"))
    state = _state(cache, "h1")
    assert (state.uuid, state.host, state.nodename) == (
        factories.host_uuid("h1"), "h1", "h1")
    assert (state.cell_uuid, state.availability_zone) == (cell, "az1")
    assert (state.traits, state.aggregates) == (["CUSTOM_A"], ["agg1"])
    assert (state.disabled, state.num_instances, state.num_io_ops,
            state.report_sequence) == (True, 3, 2, 77)
    h2 = _state(cache, "h2")
    assert (h2.cell_uuid, h2.availability_zone, h2.disabled) == (
        None, None, False)


@pytest.mark.parametrize("wanted, hosts", [
    (None, ["h1", "h2", "h3"]),
    (["h2"], ["h2"]),
    ([factories.host_uuid("h3")], ["h3"]),
    (["h1", "unknown"], ["h1"]),
])
def test_host_states_selects_by_name_or_uuid(wanted, hosts):
    cache = helpers.make_cache(*[factories.compute_node_obj(h)
                                 for h in ("h1", "h2", "h3")])
    states = cache.host_states(60, hosts=wanted)
    assert [s.host for s in states] == hosts



# -- liveness-only reports ----------------------------------------------------


def _node_with(sequence, memory_mb=4096):
    return factories.compute_node_obj("h1", memory_mb=memory_mb,
                                      sequence=sequence)


def test_a_repeated_report_refreshes_liveness_without_a_rewrite():
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_report(helpers.host_report(_node_with(1)), persisted=True)
    row = cache.table.row_by_uuid[factories.host_uuid("h1")]
    capabilities = cache.table.capabilities[row]
    later = helpers.host_report(_node_with(2), received_at=helpers.NOW + 30)
    assert cache.refresh_liveness(later) is True
    assert cache.table.report_sequence[row] == 2
    assert cache.table.last_seen[row] == helpers.NOW + 30
    # the row was not written again (the same objects are held)
    assert cache.table.capabilities[row] is capabilities
    # not newer: refused, nothing changes
    assert cache.refresh_liveness(helpers.host_report(_node_with(2))) is False
    assert cache.table.last_seen[row] == helpers.NOW + 30


def test_liveness_only_is_refused_when_the_content_differs():
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_report(helpers.host_report(_node_with(1)), persisted=True)
    assert cache.refresh_liveness(
        helpers.host_report(_node_with(2, memory_mb=8192))) is None
    assert cache.refresh_liveness(
        helpers.host_report(_node_with(2, memory_mb=1))) is None


def test_content_cached_but_not_stored_is_never_kept_by_liveness():
    # 4 GiB stored; 8 GiB cached while the database was out; then the agent
    # says 4 GiB again: the row must go back to 4 GiB, not keep 8
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    cache.apply_report(helpers.host_report(_node_with(1)), persisted=True)
    cache.apply_report(helpers.host_report(_node_with(2, memory_mb=8192)),
                       persisted=False)
    again = helpers.host_report(_node_with(3))
    assert cache.needs_persisting(again, interval=3600)
    assert cache.refresh_liveness(again) is None
    assert cache.apply_report(again) is True
    assert _resources(_state(cache, "h1"))["MEMORY_MB"].total == 4096


def test_a_view_reads_the_table_now_at_the_cache_clock():
    cache = helpers.make_cache(factories.compute_node_obj("h1"))
    view = cache.view(60)
    assert view.table is cache.table and view.n == 1
    assert view.now == helpers.NOW and view.service_down_time == 60


def test_a_reservation_holds_for_its_block_whatever_ends_it():
    cache = helpers.make_cache(factories.compute_node_obj("h1"))
    uuid = factories.host_uuid("h1")
    col = cache.table.resource_classes.get("VCPU")
    with cache.reserved(uuid, {"VCPU": 2}) as table:
        assert table is cache.table
        assert (table.marks, table.pending[0, col]) == (1, 2)
    assert (cache.table.marks, cache.table.pending[0, col]) == (0, 0)
    with pytest.raises(RuntimeError):
        with cache.reserved(uuid, {"VCPU": 2}):
            raise RuntimeError("the claim failed")
    assert (cache.table.marks, cache.table.pending[0, col]) == (0, 0)


def test_a_reservation_made_before_growth_leaves_no_mark_in_either():
    cache = helpers.make_cache(*[
        factories.compute_node_obj(f"h{i:03d}") for i in range(64)])
    uuid = factories.host_uuid("h000")
    with cache.reserved(uuid, {"VCPU": 2}) as table:
        # a new host: the cache swaps in a grown copy, mark included
        cache.apply_report(helpers.host_report(factories.compute_node_obj("h064")))
        assert cache.table is not table and cache.table.marks == 1
    col = table.resource_classes.get("VCPU")
    for held in (table, cache.table):
        assert (held.marks, held.pending[0, col]) == (0, 0)
