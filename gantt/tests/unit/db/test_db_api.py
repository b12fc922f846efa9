"""The database handle: what a transaction costs in round trips, and that
a pooled connection never carries an old snapshot to its next user."""

import pytest
import sqlalchemy as sa

from gantt.db import models

GROUPS = models.InstanceGroup.__table__


def _rollbacks(db, monkeypatch):
    calls = []
    dialect = db.engine.dialect
    original = dialect.do_rollback

    def counted(dbapi_connection):
        calls.append(True)
        return original(dbapi_connection)

    monkeypatch.setattr(dialect, "do_rollback", counted)
    return calls


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
