"""Providers of any kind in the cache: standalone providers are rows of
their kind, requests consider only the kinds they ask for, filters read
typed capabilities, and a provider the last allocation left is vacant."""

import dataclasses

import numpy as np
import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.db import allocations
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.objects import selection
from gantt.scheduler import vacancy
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

VOL = factories.host_uuid("provider/lvm")
CTR = factories.host_uuid("provider/ctr")
POOL = factories.host_uuid("provider/pool")
INSTANCE = "33333333-3333-4333-8333-333333333333"
AGG = "5a1e0c52-4a39-4c0a-9d5e-0d3b1e8b7a11"
CAPS = {"thin_provisioning_support": True, "total_capacity_gb": 1000.5,
        "max_volumes": 100, "volume_backend_name": "lvm", "one": 1}


def provider(uuid, name, inventories, traits=(), aggregates=()):
    return provider_tree.Provider(
        uuid=uuid, name=name, parent_uuid=None, root_uuid=uuid,
        inventories={rc: update_mod.Inventory(total, 0, 1, total, 1, 1.0)
                     for rc, total in inventories.items()},
        traits=frozenset(traits), aggregates=frozenset(aggregates))


def world():
    """A compute node, a volume backend, a container host and a sharing
    pool of no stated kind."""
    cache = helpers.make_cache(helpers.node("h1"))
    cache.apply_provider(
        provider(VOL, "cinder@lvm#pool", {"DISK_GB": 1000}), 1,
        details=update_mod.Standalone(
            kind="volume", service="cinder-volume@lvm",
            availability_zone="az1", capabilities=CAPS))
    cache.apply_provider(
        provider(CTR, "ctr-1", {"VCPU": 4, "MEMORY_MB": 4096}), 1,
        details=update_mod.Standalone(kind="container",
                                      service="zun-compute",
                                      instance_uuid=INSTANCE))
    cache.apply_provider(
        provider(POOL, "shared", {"DISK_GB": 500},
                 traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG]), 1)
    return cache


def request(*kinds):
    made = helpers.make_request()
    return dataclasses.replace(made, provider_kinds=frozenset(kinds)) if (
        kinds) else made


def kept(cache, req):
    view = helpers.view_of(cache)
    outcome = candidates.for_request(view, req)
    return sorted(view.hosts[outcome.mask]), outcome


def test_a_compute_request_considers_compute_nodes_only():
    cache = world()
    assert len(cache) == 1          # statistics count compute nodes
    hosts, outcome = kept(cache, request())
    assert hosts == ["h1"]
    assert [(r.label, r.count) for r in outcome.removed][0] == (
        "not of kind compute", 3)


def test_a_request_of_another_kind_considers_that_kind_only():
    cache = world()
    assert kept(cache, request("volume"))[0] == ["cinder@lvm#pool"]
    assert kept(cache, request("container", "volume"))[0] == [
        "cinder@lvm#pool", "ctr-1"]
    assert kept(cache, request("network"))[0] == []


def test_a_compute_only_cloud_pays_nothing_for_kinds():
    view = helpers.make_view(helpers.node("h1"), helpers.node("h2"))
    assert view.of_kinds(frozenset({"compute"})) is None
    outcome = candidates.for_request(view, request())
    assert outcome.removed == [] and outcome.mask.all()


def test_filters_read_capabilities_typed():
    view = helpers.view_of(world())
    row = view.row_of(VOL)
    thin = view.capability("thin_provisioning_support", lambda v: v is True,
                           False)
    assert np.flatnonzero(thin).tolist() == [row]
    types = view.capability("total_capacity_gb", lambda v: type(v).__name__,
                            "", dtype=object)
    assert types[row] == "float"
    # 1 and True are not one value: each is seen as reported
    assert view.capability("one", lambda v: v is True, None,
                           dtype=object)[row] is False
    assert view.capability("max_volumes", lambda v: v >= 100, False)[row]
    assert view.record(row).capabilities == CAPS
    # a compute node's capabilities stay the strings its agent sent
    h1 = view.row_of(factories.host_uuid("h1"))
    assert all(type(v) is str
               for v in view.record(h1).capabilities.values())


def test_usage_news_reaches_a_standalone_row():
    cache = world()
    assert cache.apply_usage(CTR, 3, {"VCPU": 2})
    table = cache.table
    row = table.row_by_uuid[CTR]
    col = table.resource_classes.get("VCPU")
    assert (int(table.used[row, col]), int(table.generation[row])) == (2, 3)
    # a new report keeps the usage the provider has
    cache.apply_provider(provider(CTR, "ctr-1", {"VCPU": 8}), 2,
                         details=update_mod.Standalone(kind="container"))
    assert int(cache.table.used[row, col]) == 2


def test_operators_see_kind_service_zone_capabilities_and_vacancy():
    cache = world()
    states = {s.uuid: s for s in cache.host_states(
        60, vacancy_kinds=frozenset({"container"}))}
    vol, ctr, pool = states[VOL], states[CTR], states[POOL]
    assert (vol.kind, vol.service, vol.availability_zone,
            vol.capabilities, vol.vacant) == (
        "volume", "cinder-volume@lvm", "az1", CAPS, False)
    assert (ctr.kind, ctr.instance_uuid, ctr.vacant) == (
        "container", INSTANCE, True)
    assert pool.kind == "pool"
    assert states[factories.host_uuid("h1")].kind == "compute"
    cache.apply_usage(CTR, 1, {"VCPU": 1})
    assert [s.vacant for s in cache.host_states(
        60, hosts=[CTR], vacancy_kinds=frozenset({"container"}))] == [False]
    assert [s.uuid for s in cache.host_states(
        60, kinds=frozenset({"volume"}))] == [VOL]


def test_a_removed_provider_is_no_candidate_and_no_host():
    cache = world()
    row = cache.table.row_by_uuid[VOL]
    assert cache.remove_provider(VOL)
    assert cache.table.kind[row] == table_mod.NO_KIND
    assert kept(cache, request("volume"))[0] == []
    assert VOL not in {s.uuid for s in cache.host_states(60)}
    # reported again: a new row
    cache.apply_provider(provider(VOL, "cinder@lvm#pool", {"DISK_GB": 10}),
                         2, details=update_mod.Standalone(kind="volume"))
    assert cache.table.row_by_uuid[VOL] != row
    assert kept(cache, request("volume"))[0] == ["cinder@lvm#pool"]


def test_a_standalone_provider_does_not_hold_a_compute_host_name():
    cache = world()
    cache.apply_provider(provider(POOL, "h2", {"DISK_GB": 500}), 2)
    assert cache.host_holder("h2", factories.host_uuid("h2")) is None
    assert cache.host_holder("h1", factories.host_uuid("other")) == (
        factories.host_uuid("h1"))


def test_the_last_release_announces_a_vacancy_once():
    cache = world()
    cache.apply_usage(CTR, 1, {"VCPU": 1})
    heard = []
    watch = vacancy.VacancyWatch(cache, ["container"], heard.append)
    state = allocations.ProviderState
    # still used: nothing; another kind: nothing
    cache.apply_usage(CTR, 2, {"VCPU": 1})
    watch.after_commit([state(CTR, 2, {"VCPU": 1})])
    cache.apply_usage(VOL, 1, {})
    watch.after_commit([state(VOL, 1, {})])
    assert heard == []
    cache.apply_usage(CTR, 3, {})
    watch.after_commit([state(CTR, 3, {})])
    assert heard == [vacancy.Vacancy(
        provider_uuid=CTR, kind="container", generation=3, name="ctr-1",
        service="zun-compute", instance_uuid=INSTANCE)]


def test_no_vacancy_kinds_announce_nothing():
    cache = world()
    heard = []
    vacancy.VacancyWatch(cache, [], heard.append).after_commit(
        [allocations.ProviderState(CTR, 3, {})])
    assert heard == []


def test_a_vacancy_left_unretired_is_announced_again_once_per_sync():
    """The announcement at the commit may be lost with its worker: each
    sync announces again, once, what stayed vacant at one generation
    since the previous sync; a provider used again, or vacant anew, or
    retired, follows its new state."""
    cache = world()
    cache.apply_usage(CTR, 4, {})
    heard = []
    watch = vacancy.VacancyWatch(cache, ["container", "volume"],
                                 heard.append)

    def announced():
        return [(v.name, v.generation) for v in watch.reannounce()]

    # the volume backend's generation is not known yet: no token
    assert announced() == [] and announced() == [("ctr-1", 4)]
    heard.clear()
    watch = vacancy.VacancyWatch(cache, ["container", "volume"],
                                 heard.append)
    cache.apply_usage(VOL, 1, {})
    # first sync: seen vacant (the volume backend too); second: both
    # announced again; third: nothing more
    assert announced() == []
    assert sorted(announced()) == [("cinder@lvm#pool", 1), ("ctr-1", 4)]
    assert announced() == []
    assert [v.provider_uuid for v in heard] == sorted([CTR, VOL])
    # used, then vacant again at a new generation: again after two syncs
    cache.apply_usage(CTR, 5, {"VCPU": 1})
    assert announced() == []
    cache.apply_usage(CTR, 6, {})
    assert announced() == []
    assert announced() == [("ctr-1", 6)]
    # retired: nothing more, ever
    cache.remove_provider(CTR)
    assert announced() == [] and announced() == []


def test_no_vacancy_kinds_announce_nothing_again():
    cache = world()
    watch = vacancy.VacancyWatch(cache, [], lambda v: None)
    assert watch.reannounce() == [] and watch.reannounce() == []


# -- a worker: reports in, restart, vacancy, retirement ----------------------


def _container_report(sequence=1):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=CTR, name="ctr-1", inventories=[compute_node.Inventory(
                resource_class="VCPU", total=4)]),
        report_sequence=sequence, kind="container", service="zun-compute",
        capabilities={"runtime": "runc", "cpu_shares": 1024,
                      "privileged": False}, instance_uuid=INSTANCE)


def _claim(worker, consumer):
    worker.claims.claim_allocations(
        consumer, selection.AllocationRequest(allocations=[
            selection.AllocationItem(resource_provider_uuid=CTR,
                                     resources={"VCPU": 1})]))


def test_a_worker_takes_keeps_vacates_and_retires_a_container_host(
        conf, sqlite_db):
    conf.set_override("connection", sqlite_db.url, "database")
    heard = []
    worker = scheduler_mod.build(conf, sqlite_db, on_vacant=heard.append)
    worker.stats.load_cache()
    worker.stats.update_provider(_container_report())
    consumer = factories.uuids(1)[0]
    _claim(worker, consumer)
    assert heard == []
    # a restarted worker loads it from the database as it was reported
    fresh = scheduler_mod.build(conf, sqlite_db)
    fresh.stats.load_cache()
    [state] = fresh.operator.get_host_states(hosts=[CTR])
    assert (state.kind, state.service, state.instance_uuid,
            state.capabilities, state.vacant) == (
        "container", "zun-compute", INSTANCE,
        {"runtime": "runc", "cpu_shares": 1024, "privileged": False},
        False)
    assert type(state.capabilities["privileged"]) is bool
    worker.claims.release(consumer)
    [vacant] = heard
    assert (vacant.provider_uuid, vacant.kind) == (CTR, "container")
    [state] = worker.operator.get_host_states(hosts=[CTR])
    assert state.vacant and state.generation == vacant.generation
    with pytest.raises(exception.ProviderConflict):
        worker.stats.retire_provider(CTR, vacant.generation - 1)
    assert worker.stats.retire_provider(CTR, vacant.generation)
    assert worker.operator.get_host_states(hosts=[CTR]) == []
    fresh.stats.reload_providers()        # providers_changed, elsewhere
    assert fresh.operator.get_host_states(hosts=[CTR]) == []


def test_a_container_request_on_an_instance_finds_its_reported_host():
    cache = world()
    req = dataclasses.replace(request("container"), on_instance=INSTANCE)
    hosts, _ = kept(cache, req)
    assert hosts == ["ctr-1"]
    other = dataclasses.replace(req, on_instance=factories.uuids(1)[0])
    assert kept(cache, other)[0] == []
    view = helpers.view_of(cache)
    assert view.record(view.row_of(CTR)).instance_uuid == INSTANCE
