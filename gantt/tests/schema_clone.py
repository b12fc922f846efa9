"""Migrate once, clone per test: the schema templates of a test process.

Every test that asks for a migrated database used to run Gantt's 16
revisions: 0.3 s on SQLite, 0.7 s on PostgreSQL, 3 s on MariaDB, paid
thousands of times a run. A clone gives the test the same schema (tables,
keys, foreign keys, sequences, the alembic revision) in a fraction of
that, and the revisions themselves still run, once per process and
backend, through :func:`gantt.db.migration.upgrade` (and in full, for
every engine, in the migration tests that ask for ``clone=False``).

* SQLite: the template is a file; a clone is a copy of it.
* PostgreSQL: the template is a database; ``CREATE DATABASE … TEMPLATE``
  copies it on the server. It lives until the process exits.
* MariaDB has no template databases: the template's ``SHOW CREATE TABLE``
  statements and its rows (the alembic revision) are read once, and a
  clone replays them with foreign-key checks off (so that the tables may
  come in any order), the template itself dropped at once.

The templates are named after the revision scripts' contents and the
process, so that two checkouts, two pytest-xdist workers or a changed
revision never share one. The memo below is the one piece of process
state in the test fixtures: a lock guards it, since a test may make
databases from several threads.
"""

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading

import sqlalchemy as sa

from gantt.db import api as db_api
from gantt.db import migration

_LOCK = threading.Lock()
_MEMO = {}
_PREFIX = "gantt_tmpl_"


def _scripts_key():
    """A short digest of the revision scripts: a new revision, a new
    template."""
    versions = os.path.join(os.path.dirname(migration.__file__),
                            "migrations", "versions")
    digest = hashlib.sha1()
    for name in sorted(os.listdir(versions)):
        if name.endswith(".py"):
            with open(os.path.join(versions, name), "rb") as f:
                digest.update(name.encode() + f.read())
    return digest.hexdigest()[:10]


def _template_name():
    return "%s%s_%d" % (_PREFIX, _scripts_key(), os.getpid())


def _memo(key, make, still_there=lambda made: True):
    with _LOCK:
        if key not in _MEMO or not still_there(_MEMO[key]):
            _MEMO[key] = make()
        return _MEMO[key]


def _migrate(url):
    db = db_api.Database(url)
    try:
        migration.upgrade(db)
    finally:
        db.dispose()


def sqlite_template():
    """The path of this process's migrated SQLite file (made again when a
    test's clean-up took it: Nova's functional tests give every test a
    temporary folder of its own and remove it afterwards)."""
    return _memo("sqlite", _make_sqlite, os.path.exists)


def _make_sqlite():
    folder = tempfile.mkdtemp(prefix="gantt-schema-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "template.sqlite")
    _migrate("sqlite:///" + path)
    return path


def postgresql_template(admin_url):
    """The name of this process's migrated PostgreSQL database."""
    return _memo(("postgresql", admin_url),
                 lambda: _make_postgresql(admin_url))


def _make_postgresql(admin_url):
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = _template_name()
    with admin.connect() as conn:
        _drop_orphans(conn)
        conn.exec_driver_sql("CREATE DATABASE %s" % name)
    atexit.register(_drop_postgresql, admin, name)
    _migrate(admin_url.rsplit("/", 1)[0] + "/" + name)
    return name


def _drop_orphans(conn):
    """Drop the templates of test processes that died without their exit
    handlers (SIGKILL, a CI time-out)."""
    rows = conn.execute(sa.text(
        "SELECT datname FROM pg_database WHERE datname LIKE :prefix"),
        {"prefix": _PREFIX + "%"}).fetchall()
    for (name,) in rows:
        pid = int(re.sub(r".*_", "", name))
        if not _alive(pid):
            conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop_postgresql(admin, name):
    with admin.connect() as conn:
        conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
    admin.dispose()


class _MysqlSchema:
    """What a MariaDB clone replays: each table's DDL and its rows."""

    def __init__(self, ddl, rows):
        self.ddl, self.rows = ddl, rows


def mysql_copy(admin_url, name):
    """Give the empty database ``name`` the migrated schema."""
    schema = _memo(("mysql", admin_url), lambda: _make_mysql(admin_url))
    engine = sa.create_engine(admin_url.rstrip("/") + "/" + name)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("SET FOREIGN_KEY_CHECKS = 0")
            for ddl in schema.ddl:
                conn.exec_driver_sql(ddl)
            for table, rows in schema.rows.items():
                _insert(conn, table, rows)
            conn.exec_driver_sql("SET FOREIGN_KEY_CHECKS = 1")
    finally:
        engine.dispose()


def _insert(conn, table, rows):
    columns = list(rows[0])
    conn.execute(sa.text("INSERT INTO `%s` (%s) VALUES (%s)" % (
        table, ", ".join("`%s`" % c for c in columns),
        ", ".join(":%s" % c for c in columns))), rows)


def _make_mysql(admin_url):
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = _template_name()
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql("CREATE DATABASE %s CHARACTER SET utf8mb4"
                                 % name)
        try:
            _migrate(admin_url.rstrip("/") + "/" + name + "?charset=utf8mb4")
            return _read_mysql(admin, name)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
    finally:
        admin.dispose()


def _read_mysql(admin, name):
    with admin.connect() as conn:
        tables = [t for (t,) in conn.exec_driver_sql(
            "SELECT table_name FROM information_schema.tables WHERE "
            "table_schema = %s AND table_type = 'BASE TABLE' "
            "ORDER BY table_name", (name,))]
        ddl = [conn.exec_driver_sql("SHOW CREATE TABLE `%s`.`%s`" % (
            name, t)).fetchone()[1] for t in tables]
        rows = {}
        for t in tables:
            found = conn.exec_driver_sql(
                "SELECT * FROM `%s`.`%s`" % (name, t)).mappings().all()
            if found:
                rows[t] = [dict(r) for r in found]
    return _MysqlSchema(ddl, rows)
