"""The orphan audit: judged only where agents say what runs on their host."""

import os
import tempfile

from gantt.cmd import manage
from gantt.db import audit
from gantt.tests import factories


def _claim(manager, host, count=1):
    spec = factories.request(force_hosts=[host])
    return [s[0].consumer_uuid for s in manager.select_destinations(
        spec, factories.uuids(count))]


def test_allocations_missing_from_their_host_are_orphans(manager):
    factories.report(manager, "listed", instance_uuids=[])
    # a 1.0 agent: never judged
    factories.report(manager, "silent", instance_uuids=None)
    built, lost = _claim(manager, "listed", 2)
    [unknown] = _claim(manager, "silent")
    # the agent reports after the claims: it runs one of the two
    factories.report(manager, "listed", instance_uuids=[built])
    orphans = audit.find_orphans(manager.db, grace_seconds=0)
    assert [(o.consumer_uuid, o.host) for o in orphans] == [(lost, "listed")]
    assert orphans[0].resources == {"VCPU": 1, "MEMORY_MB": 2048,
                                    "DISK_GB": 20}
    assert unknown not in {o.consumer_uuid for o in orphans}


def test_a_claim_within_the_grace_period_is_not_an_orphan(manager):
    factories.report(manager, "listed", instance_uuids=[])
    _claim(manager, "listed")
    factories.report(manager, "listed", instance_uuids=[])
    assert audit.find_orphans(manager.db, grace_seconds=3600) == []


def test_a_move_source_is_judged_by_its_instance(manager):
    # during a move the source host still runs (and lists) the instance
    # while the migration consumer holds its allocations
    factories.report(manager, "src", instance_uuids=[])
    factories.report(manager, "dst", instance_uuids=[])
    [instance] = _claim(manager, "src")
    [lost] = _claim(manager, "src")
    migration = factories.uuids(1)[0]
    manager.move_claim(factories.request(force_hosts=["dst"]), instance,
                       migration)
    factories.report(manager, "src", instance_uuids=[instance])
    factories.report(manager, "dst", instance_uuids=[instance])
    orphans = audit.find_orphans(manager.db, grace_seconds=0)
    assert [o.consumer_uuid for o in orphans] == [lost]
    # once the instance is gone from the source, the source is an orphan
    factories.report(manager, "src", instance_uuids=[])
    orphans = audit.find_orphans(manager.db, grace_seconds=0)
    assert {o.consumer_uuid for o in orphans} == {lost, migration}
    # a confirmed move's row no longer covers anything
    manager.confirm_move(migration)
    assert audit.find_orphans(manager.db, grace_seconds=0)[0].consumer_uuid \
        == lost


def test_audit_reports_then_deletes_only_when_asked(manager, conf, capsys):
    # an unchanged report is stored only every report_persist_interval; the
    # audit judges by the stored report time, so store every report here
    conf.set_override("report_persist_interval", 0, "scheduler")
    factories.report(manager, "listed", instance_uuids=[])
    [lost] = _claim(manager, "listed")
    factories.report(manager, "listed", instance_uuids=[])
    argv = ["--config-file", _conf_file(manager.db.url), "allocations",
            "audit", "--grace", "0"]
    assert manage.main(argv) == 3
    out = capsys.readouterr().out
    assert lost in out and "--delete" in out
    assert audit.find_orphans(manager.db, 0)       # nothing was changed
    assert manage.main(argv + ["--delete"]) == 0
    assert "Released 1 orphaned consumer" in capsys.readouterr().out
    assert audit.find_orphans(manager.db, 0) == []
    assert manage.main(argv) == 0


def _conf_file(db_url):
    path = os.path.join(tempfile.mkdtemp(), "gantt.conf")
    with open(path, "w") as f:
        f.write("[database]\nconnection = %s\n" % db_url)
    return path
