"""The topology model: locations, levels, distances and domain codes."""

import logging

import numpy as np
import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.db import levels as db_levels
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.objects import request_spec
from gantt.scheduler import explain
from gantt.scheduler.state import aggregates as aggregates_mod
from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import topology
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

LEVELS = topology.Topology(["datacenter", "room", "row", "rack"])
ZONED = topology.Topology(("zone", "room", "row", "rack"))


def test_host_is_the_last_implicit_level():
    assert LEVELS.levels == ("datacenter", "room", "row", "rack", "host")
    assert topology.Topology(["rack", "host"]).levels == ("rack", "host")


@pytest.mark.parametrize("levels", [["host", "rack"], ["rack", "rack"]])
def test_a_bad_level_list_is_a_configuration_error(levels):
    with pytest.raises(exception.ConfigurationError):
        topology.Topology(levels)


def test_a_location_reads_back_as_written():
    location = LEVELS.parse("room=r1/row=b/rack=b07")
    assert location.get("rack") == "b07"
    assert location.get("datacenter") is None
    assert str(location) == "room=r1/row=b/rack=b07"


@pytest.mark.parametrize("text,why", [
    ("rack=b07/row=b", "out of order"),
    ("row=b/row=c", "out of order"),
    ("shelf=s1", "unknown level 'shelf'"),
    ("host=h1", "unknown level 'host'"),
    ("zone=z1/row=b", "'zone' is the availability zone"),
    ("rack", "is not level=name"),
    ("rack=b 07", "is not a name"),
    ("rack=" + "x" * 65, "is not a name"),
    ("rack=b/" * 60, "longer than 255"),
])
def test_a_bad_location_is_refused_with_the_reason(text, why):
    with pytest.raises(exception.InvalidLocation) as err:
        ZONED.parse(text)
    assert why in str(err.value)
    assert isinstance(err.value, exception.InvalidRequest)


@pytest.mark.parametrize("levels", [LEVELS, ZONED])
def test_zone_takes_hard_policies_listed_or_not_soft_ones_if_listed(levels):
    for rule in topology.HARD_RULES:
        assert topology.check_policy(levels, topology.LevelPolicy(
            "zone", rule)).level == "zone"
    soft = topology.LevelPolicy("zone", "soft-affinity")
    if "zone" in levels.levels:
        assert topology.check_policy(levels, soft) is soft
    else:
        with pytest.raises(exception.UnknownLevel):
            topology.check_policy(levels, soft)


def test_the_report_wins_and_aggregates_fill_the_missing_levels():
    reported = LEVELS.parse("row=b/rack=b07")
    aggregates = topology.Location((("room", "r1"), ("rack", "a01")))
    assert str(reported.filled(aggregates, LEVELS.levels)) == (
        "room=r1/row=b/rack=b07")


def test_distance_is_the_number_of_levels_below_the_lowest_common_one():
    b07 = LEVELS.parse("datacenter=d/room=r1/row=b/rack=b07")
    b08 = LEVELS.parse("datacenter=d/room=r1/row=b/rack=b08")
    c01 = LEVELS.parse("datacenter=d/room=r1/row=c/rack=c01")
    assert LEVELS.distance(b07, b07, same_host=True) == 0
    assert LEVELS.distance(b07, b07) == 1
    assert LEVELS.distance(b07, b08) == 2
    assert LEVELS.distance(b07, c01) == 3
    assert LEVELS.distance(b07, topology.NOWHERE) == 5


def test_a_policy_on_an_unknown_level_is_refused():
    with pytest.raises(exception.UnknownLevel):
        topology.check_policy(LEVELS, topology.LevelPolicy(
            "shelf", topology.ANTI_AFFINITY))
    with pytest.raises(exception.InvalidRequest):
        topology.check_policy(LEVELS, topology.LevelPolicy(
            "rack", topology.MAX_PER, limit=0))
    for weight in (-1.0, float("nan"), float("inf")):
        with pytest.raises(exception.InvalidRequest, match="weight"):
            topology.check_policy(LEVELS, topology.LevelPolicy(
                "rack", topology.SOFT_AFFINITY, weight=weight))


def test_the_host_table_gives_domain_codes_per_level_and_grows_with_them():
    table = table_mod.HostTable.empty(rows=2)
    table.n = 2
    table.set_location(0, LEVELS.parse("row=b/rack=b07"))
    table.set_location(1, LEVELS.parse("rack=b08"))
    assert table.domains("rack").tolist() == [0, 1]
    assert table.domains("row").tolist() == [0, -1]
    assert table.domains("room").tolist() == [-1, -1]
    assert table.domains("host").tolist() == [0, 1]
    grown = table.grown(rows=200)
    grown.n = 3
    grown.set_location(2, LEVELS.parse("row=b/rack=b07"))
    assert grown.domains("rack").tolist() == [0, 1, 0]
    assert grown.topology.names("rack") == ["b07", "b08"]
    assert str(grown.locations[2]) == "row=b/rack=b07"
    assert table.domains("rack").tolist() == [0, 1]   # the old one kept
    assert isinstance(grown.domains("rack"), np.ndarray)


# -- the cache: reports and topology aggregates ------------------------------

def _rack(name, hosts, level="rack"):
    return aggregate_obj.Aggregate(
        uuid=factories.host_uuid("agg-" + name), name=name, hosts=hosts,
        metadata={topology.AGGREGATE_KEY: level})


def _location(cache, host):
    row = cache.table.rows_by_host[host][0]
    return str(cache.table.locations[row])


def test_a_reported_location_is_the_hosts_location():
    cache = helpers.make_cache(helpers.node("h1", location="row=b/rack=b07"))
    assert _location(cache, "h1") == "row=b/rack=b07"
    assert cache.host_states(60)[0].location == "row=b/rack=b07"


def test_topology_aggregates_fill_the_levels_the_report_leaves_out():
    cache = helpers.make_cache(
        helpers.node("h1", location="rack=b07"), helpers.node("h2"),
        aggregates=[_rack("a01", ["h1", "h2"]),
                    _rack("row-b", ["h1"], level="row")])
    # the report wins at rack; the aggregates say the row, and all of h2
    assert _location(cache, "h1") == "row=row-b/rack=b07"
    assert _location(cache, "h2") == "rack=a01"
    assert cache.table.domains("rack").tolist() == [0, 1]


def test_a_topology_aggregate_tagged_later_moves_every_member():
    plain = aggregate_obj.Aggregate(uuid=factories.host_uuid("agg-a01"),
                                    name="a01", hosts=["h1"], metadata={})
    cache = helpers.make_cache(helpers.node("h1"), aggregates=[plain])
    assert _location(cache, "h1") == ""
    cache.apply_aggregates(aggregates_mod.AggregateSet([_rack("a01",
                                                              ["h1"])]))
    assert _location(cache, "h1") == "rack=a01"
    cache.apply_aggregates(aggregates_mod.AggregateSet([]))
    assert _location(cache, "h1") == ""
    assert cache.table.domains("rack").tolist() == [-1]


def test_a_report_naming_an_unknown_level_is_refused_and_changes_nothing(
        scheduler):
    with pytest.raises(exception.InvalidLocation) as err:
        factories.report(scheduler, "h1", location="shelf=s1")
    assert "unknown level 'shelf'" in str(err.value)
    assert scheduler.operator.get_host_states() == []


def test_hosts_outside_the_levels_are_found_for_the_start_log():
    cache = helpers.make_cache(helpers.node("h1", location="shelf=s1"),
                               helpers.node("h2", location="rack=b07"))
    assert [(h, str(loc)) for h, loc in cache.hosts_outside(LEVELS)] == [
        ("h1", "shelf=s1")]


# -- the worker: place, then explain -------------------------------------


def _soft_group(uuid):
    return request_spec.InstanceGroup(
        uuid=uuid, policy="soft-affinity", level_policies=[
            request_spec.GroupLevelPolicy(level="row",
                                          rule="soft-affinity")])


def test_explain_shows_each_candidates_distance_to_the_group(scheduler):
    rows = {"h1": "a", "h2": "a", "h3": "b"}
    for host, rack in (("h1", "a1"), ("h2", "a2"), ("h3", "b1")):
        factories.report(scheduler, host, vcpus=1,
                         location="row=%s/rack=%s" % (rows[host], rack))
    group = _soft_group(factories.uuids(1)[0])
    [placed] = scheduler.placer.select_destinations(
        factories.request(instance_group=group), factories.uuids(1))
    member = placed[0].service_host
    # a group with soft policies only: the caller says where its members
    # are, as Nova's conductor does
    group.hosts = [member]
    explained = scheduler.operator.explain(
        factories.request(instance_group=group))
    # the member's host is full (1 VCPU); the rest of its row is 2 levels
    # away (row, then rack, then host), the other row 5 (nothing common)
    assert {w.host: w.weights[explain.DISTANCE]
            for w in explained.weighed} == {
        h: 2.0 if rows[h] == rows[member] else 5.0
        for h in rows if h != member}


def _start(conf, db, caplog):
    """A worker started on ``db``: what it logged of the topology."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="gantt.scheduler.intake"):
        scheduler_mod.build(conf, db).stats.load_cache()
    return caplog.text


def test_a_worker_logs_its_levels_and_the_hosts_outside_them(
        scheduler, conf, sqlite_db, caplog):
    factories.report(scheduler, "h1", location="row=a/rack=a1")
    factories.report(scheduler, "h2", location="row=a")
    first = _start(conf, sqlite_db, caplog)
    assert "Topology levels: datacenter,room,row,rack,host" in first
    assert "changed" not in first and "Host h1" not in first
    # the operator drops the rack level; a worker starts on the same data
    conf.set_override("levels", ["datacenter", "room", "row"], "topology")
    text = _start(conf, sqlite_db, caplog)
    assert ("Topology levels changed: datacenter,room,row,rack -> "
            "datacenter,room,row; 1 host(s) have a location naming a level "
            "no longer listed") in text
    assert "Topology levels: datacenter,room,row,host" in text
    assert ("Host h1 is at row=a/rack=a1: level(s) rack are not in "
            "[topology] levels") in text
    assert "Host h2" not in text
    # the next worker with the same levels: no change to report
    assert "changed" not in _start(conf, sqlite_db, caplog)
    with sqlite_db.begin() as conn:
        assert db_levels.recorded(conn) == ("datacenter", "room", "row")


def test_a_provider_of_any_kind_has_a_location(scheduler):
    pool = factories.host_uuid("pool-1")
    report = provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=pool, name="pool-1", inventories=[compute_node.Inventory(
                resource_class="DISK_GB", total=1000)]),
        report_sequence=1, kind="volume", location="row=b/rack=b07")
    scheduler.stats.update_provider(report)
    [state] = scheduler.operator.get_host_states(hosts=[pool])
    assert state.location == "row=b/rack=b07"
    report.location, report.report_sequence = "rack=b07/row=b", 2
    with pytest.raises(exception.InvalidLocation):
        scheduler.stats.update_provider(report)
    [state] = scheduler.operator.get_host_states(hosts=[pool])
    assert state.location == "row=b/rack=b07"
