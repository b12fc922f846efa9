"""Database fixtures for the DB unit tests that must hold on every backend.

MariaDB and PostgreSQL are the local servers (see gantt.tests.fixtures);
a test that needs them fails, never skips, when they are down. Each server
database is created and migrated once per session and emptied before every
test, which keeps these tests as fast as SQLite's.
"""

import pytest

from gantt.db import models
from gantt.tests import fixtures as gantt_fixtures

BACKENDS = ["sqlite", "mysql", "postgresql"]


@pytest.fixture(scope="session")
def _server_databases():
    made = {}
    yield made
    for fx in made.values():
        fx.cleanUp()


def _empty(db):
    with db.begin() as conn:
        for table in reversed(models.Base.metadata.sorted_tables):
            conn.execute(table.delete())


def _database(backend, servers):
    if backend == "sqlite":
        fx = gantt_fixtures.Database(backend)
        fx.setUp()
        return fx.db, fx.cleanUp
    if backend not in servers:
        fx = gantt_fixtures.Database(backend)
        fx.setUp()
        servers[backend] = fx
    db = servers[backend].db
    _empty(db)
    return db, lambda: None


@pytest.fixture(params=BACKENDS)
def any_db(request, _server_databases):
    """A migrated, empty database on SQLite, MariaDB, then PostgreSQL."""
    db, done = _database(request.param, _server_databases)
    yield db
    done()


@pytest.fixture(params=BACKENDS[1:])
def server_db(request, _server_databases):
    """A migrated, empty database on MariaDB, then PostgreSQL (for races
    that need concurrent writers, which SQLite serialises)."""
    db, done = _database(request.param, _server_databases)
    yield db
    done()


@pytest.fixture(params=["postgresql", "postgresql+psycopg"])
def postgresql_db(request, _server_databases):
    """A migrated, empty PostgreSQL database (what only it does), through
    psycopg2, then through psycopg 3."""
    db, done = _database(request.param, _server_databases)
    yield db
    done()
