"""The topology model: locations, levels, distances and domain codes."""

import numpy as np
import pytest

from gantt import exception
from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import topology

LEVELS = topology.Topology(["datacenter", "room", "row", "rack"])


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
    ("rack", "is not level=name"),
    ("rack=b 07", "is not a name"),
    ("rack=" + "x" * 65, "is not a name"),
    ("rack=b/" * 60, "longer than 255"),
])
def test_a_bad_location_is_refused_with_the_reason(text, why):
    with pytest.raises(exception.InvalidLocation) as err:
        LEVELS.parse(text)
    assert why in str(err.value)
    assert isinstance(err.value, exception.InvalidRequest)


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
