"""Containers on instances, end to end on SQLite: container hosts are
providers of kind ``container`` scheduled by the container profile of
doc/examples/services.conf with flavorless requests; sequential fill,
place on an instance, ProvidersFull when every host is full, groups and
zones."""

import random
import re

import numpy as np
import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.objects import request_spec
from gantt.scheduler.pipeline import containers
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import picking
from gantt.scheduler.pipeline import pipeline as pipeline_mod
from gantt.scheduler.pipeline import profiles as profiles_mod
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.pipeline import translate
from gantt.scheduler.pipeline import weighers as weighers_base
from gantt.scheduler.pipeline.filters import resources as resource_filter
from gantt.scheduler.pipeline.weighers import resources as resource_weighers
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import agents
from gantt.tests.unit.scheduler import helpers
from gantt.tests.unit.scheduler import service_helpers as h

SEQ = {"fill": ["sequential"]}
#: the profiles of a worker scheduling containers
CONTAINER_PROFILES = dict(
    profiles_mod.NOVA_PROFILES, container=request_mod.Profile(
        "container", frozenset({"container"}), None, False))
#: instance uuid of each container host, by host name
INSTANCES = {name: factories.host_uuid("instance/" + name)
             for name in ("c-a", "c-b", "c-c", "c-d")}


@pytest.fixture
def magnum(conf, sqlite_db):
    """A worker whose picking would be random among the best three."""
    conf.set_override("connection", sqlite_db.url, "database")
    conf.set_override("host_subset_size", 3, "filter_scheduler")
    conf.set_override("shuffle_best_same_weighed_hosts", True,
                      "filter_scheduler")
    mgr = scheduler_mod.build(agents.container_conf(conf), sqlite_db)
    mgr.stats.load_cache()
    return mgr


def _hosts(scheduler, names=("c-c", "c-a", "c-b"), zones=None, vcpus=4):
    """Container hosts (providers of kind ``container``), reported out of
    name order."""
    zones = zones or {}
    for name in names:
        scheduler.stats.update_provider(agents.container_provider(
            name, INSTANCES[name], vcpus=vcpus, zone=zones.get(name)))


def _place(scheduler, hints=SEQ, count=1, **fields):
    spec = agents.container_spec(hints=hints, num_instances=count,
                                 **fields)
    uuids = factories.uuids(count)
    result = scheduler.placer.select_destinations(spec, uuids)
    return [sels[0].service_host for sels in result], uuids


def _vcpus(scheduler):
    return {host: used.get("VCPU", 0)
            for host, used in h.used(scheduler.stats.db).items()}


def test_sequential_fill_fills_hosts_in_name_order(magnum):
    _hosts(magnum)
    placed = [_place(magnum)[0][0] for _ in range(6)]
    assert placed == ["c-a"] * 4 + ["c-b"] * 2
    assert _vcpus(magnum) == {"c-a": 4, "c-b": 2}


def test_sequential_fill_refills_a_hole_first(magnum):
    _hosts(magnum)
    uuids = [_place(magnum)[1][0] for _ in range(6)]
    magnum.claims.release(uuids[1])
    assert _place(magnum)[0] == ["c-a"]


def test_sequential_fill_of_a_multi_instance_request(magnum):
    _hosts(magnum)
    hosts, _uuids = _place(magnum, count=6)
    assert hosts == ["c-a"] * 4 + ["c-b"] * 2


def test_without_the_hint_the_weighers_spread(conf, magnum):
    conf.set_override("host_subset_size", 1, "filter_scheduler")
    conf.set_override("shuffle_best_same_weighed_hosts", False,
                      "filter_scheduler")
    _hosts(magnum)
    placed = {_place(magnum, hints={})[0][0] for _ in range(3)}
    assert len(placed) == 3


def test_every_host_full_is_providers_full(magnum):
    _hosts(magnum, names=("c-a", "c-b"), vcpus=2)
    _place(magnum, count=4)
    with pytest.raises(exception.ProvidersFull) as err:
        _place(magnum)
    assert isinstance(err.value, exception.NoValidHost)
    assert err.value.kwargs["hosts"] == 2
    assert err.value.code == "gantt.providers_full"
    assert "2 lacked VCPU" in str(err.value)


def test_a_request_that_is_not_a_container_one_gets_no_valid_host(magnum):
    """A Nova request (a flavor, the default profile) never lands on a
    container host: a plain NoValidHost, even with room left; a container
    request on the same full host is told ProvidersFull."""
    _hosts(magnum, names=("c-a", "c-b"), vcpus=1)
    nova = factories.request(factories.flavor(vcpus=1, memory_mb=1024,
                                              root_gb=0))
    with pytest.raises(exception.NoValidHost) as err:
        magnum.placer.select_destinations(nova, factories.uuids(1))
    assert type(err.value) is exception.NoValidHost
    assert _vcpus(magnum) == {}
    _place(magnum, count=2)
    with pytest.raises(exception.ProvidersFull):
        _place(magnum, hints={})


def test_no_host_allowed_at_all_is_no_valid_host(magnum):
    """Full means: a host passed every rule but room. A zone with no
    container host is not full, and another instance elsewhere would not
    help."""
    _hosts(magnum, zones={"c-a": "az1", "c-b": "az1", "c-c": "az1"})
    with pytest.raises(exception.NoValidHost) as err:
        _place(magnum, availability_zone="az2")
    assert type(err.value) is exception.NoValidHost


def test_on_instance_places_only_there(magnum):
    _hosts(magnum)
    hints = dict(SEQ, on_instance=[INSTANCES["c-c"]])
    assert _place(magnum, hints=hints, count=2)[0] == ["c-c", "c-c"]
    assert _place(magnum, hints={"on_instance": [INSTANCES["c-b"]]})[0] == [
        "c-b"]


def test_on_instance_when_that_instance_is_full(magnum):
    _hosts(magnum)
    hints = {"on_instance": [INSTANCES["c-b"]]}
    _place(magnum, hints=hints, count=4)
    with pytest.raises(exception.ProvidersFull) as err:
        _place(magnum, hints=hints)
    assert err.value.kwargs["hosts"] == 1
    assert "not the container host of instance" in str(err.value)


def test_on_instance_unknown_is_no_valid_host(magnum):
    _hosts(magnum)
    unknown = factories.uuids(1)[0]
    with pytest.raises(exception.NoValidHost) as err:
        _place(magnum, hints={"on_instance": [unknown]})
    assert type(err.value) is exception.NoValidHost
    assert re.search(r"\bnot the container host of instance %s\b" % unknown,
                     str(err.value))
    assert _vcpus(magnum) == {}


@pytest.mark.parametrize("hints, message", [
    ({"fill": ["densest"]},
     "Invalid request: scheduler hint fill must be one of sequential, "
     "got 'densest'$"),
    ({"fill": ["sequential", "sequential"]},
     "Invalid request: scheduler hint fill takes one value, got 2$"),
    ({"on_instance": ["c-a"]},
     "Invalid request: scheduler hint on_instance must be an instance "
     "uuid, got 'c-a'$"),
])
def test_bad_hints_are_refused(magnum, hints, message):
    _hosts(magnum)
    with pytest.raises(exception.InvalidRequest, match=message):
        _place(magnum, hints=hints)
    assert _vcpus(magnum) == {}


def test_anti_affinity_among_containers(magnum):
    _hosts(magnum)
    group = request_spec.InstanceGroup(uuid=h.GROUP, policy="anti-affinity",
                                       rules={})
    placed = [_place(magnum, instance_group=group)[0][0] for _ in range(3)]
    assert placed == ["c-a", "c-b", "c-c"]
    # every instance holds a member: another instance would take the next
    with pytest.raises(exception.ProvidersFull):
        _place(magnum, instance_group=group)


def test_affinity_among_containers(magnum):
    _hosts(magnum)
    _place(magnum, hints={"on_instance": [INSTANCES["c-b"]]})
    group = request_spec.InstanceGroup(uuid=h.GROUP, policy="affinity",
                                       rules={})
    placed = [_place(magnum, instance_group=group)[0][0] for _ in range(4)]
    # the first member goes first in order, the others follow it
    assert placed == ["c-a"] * 4
    # the one host the group allows is full (as with on_instance, a new
    # instance would not help: the caller knows it pinned the request)
    with pytest.raises(exception.ProvidersFull) as err:
        _place(magnum, instance_group=group)
    assert err.value.kwargs["hosts"] == 1


def test_zone_bounds_sequential_fill(magnum):
    _hosts(magnum, names=("c-a", "c-b", "c-c", "c-d"),
           zones={"c-a": "az1", "c-b": "az2", "c-c": "az1", "c-d": "az2"})
    placed = [_place(magnum, availability_zone="az2")[0][0]
              for _ in range(8)]
    assert placed == ["c-b"] * 4 + ["c-d"] * 4
    with pytest.raises(exception.ProvidersFull) as err:
        _place(magnum, availability_zone="az2")
    assert err.value.kwargs["hosts"] == 2


# -- the picking rule alone: a property test ------------------------------


def _reference(names, free, need):
    """First fit in name order: the oracle."""
    fitting = [n for n in sorted(names) if free[n] >= need]
    return fitting[0] if fitting else None


@pytest.mark.parametrize("seed", range(40))
def test_sequential_pick_is_first_fit_in_name_order_whatever_the_rng(
        conf, seed):
    gen = random.Random(seed)
    names = gen.sample(["c%02d" % i for i in range(30)], gen.randint(1, 12))
    used = {n: gen.randint(0, 8) for n in names}
    need = gen.randint(1, 4)
    view = helpers.make_view(
        *(agents.container_provider(n, factories.host_uuid("i" + n), vcpus=8)
          for n in names),
        usages={n: {"VCPU": used[n]} for n in names})
    request = translate.from_spec(
        agents.container_spec(vcpus=need, hints=SEQ), factories.uuids(1),
        helpers.FakeLookup(), CONTAINER_PROFILES)
    conf.set_override("host_subset_size", gen.randint(1, 5),
                      "filter_scheduler")
    conf.set_override("shuffle_best_same_weighed_hosts", gen.random() < .5,
                      "filter_scheduler")
    expected = _reference(names, {n: 8 - used[n] for n in names}, need)
    picks = set()
    for rng_seed in range(5):
        pick = _pick(conf, view, request, random.Random(rng_seed))
        picks.add(pick and view.hosts[pick[0]])
    assert picks == {expected}


class _Cycle:
    def __init__(self, view, request):
        self.view, self.request = view, request


def _pick(conf, view, request, rng):
    pipeline = pipeline_mod.Pipeline(
        filters_base.FilterRunner([resource_filter.ResourceFilter(conf)]),
        weighers_base.WeigherRunner([resource_weighers.RAMWeigher(conf),
                                     resource_weighers.CPUWeigher(conf)]),
        conf)
    outcome = pipeline.filters.run(view, request,
                                   np.ones(view.n, dtype=bool))
    if not outcome.mask.any():
        return None
    weighing = pipeline.weighers.weigh(view, request, outcome.mask)
    return picking.Picker(conf, rng).pick(weighing,
                                          _Cycle(view, request))


def test_first_in_order_breaks_a_host_name_tie_by_node_name():
    class View:
        hosts = np.array(["h", "h", "g", "h"], dtype=object)
        nodenames = np.array(["n3", "n1", "z", "n2"], dtype=object)
        uuids = np.array(["u0", "u1", "u2", "u3"], dtype=object)
    assert containers.first_in_order(View, np.array([0, 1, 3])) == 1
    assert containers.first_in_order(View, np.array([0, 1, 2, 3])) == 2


def test_first_in_order_breaks_a_tie_of_two():
    class View:
        hosts = np.array(["h", "h"], dtype=object)
        nodenames = np.array(["n2", "n1"], dtype=object)
        uuids = np.array(["u0", "u1"], dtype=object)
    assert containers.first_in_order(View, np.array([0, 1])) == 1


def test_a_hint_given_as_one_string_is_read_as_one_value():
    uuid = INSTANCES["c-a"]
    assert containers.request_fields(
        {"fill": "sequential", "on_instance": uuid}) == {
            "fill": "sequential", "on_instance": uuid}


class _RefuseAll(filters_base.BaseFilter):
    name = "RefuseAll"

    def host_passes(self, host, request):
        return False


def test_forced_hosts_count_as_full_past_the_other_filters(conf):
    # as Nova forces hosts past the filters, a forced container request
    # that no host had room for counts the hosts the other filters refuse
    view = helpers.make_view(helpers.node("c0"), helpers.node("c1"))
    runner = filters_base.FilterRunner([_RefuseAll(conf)])
    mask = np.ones(view.n, dtype=bool)

    class Forced:
        forced = True

    class Free:
        forced = False
    assert containers.full_hosts(runner, view, Forced, mask) == 2
    assert containers.full_hosts(runner, view, Free, mask) == 0


def test_rows_on_instance_by_stat_only_where_reported():
    view = helpers.make_view(
        agents.container_host("c-a", INSTANCES["c-a"]), helpers.node("n"),
        agents.container_host("c-b", INSTANCES["c-b"]))
    assert containers.rows_on_instance(view, INSTANCES["c-b"]).tolist() == [
        False, False, True]


def test_rows_on_instance_by_report_link_follow_the_reports():
    """The link of a provider report is an indexed column: a host
    reported again with another instance moves with it, and a retired
    host is linked to nothing."""
    cache = helpers.make_cache(
        agents.container_provider("c-a", INSTANCES["c-a"]),
        helpers.node("n"),
        agents.container_provider("c-b", INSTANCES["c-b"]))

    def linked(instance):
        return containers.rows_on_instance(helpers.view_of(cache),
                                           instance).tolist()

    assert linked(INSTANCES["c-b"]) == [False, False, True]
    assert linked(INSTANCES["c-a"]) == [True, False, False]
    assert linked(str(factories.uuids(1)[0])) == [False] * 3
    moved = agents.container_provider("c-a", INSTANCES["c-b"])
    cache.apply_provider(helpers.standalone(moved), moved.report_sequence,
                         details=update_mod.Standalone.from_report(moved))
    assert linked(INSTANCES["c-b"]) == [True, False, True]
    assert linked(INSTANCES["c-a"]) == [False] * 3
    cache.remove_provider(factories.host_uuid("c-b"))
    assert linked(INSTANCES["c-b"]) == [True, False, False]


def test_is_container_request_by_provider_kinds():
    class Request:
        fill = None
        on_instance = None
        provider_kinds = ("container",)
    assert containers.is_container_request(Request)
    Request.provider_kinds = ("compute",)
    assert not containers.is_container_request(Request)
