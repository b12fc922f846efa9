"""Host identity in SQL on every backend: the boot id guard, one compute
node per host name (also between racing writers), the operator's reset and
delete, and migration 0007."""

import threading

from oslo_db import exception as db_exc
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import hosts
from gantt.db import migration
from gantt.db import models
from gantt.db import reports
from gantt.tests import factories
from gantt.tests import stored_hosts

REPORTS = models.HostReport.__table__
BOOT_A = "0a0a0a0a-0000-4000-8000-00000000000a"
BOOT_B = "0b0b0b0b-0000-4000-8000-00000000000b"
FORGED = 2 ** 63 - 1


def _node(name="h1", uuid_of=None, **fields):
    node = factories.compute_node_obj(name, **fields)
    node.uuid = factories.host_uuid(uuid_of or name)
    return node


def _stored(db):
    with db.begin() as conn:
        return [tuple(r) for r in conn.execute(
            sa.select(REPORTS.c.host, REPORTS.c.report_sequence,
                      REPORTS.c.boot_id).order_by(REPORTS.c.host))]


def test_a_new_boot_is_stored_whatever_its_sequence(any_db):
    reports.save_report(any_db, _node(sequence=FORGED, boot_id=BOOT_A))
    assert not reports.save_report(
        any_db, _node(sequence=5, boot_id=BOOT_A)).applied
    assert not reports.save_report(any_db, _node(sequence=5)).applied
    assert reports.save_report(
        any_db, _node(sequence=5, boot_id=BOOT_B)).applied
    assert _stored(any_db) == [("h1", 5, BOOT_B)]


def test_a_second_provider_under_a_stored_host_name_is_refused(any_db):
    reports.save_report(any_db, _node(sequence=1))
    before = stored_hosts.load_hosts(any_db)
    with pytest.raises(exception.HostNameTaken) as err:
        reports.save_report(any_db, _node(uuid_of="impostor", vcpus=1))
    assert err.value.kwargs == {"host": "h1", "uuid": factories.host_uuid(
        "impostor"), "holder": factories.host_uuid("h1")}
    # nor may a known compute node rename itself to a name held
    reports.save_report(any_db, _node("h2", sequence=1))
    with pytest.raises(exception.HostNameTaken):
        reports.save_report(any_db, _node("h1", uuid_of="h2", sequence=2))
    assert [h for h in stored_hosts.load_hosts(any_db)
            if h.uuid == factories.host_uuid("h1")] == before
    assert _stored(any_db) == [("h1", 1, None), ("h2", 1, None)]


def test_of_two_racing_providers_one_gets_the_name(server_db, monkeypatch):
    """Both find the name free, then both insert: the unique key lets one
    in; the other, checking again, is refused."""
    barrier = threading.Barrier(2)
    outcomes = []
    check = reports._check_host_name
    first_check = threading.local()

    def check_then_meet(conn, node):
        check(conn, node)
        if not getattr(first_check, "done", False):
            first_check.done = True
            barrier.wait(timeout=10)

    monkeypatch.setattr(reports, "_check_host_name", check_then_meet)

    def report(name):
        try:
            reports.save_report(server_db, _node(uuid_of=name))
            outcomes.append(name)
        except exception.HostNameTaken:
            outcomes.append("refused")

    threads = [threading.Thread(target=report, args=(n,))
               for n in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("refused") == 1, outcomes
    [winner] = set(outcomes) - {"refused"}
    [host] = stored_hosts.load_hosts(server_db)
    assert host.uuid == factories.host_uuid(winner)


def test_the_operator_reset_lets_any_next_report_in(any_db):
    reports.save_report(any_db, _node(sequence=FORGED, boot_id=BOOT_A))
    assert hosts.reset_sequence(any_db, "h1") == factories.host_uuid("h1")
    assert _stored(any_db) == [("h1", hosts.RESET_SEQUENCE, None)]
    # a worker starting now loads it as it is
    [loaded] = stored_hosts.load_hosts(any_db)
    assert loaded.report["report_sequence"] == hosts.RESET_SEQUENCE
    assert reports.save_report(any_db, _node(sequence=0)).applied
    with pytest.raises(exception.HostNotFound):
        hosts.reset_sequence(any_db, "h9")


def test_a_host_is_deleted_only_without_allocations(any_db):
    reports.save_report(any_db, _node(sequence=1))
    consumer = factories.uuids(1)[0]
    with any_db.begin() as conn:
        allocations.claim(conn, consumer, {factories.host_uuid("h1"): {
            "VCPU": 1}})
    with pytest.raises(exception.ProviderInUse):
        hosts.delete_host(any_db, "h1")
    assert len(stored_hosts.load_hosts(any_db)) == 1
    with any_db.begin() as conn:
        allocations.release(conn, consumer)
    assert hosts.delete_host(any_db, "h1") == factories.host_uuid("h1")
    assert stored_hosts.load_hosts(any_db) == []
    # and the name is free for a re-installed host
    assert reports.save_report(any_db, _node(uuid_of="new")).applied
    with pytest.raises(exception.HostNotFound):
        hosts.delete_host(any_db, "h9")


def test_boot_ids_are_read_for_the_cache(any_db):
    reports.save_report(any_db, _node("h1", boot_id=BOOT_A))
    reports.save_report(any_db, _node("h2"))
    assert hosts.boot_ids(any_db) == {factories.host_uuid("h1"): BOOT_A}


@pytest.fixture(params=["sqlite", "mysql", "postgresql"])
def db_at_0006(request, tmp_path):
    """A database at migration 0006 on each backend."""
    from gantt.db import api as db_api
    from gantt.tests import fixtures as gantt_fixtures
    if request.param == "sqlite":
        db = db_api.Database("sqlite:///" + str(tmp_path / "m.sqlite"))
        cleanup = db.dispose
    else:
        fx = gantt_fixtures.Database(request.param)
        fx.setUp()
        db, cleanup = fx.db, fx.cleanUp
        with db.engine.begin() as conn:
            meta = sa.MetaData()
            meta.reflect(conn)
            meta.drop_all(conn)
    migration.upgrade(db, "0006")
    yield db
    cleanup()


def _insert_host(db, uuid, host):
    with db.engine.begin() as conn:
        rp_id = conn.execute(sa.text(
            "INSERT INTO resource_providers (uuid, name, generation, "
            "created_at) VALUES (:u, :h, 0, CURRENT_TIMESTAMP)"),
            {"u": uuid, "h": host}).lastrowid or conn.execute(sa.text(
                "SELECT id FROM resource_providers WHERE uuid = :u"),
                {"u": uuid}).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO host_reports (resource_provider_id, host, nodename, "
            "disabled, report_sequence, num_instances, num_io_ops, details, "
            "received_at) VALUES (:id, :h, :h, false, 7, 0, 0, '{}', "
            "CURRENT_TIMESTAMP)"), {"id": rp_id, "h": host})


def test_0007_keeps_hosts_and_makes_names_unique(db_at_0006):
    _insert_host(db_at_0006, "u-1", "h1")
    migration.upgrade(db_at_0006, "0007")
    assert _stored(db_at_0006) == [("h1", 7, None)]
    with pytest.raises(db_exc.DBDuplicateEntry):
        _insert_host(db_at_0006, "u-2", "h1")


def test_0007_stops_on_shared_host_names_and_says_which(db_at_0006):
    for uuid, host in (("u-1", "h1"), ("u-2", "h1"), ("u-3", "h2")):
        _insert_host(db_at_0006, uuid, host)
    with pytest.raises(RuntimeError) as err:
        migration.upgrade(db_at_0006, "0007")
    assert "host(s) h1." in str(err.value)
    assert migration.current_version(db_at_0006) == "0006"
