"""ClaimService end to end on SQLite: release, reclaim, broadcasts."""


import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.db import models
from gantt.scheduler import selections
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")


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
