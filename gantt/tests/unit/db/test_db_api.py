"""The database handle: what a transaction costs in round trips, and that
a pooled connection never carries an old snapshot to its next user."""

import time

from oslo_db import exception as db_exc
import pytest
import sqlalchemy as sa

from gantt.db import api as db_api
from gantt.db import models

GROUPS = models.InstanceGroup.__table__


def _calls(db, monkeypatch, method):
    """Record each call of the dialect's ``method`` (do_rollback, ...)."""
    calls = []
    dialect = db.engine.dialect
    original = getattr(dialect, method)

    def counted(dbapi_connection):
        calls.append(True)
        return original(dbapi_connection)

    monkeypatch.setattr(dialect, method, counted)
    return calls


def _rollbacks(db, monkeypatch):
    return _calls(db, monkeypatch, "do_rollback")


def _count(conn):
    return conn.execute(sa.select(sa.func.count()).select_from(
        GROUPS)).scalar()


def _add_group(db, name):
    with db.begin() as conn:
        conn.execute(GROUPS.insert().values(
            uuid=name, policy="affinity", generation=0,
            max_server_per_host=1, created_at=sa.func.current_timestamp()))


def test_a_committed_transaction_sends_no_rollback(any_db, monkeypatch):
    """COMMIT ends the transaction; a ROLLBACK when the connection goes
    back to the pool would be one more round trip on every claim."""
    rollbacks = _rollbacks(any_db, monkeypatch)
    _add_group(any_db, "g1")
    assert rollbacks == []


def test_a_failed_transaction_is_rolled_back(any_db, monkeypatch):
    rollbacks = _rollbacks(any_db, monkeypatch)
    with pytest.raises(RuntimeError), any_db.begin() as conn:
        conn.execute(GROUPS.insert().values(
            uuid="g1", policy="affinity", generation=0,
            max_server_per_host=1, created_at=sa.func.current_timestamp()))
        raise RuntimeError("the claim failed half-way")
    assert len(rollbacks) == 1
    with any_db.begin() as conn:
        assert _count(conn) == 0


def test_a_read_without_begin_leaves_no_snapshot_behind(server_db):
    """A connection read without begin() goes back to the pool; its next
    user (on MariaDB's REPEATABLE READ) must see what others committed
    since, not the snapshot of that read."""
    db = server_db
    with db.engine.connect() as conn:
        assert _count(conn) == 0
    _add_group(db, "g1")
    for _ in range(3):      # whichever pooled connection comes back
        with db.engine.connect() as conn:
            assert _count(conn) == 1
        with db.begin() as conn:
            assert _count(conn) == 1


# -- pings: only a connection that sat idle in the pool --------------------


def _pings(db, monkeypatch):
    return _calls(db, monkeypatch, "do_ping")


def test_a_connection_in_steady_use_is_not_pinged(server_db, monkeypatch):
    """Claims follow each other on the same pooled connections: a ping on
    every checkout would be one more round trip per claim."""
    _add_group(server_db, "warm")     # the pool holds a checked-in one now
    pings = _pings(server_db, monkeypatch)
    for i in range(5):
        _add_group(server_db, "g%d" % i)
    assert pings == []


def _backend_id(conn):
    if conn.dialect.name == "postgresql":
        return conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
    return conn.exec_driver_sql("SELECT CONNECTION_ID()").scalar()


def _kill(url, backend_id):
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SELECT pg_terminate_backend(%d)"
                                 % backend_id)
        else:
            conn.exec_driver_sql("KILL CONNECTION %d" % backend_id)
    engine.dispose()


@pytest.mark.parametrize("idle_after,replaced", [(0.05, True),
                                                 (3600, False)])
def test_a_connection_dropped_while_idle_is_replaced_before_use(
        server_db, monkeypatch, idle_after, replaced):
    """The server dropped a pooled connection (a restart, a failover):
    once it sat idle past the threshold, checkout pings it and the pool
    connects anew, so the next transaction never sees the loss. Under the
    threshold there is no ping and the loss surfaces as oslo.db's
    DBConnectionError (which claims retry): that case shows the ping is
    what saved the first."""
    monkeypatch.setattr(db_api, "PING_IDLE_AFTER", idle_after)
    db = db_api.Database(server_db.url, max_pool_size=1)
    try:
        with db.begin() as conn:
            victim = _backend_id(conn)
        _kill(server_db.url, victim)
        time.sleep(0.2)
        if replaced:
            with db.begin() as conn:
                assert _backend_id(conn) != victim
                assert _count(conn) == 0
        else:
            with pytest.raises(db_exc.DBConnectionError), \
                    db.begin() as conn:
                _count(conn)
            with db.begin() as conn:      # the pool recovers
                assert _backend_id(conn) != victim
    finally:
        db.dispose()
