"""Throw-away databases on this machine's MariaDB, PostgreSQL or SQLite.

Used by both sides (SQLAlchemy is in both venvs): each benchmark gets a new,
uniquely named database and drops it at the end, so that runs never see
each other's rows and the servers' own databases are never touched.
"""

import os
import shutil
import tempfile
import time
import uuid

import harness
import sqlalchemy as sa


class ThrowawayDB:
    """A new, uniquely named, empty database, dropped by :meth:`drop`."""

    def __init__(self, backend, prefix="gantt_bench_"):
        self.backend = backend
        self.name = prefix + uuid.uuid4().hex[:10]
        self._tmp = None
        self._admin = None
        if backend == "sqlite":
            self._tmp = tempfile.mkdtemp(prefix="gantt-bench-")
            self.url = "sqlite:///" + os.path.join(self._tmp, "gantt.sqlite")
            return
        harness.require_services(backend)
        if backend == "mysql":
            admin = harness.MYSQL_ADMIN_URL
            self.url = "%s/%s?charset=utf8mb4" % (admin.rstrip("/"),
                                                   self.name)
            create = "CREATE DATABASE %s CHARACTER SET utf8mb4" % self.name
        else:
            admin = harness.POSTGRES_ADMIN_URL
            self.url = admin.rsplit("/", 1)[0] + "/" + self.name
            create = "CREATE DATABASE %s" % self.name
        self._admin = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
        with self._admin.connect() as conn:
            conn.exec_driver_sql(create)

    def drop(self):
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            return
        with self._admin.connect() as conn:
            if self.backend == "postgresql":
                conn.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = '%s'" % self.name)
            conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % self.name)
        self._admin.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.drop()


def analyze(engine):
    """Refresh the planner's statistics after a bulk load, as a live
    database's autovacuum / persistent statistics would have, and let the
    server settle (see :func:`settle`)."""
    name = engine.dialect.name
    with engine.connect() as conn:
        if name == "postgresql":
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            # VACUUM too: a bulk load left every page for autovacuum to
            # visit (during the timed loop) and the visibility map unset
            # (index-only scans fetching heap rows)
            conn.exec_driver_sql("VACUUM ANALYZE")
        elif name == "mysql":
            tables = [r[0] for r in conn.exec_driver_sql("SHOW TABLES")]
            if tables:
                conn.exec_driver_sql("ANALYZE TABLE " + ", ".join(
                    "`%s`" % t for t in tables)).all()
        else:
            conn.exec_driver_sql("ANALYZE")
            conn.commit()
    settle(engine)


def settle(engine, timeout=60.0):
    """Let the server write out what a bulk load left in memory before
    anything is timed, so that its background flushing does not share the
    two cores with the measured loop (after inserting 50 000 providers it
    took p99s from 6-9 ms to 15-50 ms). PostgreSQL: a CHECKPOINT.
    MariaDB: flush dirty InnoDB pages eagerly until few are left, then
    restore the server's setting."""
    name = engine.dialect.name
    started = time.monotonic()
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        if name == "postgresql":
            conn.exec_driver_sql("CHECKPOINT")
        elif name == "mysql":
            pct = conn.exec_driver_sql(
                "SELECT @@GLOBAL.innodb_max_dirty_pages_pct").scalar()
            conn.exec_driver_sql("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            try:
                while time.monotonic() - started < timeout:
                    dirty = int(conn.exec_driver_sql(
                        "SHOW GLOBAL STATUS LIKE "
                        "'Innodb_buffer_pool_pages_dirty'").one()[1])
                    if dirty < 100:
                        break
                    time.sleep(0.5)
            finally:
                conn.exec_driver_sql(
                    "SET GLOBAL innodb_max_dirty_pages_pct = %s" % pct)
        else:
            return
    harness.log("%s settled (written out) in %.1fs", name,
                time.monotonic() - started)
