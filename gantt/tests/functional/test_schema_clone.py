"""A cloned test database is the migrated schema, on every engine.

The fixtures hand each test a copy of a template migrated once
(gantt.tests.schema_clone) instead of running the revisions again. That
saving is only honest if the copy is the schema: here a clone and a
database migrated revision by revision are compared table by table,
column by column, key by key, on SQLite, MariaDB and PostgreSQL, and a
clone is shown to be a database of its own.
"""

from oslo_db import exception as db_exc
import pytest
import sqlalchemy as sa

from gantt.tests import fixtures as gantt_fixtures


def _shape(url):
    """Everything of a schema a test could meet: tables, columns with
    their types and nullability, keys, indexes and the revision."""
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        tables = {t: _table_shape(inspector, t)
                  for t in inspector.get_table_names()}
        with engine.connect() as conn:
            revision = conn.exec_driver_sql(
                "SELECT version_num FROM alembic_version").fetchall()
    finally:
        engine.dispose()
    return tables, revision


def _table_shape(inspector, table):
    return (sorted((c["name"], str(c["type"]), c["nullable"])
                   for c in inspector.get_columns(table)),
            sorted(repr(sorted(fk.items()))
                   for fk in inspector.get_foreign_keys(table)),
            sorted(repr(sorted(ix.items()))
                   for ix in inspector.get_indexes(table)),
            sorted(repr(sorted(u.items()))
                   for u in inspector.get_unique_constraints(table)),
            repr(inspector.get_pk_constraint(table)))


@pytest.fixture(params=["sqlite", "mysql", "postgresql"])
def clone_and_migrated(request):
    clone = gantt_fixtures.Database(request.param)
    migrated = gantt_fixtures.Database(request.param, clone=False)
    clone.setUp()
    migrated.setUp()
    yield clone, migrated
    clone.cleanUp()
    migrated.cleanUp()


def test_a_clone_has_the_migrated_schema(clone_and_migrated):
    clone, migrated = clone_and_migrated
    tables, revision = _shape(clone.url)
    assert "allocations" in tables and revision
    assert (tables, revision) == _shape(migrated.url)


def test_a_clone_enforces_foreign_keys_and_is_its_own(clone_and_migrated):
    clone, migrated = clone_and_migrated
    other = gantt_fixtures.Database(clone.backend)
    other.setUp()
    try:
        with clone.db.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM alembic_version"))
        assert _shape(other.url)[1], "a clone's rows reached another clone"
        with pytest.raises(db_exc.DBReferenceError):
            with clone.db.engine.begin() as conn:
                conn.execute(sa.text(
                    "INSERT INTO allocations (resource_provider_id, "
                    "consumer_uuid, resource_class, used, created_at) "
                    "VALUES (999, 'c', 'VCPU', 1, CURRENT_TIMESTAMP)"))
    finally:
        other.cleanUp()
