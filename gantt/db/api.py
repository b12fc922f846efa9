"""Database handle: one oslo.db engine per process, and conflict detection."""

import contextlib
import threading
import time

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import base as pool_base

from gantt.db import prepared


class Database:
    """The SQL engine of one process, built from ``[database]`` options.

    ``begin()`` gives a Core connection inside one transaction. Gantt uses
    SQLAlchemy Core (not the ORM) on its hot paths: a claim is a handful of
    statements and must not pay for object identity maps.
    """

    def __init__(self, connection, *, max_pool_size=None, max_overflow=None,
                 pool_timeout=None, max_retries=10, retry_interval=1,
                 connection_recycle_time=3600, mysql_sql_mode="TRADITIONAL"):
        self.url = connection
        self.engine = engines.create_engine(
            connection,
            max_pool_size=max_pool_size,
            max_overflow=max_overflow,
            pool_timeout=pool_timeout,
            max_retries=max_retries,
            retry_interval=retry_interval,
            connection_recycle_time=connection_recycle_time,
            mysql_sql_mode=mysql_sql_mode,
            sqlite_synchronous=True,
            sqlite_fk=True,
            thread_checkin=False,
        )
        self.backend = self.engine.dialect.name
        # Every Connection ends its transaction itself: begin() commits or
        # rolls back, and a connection used without begin() rolls back its
        # implicit transaction when it closes. The pool's own ROLLBACK on
        # return (SQLAlchemy does it after a committed begin() too) is then
        # one more round trip per claim for nothing; oslo.db has no option
        # for it. (test_db_api checks the statements a transaction sends.)
        # Private pool attributes, here and below: setup.cfg pins
        # SQLAlchemy below 3, and the tests run on 2.0.21 and 2.1.
        self.engine.pool._reset_on_return = pool_base.reset_none
        # oslo.db also pings every connection the pool hands out: one more
        # round trip per claim (0.4 ms of a 6 ms tree claim on PostgreSQL
        # on the development machine). Ping only a connection that sat in
        # the pool for a while (see _ping_when_idle).
        self.engine.pool._pre_ping = False
        _ping_when_idle(self.engine, PING_IDLE_AFTER)
        # SQLite allows one writer at a time; queueing this process's
        # transactions on a lock is fairer and faster than SQLite's own
        # busy handler, which sleeps up to 100 ms between polls
        self._local_writer = (threading.Lock() if self.backend == "sqlite"
                              else contextlib.nullcontext())
        if self.backend == "sqlite":
            _serialize_sqlite_writers(self.engine)
        elif self.backend == "postgresql":
            prepared.plan_generically(self.engine)

    @classmethod
    def from_conf(cls, conf):
        db = conf.database
        return cls(db.connection,
                   max_pool_size=db.max_pool_size,
                   max_overflow=db.max_overflow,
                   pool_timeout=db.pool_timeout,
                   max_retries=db.max_retries,
                   retry_interval=db.retry_interval,
                   connection_recycle_time=db.connection_recycle_time,
                   mysql_sql_mode=db.mysql_sql_mode)

    @contextlib.contextmanager
    def begin(self):
        """One transaction; commits on success, rolls back on error."""
        with self._local_writer, self.engine.begin() as conn:
            yield conn

    def dispose(self):
        self.engine.dispose()

    def answers(self):
        """Whether the database answers a trivial query now.

        A statement the server refuses by closing the connection (MariaDB
        does so for one larger than its ``max_allowed_packet``) looks like
        an unreachable database to oslo.db (``DBConnectionError``); this
        tells the two apart.
        """
        try:
            with self.engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except (db_exc.DBError, sa_exc.SQLAlchemyError):
            return False
        return True


#: seconds a pooled connection may sit unused and still be handed out
#: without a ping
PING_IDLE_AFTER = 1.0


def _ping_when_idle(engine, idle_seconds):
    """Ping a pooled connection on checkout only if it was idle.

    The ping is there to find connections the server dropped while they
    sat in the pool (a restart, a failover, a timeout) and replace them
    before use. One checked in under ``idle_seconds`` ago was working
    then; if the server went away since, the statement fails as it would
    have if the server had gone away a moment later, mid-transaction:
    SQLAlchemy invalidates the pool, oslo.db raises DBConnectionError,
    and claims retry it (every caller must cope with that anyway).
    """
    @sa.event.listens_for(engine.pool, "checkin")
    def _checked_in(_dbapi_conn, record):
        if record is not None:
            record.info["gantt_checked_in"] = time.monotonic()

    @sa.event.listens_for(engine.pool, "checkout")
    def _checked_out(dbapi_conn, record, _proxy):
        checked_in = record.info.get("gantt_checked_in")
        if (checked_in is not None
                and time.monotonic() - checked_in < idle_seconds):
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except engine.dialect.loaded_dbapi.Error as exc:
            if engine.dialect.is_disconnect(exc, dbapi_conn, None):
                # the pool connects anew and tries again
                raise sa_exc.DisconnectionError(str(exc)) from exc
            raise


def _serialize_sqlite_writers(engine):
    """Make every SQLite transaction take the write lock at BEGIN.

    pysqlite starts transactions lazily and upgrades a read lock to a write
    lock later, which deadlocks two writers ("database is locked"). Taking
    the lock up front serialises them instead; SQLite is for the demo and
    unit tests, where that is the right trade.
    """
    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record):
        dbapi_conn.execute("PRAGMA busy_timeout = 30000")

    # NOTE: oslo.db emits its own plain BEGIN for SQLite (it turns pysqlite's
    # off); replace that listener with one that takes the write lock.
    for listener in list(engine.dispatch.begin):
        if getattr(listener, "__name__", "") == "_sqlite_emit_begin":
            sa.event.remove(engine, "begin", listener)

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        if "in_transaction" not in conn.info:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            conn.info["in_transaction"] = True


#: PostgreSQL SQLSTATEs that mean "another transaction won; try again"
_PG_RETRYABLE = {"40001", "40P01"}


def is_conflict(exc):
    """True when ``exc`` means a concurrent transaction won the race.

    MariaDB reports deadlocks (1213) and, under REPEATABLE READ with
    snapshot isolation, "record has changed since last read" (1020);
    PostgreSQL reports serialization failures (40001) and deadlocks (40P01).
    All of them are lost races, to be handled like a generation mismatch.
    """
    if isinstance(exc, (db_exc.DBDeadlock, db_exc.DBConsistencyError)):
        return True
    orig = getattr(exc, "orig", None)
    if orig is None and isinstance(exc, db_exc.DBError):
        inner = getattr(exc, "inner_exception", None)
        orig = getattr(inner, "orig", inner)
    if getattr(orig, "pgcode", None) in _PG_RETRYABLE:
        return True
    args = getattr(orig, "args", ())
    if args and args[0] in (1020, 1213):
        return True
    return isinstance(exc, sa_exc.OperationalError) and (
        "could not serialize access" in str(exc))
