"""ClaimService end to end on SQLite: release, reclaim, moves, roll-back,
broadcasts (claims that keep losing their race: test_claim_races.py)."""


import collections
import logging
import time

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.db import allocations
from gantt.db import models
from gantt.objects import selection
from gantt.scheduler import claims
from gantt.scheduler import selections
from gantt.scheduler.pipeline import request as request_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")
SMALL = {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}
OWNER = allocations.ConsumerInfo(project_id="proj-a", user_id="user-b")


def _owners(db):
    with db.begin() as conn:
        return {tuple(r) for r in conn.execute(sa.select(
            h.CONSUMERS.c.uuid, h.CONSUMERS.c.project_id,
            h.CONSUMERS.c.user_id))}


def _messages(caplog, level):
    return [r.getMessage() for r in caplog.records if r.levelname == level]


def test_release_says_whether_this_call_freed_the_claim(scheduler):
    h.sized(scheduler, "h1", 4)
    [uuid] = factories.uuids(1)
    scheduler.placer.select_destinations(h.make_spec(), [uuid])
    assert scheduler.claims.release(uuid) is True
    assert scheduler.claims.release(uuid) is False


def test_reclaim_moves_to_the_first_fitting_alternate(scheduler):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        h.sized(scheduler, name, size)
    [uuid] = factories.uuids(1)
    [[failed, alt1, alt2]] = scheduler.placer.select_destinations(
        h.make_spec(), [uuid])
    assert [failed.service_host, alt1.service_host, alt2.service_host] == [
        "h1", "h2", "h3"]
    h.fill(scheduler, "h2")

    moved = scheduler.claims.reclaim(uuid, failed, [alt1, alt2])

    assert moved.service_host == "h3"
    assert moved.claimed is True
    assert moved.consumer_uuid == uuid
    assert alt2.claimed is False      # the caller's object is left alone
    assert h.hosts_of(scheduler.stats.db, uuid) == {"h3"}
    assert h.cache_used(scheduler, "h1") == {}
    assert h.cache_used(scheduler, "h3") == {
        "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_reclaim_raises_when_no_alternate_fits_and_frees_everything(scheduler):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        h.sized(scheduler, name, size)
    [uuid] = factories.uuids(1)
    [[failed, *alternates]] = scheduler.placer.select_destinations(
        h.make_spec(), [uuid])
    h.fill(scheduler, "h2")
    h.fill(scheduler, "h3")

    with pytest.raises(exception.MaxRetriesExceeded) as raised:
        scheduler.claims.reclaim(uuid, failed, alternates)

    assert uuid in str(raised.value)
    assert "h2:" in str(raised.value) and "h3:" in str(raised.value)
    assert h.allocations(scheduler.stats.db, uuid) == []
    assert h.cache_used(scheduler, "h1") == {}


def test_reclaim_without_alternates(scheduler):
    h.report(scheduler, "h1")
    [uuid] = factories.uuids(1)
    [[failed]] = scheduler.placer.select_destinations(h.make_spec(), [uuid],
                                             return_alternates=False)
    with pytest.raises(exception.MaxRetriesExceeded,
                       match="no alternates were given"):
        scheduler.claims.reclaim(uuid, failed, [])
    assert h.allocations(scheduler.stats.db, uuid) == []


def test_reclaim_keeps_the_group_policy(scheduler):
    for name, size in (("h1", 3), ("h2", 2), ("h3", 1)):
        h.sized(scheduler, name, size)
    first, second = factories.uuids(2)
    [[on_h1, *_], [on_h2, *_]] = scheduler.placer.select_destinations(
        h.group_spec("anti-affinity"), [first, second])
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

    moved = scheduler.claims.reclaim(second, on_h2, [wrong, right])
    assert moved.service_host == "h3"
    assert h.hosts_of(scheduler.stats.db, second) == {"h3"}


def test_release_is_idempotent(scheduler):
    h.report(scheduler, "h1")
    [uuid] = factories.uuids(1)
    scheduler.placer.select_destinations(h.make_spec(), [uuid])
    assert scheduler.claims.release(uuid) is True
    assert h.allocations(scheduler.stats.db) == []
    assert h.cache_used(scheduler, "h1") == {}
    assert scheduler.claims.release(uuid) is False
    assert scheduler.claims.release(factories.uuids(1)[0]) is False


def test_claims_are_broadcast_to_peers(conf, sqlite_db):
    sent = []
    mgr = scheduler_mod.build(conf, sqlite_db, broadcast=sent.append)
    mgr.stats.load_cache()
    h.report(mgr, "h1")
    [uuid] = factories.uuids(1)
    mgr.placer.select_destinations(h.make_spec(), [uuid])
    mgr.claims.release(uuid)
    assert [[(u.resource_provider_uuid, u.usages) for u in batch]
            for batch in sent] == [
        [(factories.host_uuid("h1"),
          {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10})],
        [(factories.host_uuid("h1"), {})]]
    assert sent[1][0].generation == sent[0][0].generation + 1
    # stamped, so that a peer can say how late it learns of claims
    assert all(time.time() - 60 < u.changed_at <= time.time()
               for batch in sent for u in batch)
    # a release that freed nothing has nothing to tell
    mgr.claims.release(uuid)
    assert len(sent) == 2


def test_claims_are_not_broadcast_when_told_not_to(conf, sqlite_db):
    conf.set_override("broadcast_claims", False, "scheduler")
    sent = []
    mgr = scheduler_mod.build(conf, sqlite_db, broadcast=sent.append)
    mgr.stats.load_cache()
    h.report(mgr, "h1")
    [uuid] = factories.uuids(1)
    mgr.placer.select_destinations(h.make_spec(), [uuid])
    mgr.claims.release(uuid)
    assert sent == []
    # the worker's own cache still follows
    assert h.cache_used(mgr, "h1") == {}


def test_reclaim_keeps_the_consumer_s_project_and_user(scheduler):
    for name in ("p1", "p2"):
        scheduler.stats.update_resource_stats(factories.compute_node_obj(name))
    spec = factories.request(project_id="proj-a", user_id="user-b")
    [sels] = scheduler.placer.select_destinations(spec, factories.uuids(1))
    scheduler.claims.reclaim(sels[0].consumer_uuid, sels[0], sels[1:])
    consumers = models.Consumer.__table__
    with scheduler.stats.db.begin() as conn:
        row = conn.execute(sa.select(consumers.c.project_id,
                                     consumers.c.user_id)).one()
    assert tuple(row) == ("proj-a", "user-b")


def test_instances_placed_together_belong_to_the_request_s_owner(scheduler):
    for name in ("p1", "p2"):
        h.report(scheduler, name)
    spec = factories.request(project_id="proj-a", user_id="user-b")
    uuids = factories.uuids(2)
    scheduler.placer.select_destinations(spec, uuids)
    assert _owners(scheduler.stats.db) == {
        (uuid, "proj-a", "user-b") for uuid in uuids}


def test_a_broken_group_rule_rereads_where_the_members_are(scheduler):
    # another worker put member b on h2 after this request read the group
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    rule = allocations.GroupClaim(h.GROUP, "anti-affinity")
    a, b = factories.uuids(2)
    scheduler.claims.claimer.claim(b, {factories.host_uuid("h2"): SMALL},
                                   group=rule)
    group = request_mod.GroupState(h.GROUP, "anti-affinity", 1,
                                   collections.Counter())
    on_h2 = {factories.host_uuid("h2"): SMALL}
    # a lack of room says nothing about the group: what the request
    # knows of it stays
    scheduler.claims.refresh(on_h2, exception.CapacityExceeded(
        provider="h2", amount=1, resource_class="VCPU", consumer=a,
        reason="full"), group)
    assert group.hosts == {}
    scheduler.claims.refresh(on_h2, exception.GroupPolicyViolation(
        consumer=a, host="h2", policy="anti-affinity", group=h.GROUP),
        group)
    assert group.hosts == {"h2": 1}
    # and the usage the claim found is in the cache
    assert h.cache_used(scheduler, "h2") == SMALL


def test_a_best_effort_roll_back_frees_what_it_can(scheduler, monkeypatch,
                                                  caplog):
    caplog.set_level(logging.INFO, logger=claims.__name__)
    # an all-or-nothing request failed half-way on an outage: the claims
    # it made are released where the database lets it, and the caller is
    # told which one it must release itself
    h.report(scheduler, "h1")
    stuck, freed = factories.uuids(2)
    for uuid in (stuck, freed):
        scheduler.claims.claim(uuid, {factories.host_uuid("h1"): SMALL},
                               owner=OWNER)
    release = scheduler.claims.claimer.release

    def failing(uuid):
        if uuid == stuck:
            raise RuntimeError("database gone")
        return release(uuid)

    monkeypatch.setattr(scheduler.claims.claimer, "release", failing)
    scheduler.claims.roll_back([stuck, freed], best_effort=True)
    assert h.hosts_of(scheduler.stats.db, stuck) == {"h1"}
    assert h.allocations(scheduler.stats.db, freed) == []
    assert _messages(caplog, "ERROR") == [
        "Could not roll back the claim of %s; the caller must release it "
        "(or retry with the same uuid, which replaces it)" % stuck]
    assert _messages(caplog, "INFO")[-1] == (
        "Rolled back 2 claim(s) of an all-or-nothing request")
    # otherwise the failure is the caller's
    with pytest.raises(RuntimeError, match="database gone"):
        scheduler.claims.roll_back([stuck])


def test_claiming_allocations_again_replaces_them(scheduler):
    # Placement's PUT /allocations/{consumer}: the second call moves the
    # consumer, it is not refused as a consumer that exists
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    [consumer] = factories.uuids(1)
    for host in ("h1", "h2"):
        assert scheduler.claims.claim_allocations(
            consumer, selection.AllocationRequest(allocations=[
                selection.AllocationItem(
                    resource_provider_uuid=factories.host_uuid(host),
                    resources=SMALL)]), project_id="proj-a") is True
    assert h.hosts_of(scheduler.stats.db, consumer) == {"h2"}
    assert h.cache_used(scheduler, "h1") == {}


# -- moves --------------------------------------------------------------------

def _moving(scheduler):
    """An instance claimed on h1 whose move to h2 is claimed: ``(instance,
    migration)``."""
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    instance, migration = factories.uuids(2)
    scheduler.claims.claim(instance, {factories.host_uuid("h1"): SMALL},
                           owner=OWNER)
    scheduler.claims.claim_move(instance, {factories.host_uuid("h2"): SMALL},
                                owner=OWNER, migration_uuid=migration)
    return instance, migration


def test_a_move_holds_both_hosts_under_the_instance_s_owner(scheduler):
    instance, migration = _moving(scheduler)
    assert h.hosts_of(scheduler.stats.db, migration) == {"h1"}
    assert h.hosts_of(scheduler.stats.db, instance) == {"h2"}
    assert h.cache_used(scheduler, "h1") == SMALL
    assert h.cache_used(scheduler, "h2") == SMALL
    # the migration's source still counts against the instance's project
    assert _owners(scheduler.stats.db) == {
        (instance, "proj-a", "user-b"), (migration, "proj-a", "user-b")}


def test_confirming_a_move_frees_the_source(scheduler):
    instance, migration = _moving(scheduler)
    assert scheduler.claims.confirm_move(migration) is True
    assert h.allocations(scheduler.stats.db, migration) == []
    assert h.hosts_of(scheduler.stats.db, instance) == {"h2"}
    assert h.cache_used(scheduler, "h1") == {}
    assert h.cache_used(scheduler, "h2") == SMALL
    assert scheduler.claims.confirm_move(migration) is False


def test_reverting_a_move_gives_the_source_back(scheduler):
    instance, migration = _moving(scheduler)
    assert scheduler.claims.revert_move(instance, migration) is True
    assert h.allocations(scheduler.stats.db, migration) == []
    assert h.hosts_of(scheduler.stats.db, instance) == {"h1"}
    assert h.cache_used(scheduler, "h1") == SMALL
    assert h.cache_used(scheduler, "h2") == {}
    # nothing is held by the migration any more: a repeated revert (or a
    # confirm after it) changes nothing
    assert scheduler.claims.revert_move(instance, migration) is False
    assert scheduler.claims.confirm_move(migration) is False
    assert h.hosts_of(scheduler.stats.db, instance) == {"h1"}


def test_a_move_claim_keeps_the_group_rule(scheduler):
    # the host was chosen on a view that did not show the other member
    # yet: the claim itself refuses to put two anti-affinity members on
    # one host
    for name in ("h1", "h2"):
        h.report(scheduler, name)
    rule = allocations.GroupClaim(h.GROUP, "anti-affinity")
    owner = allocations.ConsumerInfo(group=rule)
    a, b, migration = factories.uuids(3)
    scheduler.claims.claim(a, {factories.host_uuid("h1"): SMALL}, owner=owner)
    scheduler.claims.claim(b, {factories.host_uuid("h2"): SMALL}, owner=owner)
    with pytest.raises(exception.GroupPolicyViolation):
        scheduler.claims.claim_move(a, {factories.host_uuid("h2"): SMALL},
                                    owner=owner, migration_uuid=migration)
    assert h.hosts_of(scheduler.stats.db, a) == {"h1"}
    assert h.allocations(scheduler.stats.db, migration) == []
