"""Forged or broken messages must not do lasting damage (issue #18).

The usage sync makes the database the truth over peers' casts; a new
agent boot id resets a host's report sequence; an operator can reset it;
a host name belongs to one provider.
"""

from gantt.objects import usage
from gantt.scheduler import manager as manager_mod
from gantt.tests import factories

SMALL = {"vcpus": 1, "memory_mb": 1024, "root_gb": 10}


def _cache_used(manager, host):
    [state] = manager.get_host_states([host])
    return {r.resource_class: r.used for r in state.resources if r.used}


def _generation(manager, host):
    [state] = manager.get_host_states([host])
    return state.generation


def _forge_usage(manager, host, generation, usages):
    manager.apply_peer_usage([usage.ProviderUsage(
        resource_provider_uuid=factories.host_uuid(host),
        generation=generation, usages=usages)])


# -- the usage sync overrides peers' casts ------------------------------------


def test_a_forged_high_generation_lasts_until_the_next_sync(manager):
    manager.update_resource_stats(factories.compute_node_obj("h1", vcpus=4))
    held = _generation(manager, "h1")
    _forge_usage(manager, "h1", 2 ** 62, {"VCPU": 4})
    assert _cache_used(manager, "h1") == {"VCPU": 4}
    assert manager.sync_usage() == 1
    assert _cache_used(manager, "h1") == {}
    assert _generation(manager, "h1") == held


def test_a_forged_cast_at_the_next_real_generation_is_overridden(
        conf, manager):
    """A forged cast at the generation a real claim of a peer then
    commits: the peer's own cast is "not news", only the sync repairs."""
    manager.update_resource_stats(factories.compute_node_obj("h1", vcpus=4))
    _forge_usage(manager, "h1", _generation(manager, "h1") + 1,
                 {"VCPU": 4})
    casts = []
    peer = manager_mod.SchedulerManager(conf, manager.db,
                                        broadcast=casts.append)
    peer.load_cache()
    peer.select_destinations(factories.request(factories.flavor(**SMALL)),
                             factories.uuids(1))
    manager.apply_peer_usage(casts[0])
    assert _cache_used(manager, "h1") == {"VCPU": 4}
    assert manager.sync_usage() == 1
    assert _cache_used(manager, "h1") == {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_a_sync_agreeing_with_the_cache_reports_nothing(manager):
    manager.update_resource_stats(factories.compute_node_obj("h1"))
    manager.select_destinations(factories.request(factories.flavor(**SMALL)),
                                factories.uuids(1))
    assert manager.sync_usage() == 0
    assert _cache_used(manager, "h1")["VCPU"] == 1


def test_news_that_arrives_during_the_read_is_not_undone(manager):
    """A change heard after the database was read may be newer than the
    read: the sync then only applies news, as a peer cast would."""
    manager.update_resource_stats(factories.compute_node_obj("h1"))
    uuid = factories.host_uuid("h1")
    held = _generation(manager, "h1")
    manager.cache.begin_usage_sync()
    stored = {uuid: (held, {})}
    _forge_usage(manager, "h1", held + 1, {"VCPU": 2})
    assert manager.cache.finish_usage_sync(stored) == []
    assert _cache_used(manager, "h1") == {"VCPU": 2}
    # the next sync, with nothing heard meanwhile, restores the database's
    assert manager.sync_usage() == 1
    assert _cache_used(manager, "h1") == {}
