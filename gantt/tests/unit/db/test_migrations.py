"""Alembic migrations: a fresh database reaches head and matches the models."""

from alembic import autogenerate
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import pytest
import sqlalchemy as sa

from gantt.db import api as db_api
from gantt.db import migration
from gantt.db import models


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
