"""Routers and DHCP on agents, end to end on SQLite: agents are providers
of kind ``network`` scheduled by the network profile; the agent hosting
the fewest wins, zones bound, HA routers and DHCP never share an agent."""

import collections

import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.scheduler.pipeline import zones as zones_mod
from gantt.scheduler.pipeline.weighers import hosted
from gantt.tests import factories
from gantt.tests.unit.scheduler import agents
from gantt.tests.unit.scheduler import helpers
from gantt.tests.unit.scheduler import service_helpers as h

GROUP = h.GROUP


@pytest.fixture
def network(conf, sqlite_db):
    """A worker scheduling routers and DHCP (a network profile's lists)."""
    conf.set_override("connection", sqlite_db.url, "database")
    mgr = scheduler_mod.build(agents.network_conf(conf), sqlite_db)
    mgr.stats.load_cache()
    return mgr


def _agents(scheduler, loads, resource_class=agents.ROUTER, zones=None):
    """Agents ``a0…`` hosting ``loads[i]`` consumers each."""
    zones = zones or {}
    for i, load in enumerate(loads):
        name = "a%d" % i
        scheduler.stats.update_provider(agents.agent(
            name, resource_class=resource_class, zone=zones.get(name)))
        for _ in range(load):
            scheduler.claims.claimer.claim(factories.uuids(1)[0], {
                factories.host_uuid(name): {resource_class: 1}})
    scheduler.stats.load_cache()


def _place(scheduler, spec, count=1):
    result = scheduler.placer.select_destinations(spec,
                                                  factories.uuids(count))
    return [sels[0].service_host for sels in result]


def _routers(scheduler):
    return {host: used.get(agents.ROUTER, 0)
            for host, used in h.used(scheduler.stats.db).items()}


def test_router_goes_to_the_agent_with_the_fewest(network):
    _agents(network, [3, 1, 2, 5])
    assert _place(network, agents.unit_spec(agents.ROUTER)) == ["a1"]
    assert _routers(network)["a1"] == 2


def test_routers_spread_until_even(network):
    _agents(network, [2, 0, 1])
    for _ in range(3):
        _place(network, agents.unit_spec(agents.ROUTER))
    assert _routers(network) == {"a0": 2, "a1": 2, "a2": 2}


def test_zone_bounds_the_router(network):
    _agents(network, [4, 0, 3], zones={"a0": "az1", "a1": "az2",
                                       "a2": "az1"})
    assert _place(network, agents.unit_spec(agents.ROUTER,
                                            zone="az1")) == ["a2"]


def test_ha_router_lands_on_distinct_agents(network):
    _agents(network, [0, 5, 1, 2])
    hosts = _place(network, agents.unit_spec(agents.ROUTER, group=GROUP,
                                             num_instances=3), 3)
    # the three least loaded, never one agent twice
    assert sorted(hosts) == ["a0", "a2", "a3"]


def test_ha_router_needs_as_many_agents(network):
    _agents(network, [0, 0])
    with pytest.raises(exception.NoValidHost) as err:
        _place(network, agents.unit_spec(agents.ROUTER, group=GROUP,
                                         num_instances=3), 3)
    assert "ServerGroupAntiAffinityFilter" in str(err.value)
    # all or nothing: no router claimed
    assert _routers(network) == {}


def test_ha_group_sees_members_placed_by_an_earlier_call(network):
    """Anti-affinity works for consumers that are not instances: the
    group's members are found by their claims, whatever they are."""
    _agents(network, [0, 0, 0])
    first = _place(network, agents.unit_spec(agents.ROUTER, group=GROUP))
    second = _place(network, agents.unit_spec(agents.ROUTER, group=GROUP))
    third = _place(network, agents.unit_spec(agents.ROUTER, group=GROUP))
    assert len(set(first + second + third)) == 3


def test_dhcp_on_n_agents_fewest_networks_first(network):
    _agents(network, [3, 0, 1, 4], resource_class=agents.DHCP)
    hosts = _place(network, agents.unit_spec(agents.DHCP, group=GROUP,
                                             num_instances=2), 2)
    assert sorted(hosts) == ["a1", "a2"]


def test_router_and_dhcp_agents_do_not_mix(network):
    _agents(network, [0, 0], resource_class=agents.DHCP)
    with pytest.raises(exception.NoValidHost):
        _place(network, agents.unit_spec(agents.ROUTER))


# -- an HA router over several zones (availability_zone_hints) ------------

ZONES = {"a0": "az1", "a1": "az1", "a2": "az2", "a3": "az3", "a4": "az3",
         "a5": "az4"}


def _zone_hints(*zones):
    return {zones_mod.HINT: list(zones)}


def _zones_of(hosts):
    return sorted(ZONES[h] for h in hosts)


def test_ha_router_over_three_zones_takes_one_agent_in_each(network):
    # without the spread, the three least loaded would be a0, a4 and a1
    _agents(network, [0, 1, 5, 2, 0, 0], zones=ZONES)
    hosts = _place(network, agents.unit_spec(
        agents.ROUTER, group=GROUP, num_instances=3,
        hints=_zone_hints("az1", "az2", "az3")), 3)
    assert sorted(hosts) == ["a0", "a2", "a4"]


def test_more_bindings_than_zones_fill_the_zones_evenly(network):
    _agents(network, [0, 1, 5, 2, 0, 0], zones=ZONES)
    hosts = _place(network, agents.unit_spec(
        agents.ROUTER, group=GROUP, num_instances=4,
        hints=_zone_hints("az1", "az3")), 4)
    assert _zones_of(hosts) == ["az1", "az1", "az3", "az3"]
    assert sorted(hosts) == ["a0", "a1", "a3", "a4"]


def test_a_hinted_zone_without_agents_leaves_the_others_to_share(network):
    _agents(network, [3, 0, 0, 0, 0, 0], zones=ZONES)
    hosts = _place(network, agents.unit_spec(
        agents.ROUTER, group=GROUP, num_instances=2,
        hints=_zone_hints("az1", "az9")), 2)
    assert sorted(hosts) == ["a0", "a1"]


def test_one_router_with_several_hints_stays_in_them(network):
    # a5 (az4) hosts nothing, but it is not hinted
    _agents(network, [4, 3, 5, 2, 6, 0], zones=ZONES)
    assert _place(network, agents.unit_spec(
        agents.ROUTER, hints=_zone_hints("az1", "az3"))) == ["a3"]


def test_agents_outside_the_hints_are_counted_out(network):
    _agents(network, [0, 0], zones={"a0": "az1", "a1": "az1"})
    with pytest.raises(exception.NoValidHost) as err:
        _place(network, agents.unit_spec(
            agents.ROUTER, hints=_zone_hints("az2", "az3")))
    assert "2 not in the hinted zones" in str(err.value)


@pytest.mark.parametrize("fields, message", [
    ({"zone": "az1", "hints": _zone_hints("az1", "az2")}, "exclusive"),
    ({"hints": _zone_hints("az1", "")}, "zone names"),
    ({"hints": _zone_hints("az1", "z" * 256)}, "zone names"),
])
def test_bad_zone_hints_are_refused_and_claim_nothing(network, fields,
                                                      message):
    _agents(network, [0], zones={"a0": "az1"})
    with pytest.raises(exception.InvalidRequest, match=message):
        _place(network, agents.unit_spec(agents.ROUTER, **fields))
    assert _routers(network) == {}


# -- the weighers alone ---------------------------------------------------


@pytest.mark.parametrize("weigher_cls, rc", [
    (hosted.LeastRoutersWeigher, agents.ROUTER),
    (hosted.LeastNetworksWeigher, agents.DHCP),
])
def test_weigher_raw_value_is_the_hosted_count_on_both_paths(
        conf, weigher_cls, rc):
    view = helpers.make_view(
        agents.agent("a0", resource_class=rc),
        agents.agent("a1", resource_class=rc),
        helpers.node("compute"),
        usages={"a0": {rc: 7}, "a1": {rc: 2}})
    request = helpers.make_request()
    weigher = weigher_cls(conf)
    rows = list(range(view.n))
    per_host = [weigher.weigh_host(view.record(r), request) for r in rows]
    assert per_host == [7.0, 2.0, 0.0]
    assert list(weigher.weigh_columns(view, request, rows)) == per_host
    assert weigher.config_multiplier() == -1.0
    assert not weigher.constant(view, request)


def test_weigher_counts_this_requests_earlier_instances(conf):
    view = helpers.make_view(agents.agent("a0"), usages={"a0": {
        agents.ROUTER: 1}})
    view.consume(0, {agents.ROUTER: 2})
    request = helpers.make_request()
    weigher = hosted.LeastRoutersWeigher(conf)
    assert weigher.weigh_host(view.record(0), request) == 3.0
    assert list(weigher.weigh_columns(view, request, [0])) == [3.0]


def test_weigher_is_constant_without_agents(conf):
    view = helpers.make_view(helpers.node("compute"))
    weigher = hosted.LeastRoutersWeigher(conf)
    assert weigher.constant(view, helpers.make_request())


def test_weigher_weighs_zero_on_a_fleet_without_agents(conf):
    # asked anyway (by the host-by-host runner, say), it gives one 0 a row
    view = helpers.make_view(helpers.node("c0"), helpers.node("c1"),
                             helpers.node("c2"))
    weigher = hosted.LeastRoutersWeigher(conf)
    request = helpers.make_request()
    assert list(weigher.weigh_columns(view, request, [0, 2])) == [0.0, 0.0]
    assert list(weigher.weigh_columns(view, request, slice(None))) == [
        0.0] * 3
    assert weigher.weigh_host(view.record(1), request) == 0.0


def test_hosted_counts_follow_claims(network):
    _agents(network, [0, 0, 0])
    counts = collections.Counter(
        _place(network, agents.unit_spec(agents.ROUTER))[0]
        for _ in range(9))
    assert sorted(counts.values()) == [3, 3, 3]
