"""Prepared statements on PostgreSQL: a claim's snapshot and writes are
planned once per server connection, and stay right across rollbacks and
replaced connections."""

from oslo_db import exception as db_exc
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import prepared
from gantt.db import reports
from gantt.tests import factories

H1 = factories.host_uuid("h1")
VM1, VM2, VM3, VM4 = factories.uuids(4)


def test_placeholders_become_positional_once_per_name():
    stmt = prepared.statement(
        "SELECT a FROM t WHERE a = %(x)s OR b = %(y)s OR c = %(x)s "
        "AND d LIKE 'a%%'")
    # a literal % stays escaped: SQLAlchemy interpolates the PREPARE too
    assert stmt.prepare == (
        "PREPARE " + stmt.name + " AS SELECT a FROM t WHERE a = $1 OR "
        "b = $2 OR c = $1 AND d LIKE 'a%%'")
    assert stmt.execute == "EXECUTE %s (%%(x)s, %%(y)s)" % stmt.name
    # the name follows the text: two shapes never share a name
    assert prepared.statement("SELECT 1").name != stmt.name


@pytest.fixture
def pg(postgresql_db):
    reports.save_report(postgresql_db, factories.compute_node_obj(
        "h1", vcpus=8, memory_mb=8192, disk_gb=100))
    return postgresql_db


def _statements(db):
    sent = []

    @sa.event.listens_for(db.engine, "before_cursor_execute")
    def _sent(_conn, _cursor, statement, *_args):
        sent.append(statement.split(None, 1)[0].upper())
    return sent


def _claim(db, consumer, vcpus):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, {H1: {"VCPU": vcpus}},
                                 new=True)


def _prepared_here(db):
    with db.begin() as conn:
        return {r[0] for r in conn.exec_driver_sql(
            "SELECT name FROM pg_prepared_statements")}


@pytest.fixture
def one_connection(pg):
    """A Database whose pool holds one connection, so that every
    transaction below runs on the same server connection."""
    db = db_api.Database(pg.url, max_pool_size=1)
    yield db
    db.dispose()


def test_a_claim_prepares_its_statements_once_per_connection(
        one_connection):
    db = one_connection
    _claim(db, VM1, 1)
    sent = _statements(db)
    _claim(db, VM2, 1)
    _claim(db, VM3, 1)
    assert "PREPARE" not in sent
    assert sent.count("EXECUTE") == 4       # snapshot + writes, twice
    assert {n for n in _prepared_here(db) if n.startswith("gantt_")}
    with db.begin() as conn:
        assert allocations.consumer_allocations(conn, VM3) == {
            H1: {"VCPU": 1}}
        plan_mode = conn.exec_driver_sql("SHOW plan_cache_mode").scalar()
    assert plan_mode == "force_generic_plan"


def test_a_prepared_claim_still_checks_capacity_after_a_rollback(pg):
    """A refused claim rolls its transaction back; the statements it
    prepared stay, and the next claims still read the usage now."""
    with pytest.raises(exception.CapacityExceeded):
        _claim(pg, VM1, 9)
    _claim(pg, VM2, 6)
    with pytest.raises(exception.CapacityExceeded):
        _claim(pg, VM3, 3)
    _claim(pg, VM4, 2)
    with pg.begin() as conn:
        assert allocations.consumer_allocations(conn, VM1) == {}
        assert allocations.consumer_allocations(conn, VM4) == {
            H1: {"VCPU": 2}}


def test_a_replaced_connection_prepares_again(pg, monkeypatch):
    """The server dropped the connection that had the statements: its
    replacement has none, and must prepare them rather than EXECUTE a
    name the server does not know."""
    monkeypatch.setattr(db_api, "PING_IDLE_AFTER", 0.0)
    db = db_api.Database(pg.url, max_pool_size=1)
    try:
        _claim(db, VM1, 1)
        with db.begin() as conn:
            victim = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with pg.begin() as conn:
            conn.exec_driver_sql("SELECT pg_terminate_backend(%d)" % victim)
        sent = _statements(db)
        _claim(db, VM2, 1)
        assert sent.count("PREPARE") == 2
    finally:
        db.dispose()
    with pg.begin() as conn:
        assert allocations.consumer_allocations(conn, VM2) == {
            H1: {"VCPU": 1}}


def test_past_the_cap_a_shape_runs_unprepared(one_connection,
                                              monkeypatch):
    """Each batch size is a statement shape of its own; a connection
    prepares a bounded number of them and runs the others as they are."""
    db = one_connection
    _claim(db, VM1, 1)
    monkeypatch.setattr(prepared, "MAX_PER_CONNECTION", 0)
    sent = _statements(db)
    with db.begin() as conn:
        allocations.claim_new(conn, [
            allocations.NewClaim(VM2, {H1: {"VCPU": 1}}),
            allocations.NewClaim(VM3, {H1: {"VCPU": 1}})])
    # the snapshot's shape was prepared by the first claim; the two
    # consumers' writes are a new shape, sent as they are
    assert sent == ["EXECUTE", "WITH"]
    with db.begin() as conn:
        assert allocations.consumer_allocations(conn, VM3) == {
            H1: {"VCPU": 1}}


def test_the_snapshot_rows_are_named_as_the_select_names_them():
    statement = allocations._snapshot_statement(True, True, True, True,
                                                arrays=True)
    assert allocations._SnapshotRow._fields == tuple(
        c.name for c in statement.selected_columns)


def test_a_connection_lost_under_a_prepared_statement_is_typed(
        pg, monkeypatch):
    """The server dropped the connection the statements were prepared
    on: the claim fails typed (a claim retries DBConnectionError), the
    dead connection leaves the pool, and the next claim prepares on a new
    one."""
    monkeypatch.setattr(db_api, "PING_IDLE_AFTER", 3600)
    db = db_api.Database(pg.url, max_pool_size=1)
    try:
        _claim(db, VM1, 1)          # the statements are prepared there
        with db.begin() as conn:
            victim = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with pg.begin() as conn:
            conn.exec_driver_sql("SELECT pg_terminate_backend(%d)" % victim)
        with pytest.raises(db_exc.DBConnectionError):
            _claim(db, VM2, 1)
        _claim(db, VM2, 1)          # on a new connection, prepared anew
    finally:
        db.dispose()
    with pg.begin() as conn:
        assert allocations.consumer_allocations(conn, VM2) == {
            H1: {"VCPU": 1}}


def test_a_stored_consumer_is_refused_typed_on_the_prepared_path(
        one_connection):
    db = one_connection
    _claim(db, VM1, 1)
    with pytest.raises(allocations.ConsumerExists):
        _claim(db, VM1, 1)
    _claim(db, VM2, 1)              # the connection is still usable
