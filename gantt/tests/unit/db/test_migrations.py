"""Alembic migrations: a fresh database reaches head and matches the models."""

from alembic import autogenerate
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import pytest
import sqlalchemy as sa

from gantt.db import api as db_api
from gantt.db import migration
from gantt.db import models
from gantt.tests import fixtures as gantt_fixtures


@pytest.fixture
def fresh_db(tmp_path):
    db = db_api.Database("sqlite:///" + str(tmp_path / "fresh.sqlite"))
    yield db
    db.dispose()


def test_upgrade_reaches_head(fresh_db):
    assert migration.current_version(fresh_db) is None
    migration.upgrade(fresh_db)
    assert migration.current_version(fresh_db) == migration.head_version()
    # upgrading again is a no-op
    migration.upgrade(fresh_db)
    assert migration.current_version(fresh_db) == migration.head_version()


def test_migration_history_has_a_single_head():
    # two heads (e.g. two migrations written in parallel) make "upgrade
    # head" ambiguous: one of them must be rebased on the other
    script = alembic_script.ScriptDirectory.from_config(migration._config())
    assert script.get_heads() == [migration.head_version()]


def test_migrated_schema_matches_the_models(fresh_db):
    migration.upgrade(fresh_db)
    with fresh_db.engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(conn, opts={
            "compare_type": True})
        diff = autogenerate.compare_metadata(context, models.Base.metadata)
    assert diff == [], (
        "the migrations and gantt/db/models.py disagree; write a migration "
        f"for the model change: {diff}")


def test_every_model_table_exists_after_upgrade(fresh_db):
    migration.upgrade(fresh_db)
    tables = set(sa.inspect(fresh_db.engine).get_table_names())
    assert set(models.Base.metadata.tables) <= tables
    assert "alembic_version" in tables


@pytest.fixture(params=["sqlite", "mysql", "postgresql"])
def empty_db(request, tmp_path):
    """An empty database (no tables at all) on each backend."""
    if request.param == "sqlite":
        db = db_api.Database("sqlite:///" + str(tmp_path / "e.sqlite"))
        yield db
        db.dispose()
        return
    fx = gantt_fixtures.Database(request.param)
    fx.setUp()
    with fx.db.engine.begin() as conn:
        meta = sa.MetaData()
        meta.reflect(conn)
        meta.drop_all(conn)
    yield fx.db
    fx.cleanUp()


def test_0004_adds_provider_reports_and_keeps_hosts(empty_db):
    migration.upgrade(empty_db, "0003")
    assert "provider_reports" not in sa.inspect(
        empty_db.engine).get_table_names()
    now = sa.func.current_timestamp()
    with empty_db.engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO resource_providers (uuid, name, generation, "
            "created_at) VALUES ('u-host', 'h1', 3, CURRENT_TIMESTAMP)"))
        rp_id = conn.execute(sa.text(
            "SELECT id FROM resource_providers")).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO host_reports (resource_provider_id, host, nodename, "
            "disabled, report_sequence, num_instances, num_io_ops, details, "
            "received_at) VALUES (:id, 'h1', 'h1', false, 7, 0, 0, '{}', "
            "CURRENT_TIMESTAMP)"), {"id": rp_id})

    migration.upgrade(empty_db, "0004")
    assert migration.current_version(empty_db) == "0004"
    inspector = sa.inspect(empty_db.engine)
    columns = {c["name"]: c for c in inspector.get_columns(
        "provider_reports")}
    assert set(columns) == {"resource_provider_id", "report_sequence",
                            "received_at"}
    assert not columns["report_sequence"]["nullable"]
    assert inspector.get_pk_constraint("provider_reports")[
        "constrained_columns"] == ["resource_provider_id"]
    [fk] = inspector.get_foreign_keys("provider_reports")
    assert (fk["referred_table"], fk["options"].get("ondelete")) == (
        "resource_providers", "CASCADE")
    with empty_db.begin() as conn:
        # the host reported before the upgrade is still there, untouched
        assert conn.execute(sa.text(
            "SELECT report_sequence FROM host_reports")).scalar_one() == 7
        # and a standalone provider's report goes with its provider
        conn.execute(sa.text(
            "INSERT INTO resource_providers (uuid, name, generation, "
            "created_at) VALUES ('u-pool', 'pool', 0, CURRENT_TIMESTAMP)"))
        pool = conn.execute(sa.text(
            "SELECT id FROM resource_providers WHERE uuid = 'u-pool'"))
        pool_id = pool.scalar_one()
        conn.execute(models.ProviderReport.__table__.insert().values(
            resource_provider_id=pool_id, report_sequence=1,
            received_at=now))
    with empty_db.begin() as conn:
        conn.execute(sa.text(
            "DELETE FROM resource_providers WHERE uuid = 'u-pool'"))
        assert conn.execute(sa.text(
            "SELECT COUNT(*) FROM provider_reports")).scalar_one() == 0
