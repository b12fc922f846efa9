"""Server-side prepared statements for a claim's statements on PostgreSQL.

A claim's statements touch a handful of rows, so PostgreSQL spends about
as long planning each of them as running it (the snapshot: 0.2 to 0.3 ms
of planning for 0.1 ms of execution on the development machine). Such a
statement is prepared once per connection (``PREPARE``) and run with
``EXECUTE``, and the connection plans prepared statements once, generically
(``plan_cache_mode = force_generic_plan``, set when it connects): their
plans do not depend on the values (index lookups by id and uuid).

The SQL given is what SQLAlchemy compiles for psycopg2 or psycopg 3
(both ``%(name)s`` placeholders); it becomes ``$1 .. $n`` in the
``PREPARE``. ``EXECUTE``
runs on the driver's cursor, with its errors handed to SQLAlchemy's
connection, so oslo.db still turns them into its typed exceptions
(duplicate entry, deadlock, lost connection).

A prepared statement lives as long as its server connection and survives
a rolled-back transaction; a connection replaced after an error is a new
DBAPI connection, on which statements are prepared again.
"""

import dataclasses
import functools
import hashlib
import re
import threading
import weakref

import sqlalchemy as sa

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")

#: statements prepared on one connection at most; the common shapes (a
#: snapshot of a few providers, one consumer's writes) come first
MAX_PER_CONNECTION = 64

#: DBAPI connection -> names of the statements prepared on it
_prepared_on = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Statement:
    name: str
    prepare: str       # PREPARE name AS ... ($n placeholders)
    execute: str       # EXECUTE name (%(a)s, ...) (client-side placeholders)


@functools.lru_cache(maxsize=256)
def statement(sql):
    """The PREPARE and EXECUTE forms of ``sql`` (pyformat placeholders)."""
    names = {}       # name -> its position, in order of appearance

    def positional(match):
        return "$%d" % names.setdefault(match.group(1), len(names) + 1)

    body = _PLACEHOLDER.sub(positional, sql)
    name = "gantt_" + hashlib.sha1(sql.encode()).hexdigest()[:20]
    execute = "EXECUTE " + name
    if names:
        execute += " (%s)" % ", ".join("%%(%s)s" % n for n in names)
    return Statement(name, "PREPARE %s AS %s" % (name, body), execute)


def execute(conn, sql, params):
    """Run ``sql`` with ``params`` as a prepared statement on ``conn``'s
    server connection, preparing it there first if needed.

    :param conn: a SQLAlchemy Connection to PostgreSQL (psycopg2 or
        psycopg 3)
    :param sql: a statement that returns rows (a SELECT, or DML with
        RETURNING or a SELECT over its CTEs)
    :returns: the rows, as tuples
    """
    stmt = statement(sql)
    dbapi_conn = conn.connection.dbapi_connection
    with _prepared_lock:
        done = _prepared_on.setdefault(dbapi_conn, set())
    if stmt.name not in done:
        if len(done) >= MAX_PER_CONNECTION:
            # rare shapes (large batches) run as they are: each prepared
            # statement holds server memory for the connection's life
            return [tuple(r) for r in conn.exec_driver_sql(sql, params)]
        # through SQLAlchemy, for oslo.db's typed errors; it interpolates
        # even without parameters, so a literal % stays escaped as %%
        conn.exec_driver_sql(stmt.prepare)
        done.add(stmt.name)
    return _run(conn, dbapi_conn, stmt.execute, params)


def _run(conn, dbapi_conn, statement_text, params):
    """The EXECUTE on the driver's cursor: SQLAlchemy's result handling of
    a textual statement (column names decoded, result processors looked
    up for every column, every time) cost more than the database's work
    for a claim's snapshot. What SQLAlchemy does around a statement that
    matters here is kept: cursor events fire, and an error goes through
    its handling, so oslo.db turns it into its typed exceptions and a lost
    connection is invalidated (``Connection._handle_dbapi_exception`` is
    how SQLAlchemy's own execution does it: private API, which setup.cfg
    pins below SQLAlchemy 3; the tests run it on 2.0.21 and 2.1)."""
    cursor = _client_side_cursor(dbapi_conn)
    if conn._has_events or conn.engine._has_events:
        conn.dispatch.before_cursor_execute(conn, cursor, statement_text,
                                            params, None, False)
    try:
        cursor.execute(statement_text, params)
        rows = cursor.fetchall()
    except Exception as exc:
        conn._handle_dbapi_exception(exc, statement_text, params, cursor,
                                     None)
    finally:
        cursor.close()
    return rows


def _client_side_cursor(dbapi_conn):
    """A cursor that puts the parameters into the text itself.

    psycopg2's cursors all do. psycopg 3's default cursor sends them
    apart, as ``$n`` for the server to bind, and ``EXECUTE name ($1)``
    fails there: the arguments of EXECUTE have no type PostgreSQL could
    infer. Its ClientCursor (psycopg 3.1 and later) interpolates them on
    the client, as psycopg2 does.
    """
    if type(dbapi_conn).__module__.split(".", 1)[0] == "psycopg":
        # loaded already (the connection is one of its), and only then
        import psycopg
        return psycopg.ClientCursor(dbapi_conn)
    return dbapi_conn.cursor()


def _no_driver_preparing(dbapi_conn):
    """Leave preparing to this module on a psycopg 3 connection.

    psycopg 3 prepares a query itself once it ran 5 times, and once it
    holds any such statement, every rollback ends in DEALLOCATE ALL,
    which drops this module's statements with its own (it cannot tell
    whether they survived the rollback). psycopg2 prepares nothing.
    """
    if hasattr(dbapi_conn, "prepare_threshold"):
        dbapi_conn.prepare_threshold = None


def plan_generically(engine):
    """Make ``engine``'s PostgreSQL connections plan prepared statements
    once, whatever the values (PostgreSQL 12 and later)."""
    @sa.event.listens_for(engine, "connect")
    def _generic_plans(dbapi_conn, _record):
        _no_driver_preparing(dbapi_conn)
        if dbapi_conn.info.server_version < 120000:
            return
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("SET plan_cache_mode = force_generic_plan")
        finally:
            cursor.close()
        # SET is transactional: commit it, or the first rollback undoes it
        dbapi_conn.commit()

    # oslo.db connected once already, to test the URL: that connection
    # would never get the setting
    engine.pool.dispose()
