"""The orphan audit: judged only where agents say what runs on their host;
and the overcommit check the demo, C1M and the functional tests share."""

import datetime
import os
import tempfile
import uuid

import sqlalchemy as sa

from gantt.cmd import manage
from gantt.db import allocations
from gantt.db import audit
from gantt.db import models
from gantt.db import reports
from gantt.tests import factories


def _claim(scheduler, host, count=1):
    spec = factories.request(force_hosts=[host])
    return [s[0].consumer_uuid for s in scheduler.placer.select_destinations(
        spec, factories.uuids(count))]


def test_allocations_missing_from_their_host_are_orphans(scheduler):
    factories.report(scheduler, "listed", instance_uuids=[])
    # a 1.0 agent: never judged
    factories.report(scheduler, "silent", instance_uuids=None)
    built, lost = _claim(scheduler, "listed", 2)
    [unknown] = _claim(scheduler, "silent")
    # the agent reports after the claims: it runs one of the two
    factories.report(scheduler, "listed", instance_uuids=[built])
    orphans = audit.find_orphans(scheduler.stats.db, grace_seconds=0)
    assert [(o.consumer_uuid, o.host) for o in orphans] == [(lost, "listed")]
    assert orphans[0].resources == {"VCPU": 1, "MEMORY_MB": 2048,
                                    "DISK_GB": 20}
    assert unknown not in {o.consumer_uuid for o in orphans}


def test_a_claim_within_the_grace_period_is_not_an_orphan(scheduler):
    factories.report(scheduler, "listed", instance_uuids=[])
    _claim(scheduler, "listed")
    factories.report(scheduler, "listed", instance_uuids=[])
    assert audit.find_orphans(scheduler.stats.db, grace_seconds=3600) == []


def test_a_move_source_is_judged_by_its_instance(scheduler):
    # during a move the source host still runs (and lists) the instance
    # while the migration consumer holds its allocations
    factories.report(scheduler, "src", instance_uuids=[])
    factories.report(scheduler, "dst", instance_uuids=[])
    [instance] = _claim(scheduler, "src")
    [lost] = _claim(scheduler, "src")
    migration = factories.uuids(1)[0]
    scheduler.placer.move_claim(
        factories.request(force_hosts=["dst"]), instance,
        migration)
    factories.report(scheduler, "src", instance_uuids=[instance])
    factories.report(scheduler, "dst", instance_uuids=[instance])
    orphans = audit.find_orphans(scheduler.stats.db, grace_seconds=0)
    assert [o.consumer_uuid for o in orphans] == [lost]
    # once the instance is gone from the source, the source is an orphan
    factories.report(scheduler, "src", instance_uuids=[])
    orphans = audit.find_orphans(scheduler.stats.db, grace_seconds=0)
    assert {o.consumer_uuid for o in orphans} == {lost, migration}
    # a confirmed move's row no longer covers anything
    scheduler.claims.confirm_move(migration)
    assert audit.find_orphans(
        scheduler.stats.db, grace_seconds=0)[0].consumer_uuid \
        == lost


def test_audit_reports_then_deletes_only_when_asked(scheduler, conf, capsys):
    # an unchanged report is stored only every report_persist_interval; the
    # audit judges by the stored report time, so store every report here
    conf.set_override("report_persist_interval", 0, "scheduler")
    factories.report(scheduler, "listed", instance_uuids=[])
    [lost] = _claim(scheduler, "listed")
    factories.report(scheduler, "listed", instance_uuids=[])
    argv = ["--config-file", _conf_file(scheduler.stats.db.url), "allocations",
            "audit", "--grace", "0"]
    assert manage.main(argv) == 3
    out = capsys.readouterr().out
    assert lost in out and "--delete" in out
    assert audit.find_orphans(
        scheduler.stats.db, 0)       # nothing was changed
    assert manage.main(argv + ["--delete"]) == 0
    assert "Released 1 orphaned consumer" in capsys.readouterr().out
    assert audit.find_orphans(scheduler.stats.db, 0) == []
    assert manage.main(argv) == 0


def _conf_file(db_url):
    path = os.path.join(tempfile.mkdtemp(), "gantt.conf")
    with open(path, "w") as f:
        f.write("[database]\nconnection = %s\n" % db_url)
    return path


def test_overcommitted_finds_usage_beyond_capacity_and_without_inventory(
        any_db):
    reports.save_report(any_db, factories.compute_node_obj("h1"))
    h1 = factories.host_uuid("h1")
    with any_db.begin() as conn:
        allocations.claim(conn, str(uuid.uuid4()), {
            h1: {"VCPU": 4, "MEMORY_MB": 1024}})
        assert audit.overcommitted(conn) == []
        rp_id = conn.execute(sa.select(models.RP.c.id).where(
            models.RP.c.uuid == h1)).scalar_one()
        # what no claim leaves: an inventory cut below its usage, and
        # usage of a class the provider has no inventory of
        conn.execute(models.INV.update().where(
            models.INV.c.resource_provider_id == rp_id).where(
            models.INV.c.resource_class == "VCPU").values(
            total=3, reserved=0, allocation_ratio=1.0))
        conn.execute(models.ALLOC.insert().values(
            resource_provider_id=rp_id, consumer_uuid=str(uuid.uuid4()),
            resource_class="CUSTOM_GONE", used=1,
            created_at=datetime.datetime(2026, 1, 1)))
        found = audit.overcommitted(conn)
    assert found == [
        audit.Overcommit(rp_id, "CUSTOM_GONE", 1, None),
        audit.Overcommit(rp_id, "VCPU", 4, 3.0)]
