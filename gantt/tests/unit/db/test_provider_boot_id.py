"""A standalone provider's boot id (ProviderReport 1.1): a report of
another boot than the stored one is stored whatever its sequence, on every
backend, read back for the cache, and taken by the cache; migration 0008
keeps the stored reports."""

import sqlalchemy as sa

from gantt.db import api as db_api
from gantt.db import host_load
from gantt.db import migration
from gantt.db import models
from gantt.db import reports
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import load as load_mod
from gantt.tests import factories

PROVIDER_REPORTS = models.ProviderReport.__table__
BOOT_A = "0a0a0a0a-0000-4000-8000-00000000000a"
BOOT_B = "0b0b0b0b-0000-4000-8000-00000000000b"
FORGED = 2 ** 63 - 1
POOL = factories.host_uuid("pool")


def _report(sequence, boot_id=None, total=100):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=POOL, name="pool",
            inventories=[compute_node.Inventory(resource_class="DISK_GB",
                                                total=total)]),
        report_sequence=sequence, boot_id=boot_id)


def _stored(db):
    with db.begin() as conn:
        return [tuple(r) for r in conn.execute(sa.select(
            PROVIDER_REPORTS.c.report_sequence, PROVIDER_REPORTS.c.boot_id))]


def test_a_new_boot_is_stored_whatever_its_sequence(any_db):
    assert reports.save_provider(any_db, _report(FORGED, BOOT_A)).applied
    assert not reports.save_provider(any_db, _report(5, BOOT_A)).applied
    assert not reports.save_provider(any_db, _report(5)).applied
    assert reports.save_provider(any_db, _report(5, BOOT_B, 50)).applied
    assert _stored(any_db) == [(5, BOOT_B)]
    # then the new boot's sequence rules again
    assert not reports.save_provider(any_db, _report(4, BOOT_B)).applied
    assert reports.save_provider(any_db, _report(6, BOOT_B)).applied


def test_a_report_without_a_boot_id_is_judged_by_its_sequence(any_db):
    reports.save_provider(any_db, _report(10))
    assert not reports.save_provider(any_db, _report(10)).applied
    assert reports.save_provider(any_db, _report(11)).applied
    # a first boot id is another boot than none
    assert reports.save_provider(any_db, _report(1, BOOT_A)).applied
    assert _stored(any_db) == [(1, BOOT_A)]


def test_the_boot_id_is_read_back_for_the_cache(any_db):
    reports.save_provider(any_db, _report(3, BOOT_A))
    [stored] = host_load.load_standalone_providers(any_db)
    assert (stored.report_sequence, stored.boot_id) == (3, BOOT_A)


def test_the_cache_takes_a_new_boot_whatever_its_sequence(sqlite_db):
    reports.save_provider(sqlite_db, _report(FORGED, BOOT_A))
    cache = cache_mod.HostStateCache()
    [stored] = host_load.load_standalone_providers(sqlite_db)
    pool = load_mod.stored_provider(stored, stored.uuid)
    assert cache.apply_provider(pool, FORGED, BOOT_A)
    assert not cache.apply_provider(pool, 5, BOOT_A)
    assert not cache.apply_provider(pool, 5)
    assert cache.apply_provider(pool, 5, BOOT_B)
    assert not cache.apply_provider(pool, 5, BOOT_B)


def test_0008_keeps_the_stored_reports(tmp_path):
    db = db_api.Database("sqlite:///" + str(tmp_path / "m.sqlite"))
    migration.upgrade(db, "0007")
    with db.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO resource_providers (id, uuid, name, generation, "
            "created_at) VALUES (1, :u, 'pool', 0, CURRENT_TIMESTAMP)"),
            {"u": POOL})
        conn.execute(sa.text(
            "INSERT INTO provider_reports (resource_provider_id, "
            "report_sequence, received_at) VALUES (1, 7, "
            "CURRENT_TIMESTAMP)"))
    migration.upgrade(db, "0008")
    assert _stored(db) == [(7, None)]
    assert migration.current_version(db) == "0008"
    db.dispose()
