"""Forged or broken messages must not do lasting damage (issue #18).

The usage sync makes the database the truth over peers' casts; a new
agent boot id resets a host's report sequence; an operator can reset it;
a host name belongs to one provider.
"""

import json
import logging

from oslo_db import exception as db_exc
import pytest

from gantt import exception
from gantt import rpc
from gantt import scheduler as scheduler_mod
from gantt.db import host_load
from gantt.db import hosts as db_hosts
from gantt.db import reports as db_reports
from gantt.objects import usage
from gantt.rpcapi import versions
from gantt.scheduler import counters as counters_mod
from gantt.scheduler.intake import batching
from gantt.scheduler.intake import host_identity
from gantt.scheduler.intake import report_rules
from gantt.tests import factories
from gantt.tests import stored_hosts

SMALL = {"vcpus": 1, "memory_mb": 1024, "root_gb": 10}


def _cache_used(scheduler, host):
    [state] = scheduler.operator.get_host_states([host])
    return {r.resource_class: r.used for r in state.resources if r.used}


def _generation(scheduler, host):
    [state] = scheduler.operator.get_host_states([host])
    return state.generation


def _forge_usage(scheduler, host, generation, usages):
    scheduler.stats.apply_peer_usage([usage.ProviderUsage(
        resource_provider_uuid=factories.host_uuid(host),
        generation=generation, usages=usages)])


# -- the usage sync overrides peers' casts ------------------------------------


def test_a_forged_high_generation_lasts_until_the_next_sync(scheduler):
    scheduler.stats.update_resource_stats(
        factories.compute_node_obj("h1", vcpus=4))
    held = _generation(scheduler, "h1")
    _forge_usage(scheduler, "h1", 2 ** 62, {"VCPU": 4})
    assert _cache_used(scheduler, "h1") == {"VCPU": 4}
    assert scheduler.stats.sync_usage() == 1
    assert _cache_used(scheduler, "h1") == {}
    assert _generation(scheduler, "h1") == held


def test_a_forged_cast_at_the_next_real_generation_is_overridden(
        conf, scheduler):
    """A forged cast at the generation a real claim of a peer then
    commits: the peer's own cast is "not news", only the sync repairs."""
    scheduler.stats.update_resource_stats(
        factories.compute_node_obj("h1", vcpus=4))
    _forge_usage(scheduler, "h1", _generation(scheduler, "h1") + 1,
                 {"VCPU": 4})
    casts = []
    peer = scheduler_mod.build(conf, scheduler.stats.db,
                                        broadcast=casts.append)
    peer.stats.load_cache()
    peer.placer.select_destinations(factories.request(factories.flavor(**SMALL)),
                             factories.uuids(1))
    scheduler.stats.apply_peer_usage(casts[0])
    assert _cache_used(scheduler, "h1") == {"VCPU": 4}
    assert scheduler.stats.sync_usage() == 1
    assert _cache_used(scheduler, "h1") == {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_a_sync_agreeing_with_the_cache_reports_nothing(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    scheduler.placer.select_destinations(factories.request(factories.flavor(**SMALL)),
                                factories.uuids(1))
    assert scheduler.stats.sync_usage() == 0
    assert _cache_used(scheduler, "h1")["VCPU"] == 1


def test_news_that_arrives_during_the_read_is_not_undone(scheduler):
    """A change heard after the database was read may be newer than the
    read: the sync then only applies news, as a peer cast would."""
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    uuid = factories.host_uuid("h1")
    held = _generation(scheduler, "h1")
    scheduler.stats.cache.begin_usage_sync()
    stored = {uuid: (held, {})}
    _forge_usage(scheduler, "h1", held + 1, {"VCPU": 2})
    assert scheduler.stats.cache.finish_usage_sync(stored) == []
    assert _cache_used(scheduler, "h1") == {"VCPU": 2}
    # the next sync, with nothing heard meanwhile, restores the database's
    assert scheduler.stats.sync_usage() == 1
    assert _cache_used(scheduler, "h1") == {}


def test_a_sync_whose_read_failed_leaves_the_suspects_to_the_next(
        scheduler, monkeypatch):
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    _forge_usage(scheduler, "h1", 2 ** 62, {"VCPU": 16})

    def unreachable(*args, **kwargs):
        raise db_exc.DBConnectionError("down")

    with monkeypatch.context() as patch:
        patch.setattr(host_load, "usages_by_uuid", unreachable)
        with pytest.raises(db_exc.DBConnectionError):
            scheduler.stats.sync_usage()
    assert scheduler.stats.sync_usage() == 1
    assert _cache_used(scheduler, "h1") == {}


# -- a new boot id starts a new sequence -------------------------------------

BOOT_A = "0a0a0a0a-0000-4000-8000-00000000000a"
BOOT_B = "0b0b0b0b-0000-4000-8000-00000000000b"
FORGED = 2 ** 63 - 1


@pytest.mark.parametrize("sequence, boot, held_sequence, held_boot, wins", [
    (11, BOOT_A, 10, BOOT_A, True),       # same boot: a newer sequence
    (10, BOOT_A, 10, BOOT_A, False),      # same boot: not newer
    (1, BOOT_B, FORGED, BOOT_A, True),    # another boot: any sequence
    (1, BOOT_B, FORGED, None, True),      # a boot where none was held
    (1, None, 10, BOOT_A, False),         # no boot: the sequence alone
    (11, None, 10, BOOT_A, True),
])
def test_which_report_supersedes_the_held_one(sequence, boot, held_sequence,
                                              held_boot, wins):
    assert report_rules.supersedes(sequence, boot, held_sequence,
                                   held_boot) is wins


@pytest.mark.parametrize("boot", ["not-a-uuid", 7, "{%s}" % BOOT_A])
def test_a_boot_id_that_is_not_a_uuid_is_refused(scheduler, boot):
    node = factories.compute_node_obj("h1")
    node._obj_boot_id = boot        # as a forged primitive would carry it
    with pytest.raises(exception.InvalidRequest) as err:
        scheduler.stats.update_resource_stats(node)
    assert "boot_id" in str(err.value)
    assert scheduler.operator.get_host_states() == []


@pytest.mark.parametrize("boot", ["not-a-uuid", "urn:uuid:" + BOOT_A])
def test_the_intake_refuses_a_boot_id_that_is_not_a_uuid(scheduler, boot):
    intake = batching.StatsIntake(scheduler.stats)
    primitive = _wire(factories.compute_node_obj("h1", boot_id=BOOT_A))
    primitive["gantt_object.data"]["boot_id"] = boot
    intake.take(primitive)
    intake.flush()
    assert scheduler.counters.values["messages_rejected"] == 1
    assert scheduler.operator.get_host_states() == []


def _wire(node):
    return json.loads(json.dumps(node.obj_to_primitive()))


def _intake_report(scheduler, intake, sequence, boot=None, **fields):
    intake.take(_wire(factories.compute_node_obj(
        "h1", sequence=sequence, boot_id=boot, **fields)))
    intake.flush()


def _held_sequence(scheduler):
    [state] = scheduler.operator.get_host_states(["h1"])
    return state.report_sequence


def test_a_forged_sequence_does_not_lock_out_a_restarted_agent(scheduler):
    intake = batching.StatsIntake(scheduler.stats)
    _intake_report(scheduler, intake, 100, BOOT_A)
    _intake_report(scheduler, intake, FORGED, BOOT_A, vcpus=1)
    _intake_report(scheduler, intake, 101, BOOT_A)      # locked out…
    assert _held_sequence(scheduler) == FORGED
    _intake_report(scheduler, intake, 5, BOOT_B)        # …until it restarts
    assert _held_sequence(scheduler) == 5
    _intake_report(scheduler, intake, 4, BOOT_B)        # stale in its boot
    _intake_report(scheduler, intake, 6, BOOT_B)
    assert _held_sequence(scheduler) == 6
    [host] = stored_hosts.load_hosts(scheduler.stats.db)
    assert host.report["report_sequence"] == 5   # stored when boot changed
    assert host.inventories["VCPU"][0] == 16


def test_the_stored_boot_id_survives_a_worker_restart(conf, scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=100, boot_id=BOOT_A))
    fresh = scheduler_mod.build(conf, scheduler.stats.db)
    fresh.stats.load_cache()
    # a duplicate of an older report of the same boot stays stale
    assert not fresh.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=99, boot_id=BOOT_A))
    assert fresh.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=1, boot_id=BOOT_B))


def test_a_capped_client_sends_no_boot_id():
    node = factories.compute_node_obj("h1", boot_id=BOOT_A)
    primitive = rpc.Serializer(versions.manifest_for("1.5")).serialize_entity(
        {}, node)
    assert primitive["gantt_object.version"] == "1.4"
    assert "boot_id" not in primitive["gantt_object.data"]
    assert "boot_id" in node.obj_to_primitive()["gantt_object.data"]


# -- the operator's reset -----------------------------------------------------


def test_the_operator_reset_lets_the_next_report_in(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=FORGED))
    assert not scheduler.stats.update_resource_stats(
        factories.compute_node_obj(
        "h1", sequence=10))
    assert scheduler.stats.reset_report_sequence(
        "h1") == factories.host_uuid("h1")
    assert scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=10, vcpus=8))
    assert _held_sequence(scheduler) == 10
    [host] = stored_hosts.load_hosts(scheduler.stats.db)
    assert (host.report["report_sequence"],
            host.inventories["VCPU"][0]) == (10, 8)


def test_resetting_an_unknown_host_says_so(scheduler):
    with pytest.raises(exception.HostNotFound):
        scheduler.stats.reset_report_sequence("nowhere")


# -- one host name, one compute node -----------------------------------------


def _impostor(name="h1", **fields):
    """A report of another provider under the name ``name``."""
    node = factories.compute_node_obj(name, **fields)
    node.uuid = factories.host_uuid("impostor-of-" + name)
    return node


def test_a_second_provider_under_a_host_name_is_refused(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    with pytest.raises(exception.HostNameTaken) as err:
        scheduler.stats.update_resource_stats(_impostor(vcpus=512))
    assert err.value.kwargs["holder"] == factories.host_uuid("h1")
    assert [s.uuid for s in scheduler.operator.get_host_states(["h1"])] == [
        factories.host_uuid("h1")]
    assert [h.uuid for h in stored_hosts.load_hosts(scheduler.stats.db)] == [
        factories.host_uuid("h1")]
    assert scheduler.counters.values["messages_rejected"] == 1


def test_without_the_database_the_cache_refuses_a_second_provider(
        scheduler, monkeypatch):
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))

    def unreachable(*args, **kwargs):
        raise db_exc.DBConnectionError("down")

    monkeypatch.setattr(db_reports, "save_report", unreachable)
    monkeypatch.setattr(scheduler.stats.db, "answers", lambda: False)
    with pytest.raises(exception.HostNameTaken):
        scheduler.stats.update_resource_stats(_impostor())
    assert len(scheduler.stats.cache) == 1


def test_a_provider_may_take_the_name_of_a_deleted_one(scheduler):
    """Re-deploying a host: the operator deletes the old compute node,
    then the re-installed one reports under the same name."""
    scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    assert db_hosts.delete_host(
        scheduler.stats.db, "h1") == factories.host_uuid(
        "h1")
    assert scheduler.stats.update_resource_stats(_impostor())
    assert [s.uuid for s in scheduler.operator.get_host_states(["h1"])] == [
        factories.host_uuid("impostor-of-h1")]
    spec = factories.request(factories.flavor(**SMALL), force_hosts=["h1"])
    [[selection, *_]] = scheduler.placer.select_destinations(spec,
                                                    factories.uuids(1))
    assert selection.compute_node_uuid == factories.host_uuid(
        "impostor-of-h1")


def test_refusals_are_logged_at_a_bounded_rate(caplog):
    counters = counters_mod.Counters()
    now = [0.0]
    log = host_identity.RefusalLog(counters, clock=lambda: now[0],
                                   interval=60)
    exc = exception.HostNameTaken(host="h1", holder="a", uuid="b")
    with caplog.at_level(logging.WARNING):
        for _ in range(100):
            log.refuse(exc)
        now[0] = 61.0
        log.refuse(exc)
    assert counters.values["messages_rejected"] == 101
    assert [r.getMessage()[:20] for r in caplog.records] == [
        "Refused 1 report(s):", "Refused 100 report(s"]


def test_a_worker_started_after_a_reset_takes_the_next_report(conf, scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=FORGED))
    scheduler.stats.reset_report_sequence("h1")
    fresh = scheduler_mod.build(conf, scheduler.stats.db)
    fresh.stats.load_cache()
    assert fresh.stats.update_resource_stats(factories.compute_node_obj(
        "h1", sequence=0))
