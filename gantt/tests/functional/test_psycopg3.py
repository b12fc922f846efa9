"""PostgreSQL through the psycopg 3 driver (``postgresql+psycopg://``).

The other functional tests reach PostgreSQL through psycopg2; this story
runs the real commands once with a ``postgresql+psycopg://`` URL: the
schema by ``gantt-manage db sync``, then placements by a real
``gantt-scheduler`` (its claims are the prepared statements of
gantt.db.prepared, which psycopg 3 once crashed on at connect), then a
clean stop. The prepared-claim unit tests run on both drivers too.
"""

import os
import signal
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa

from gantt.db import migration
from gantt.tests import factories as f
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional import conftest
from gantt.tests.functional import invariants
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
CELL = str(uuid.UUID(int=0xC))


@pytest.fixture
def psycopg3_db():
    """An empty database on the local PostgreSQL, its URL for psycopg 3."""
    conftest._require_port(5432, "PostgreSQL", "pg_ctlcluster "
                           "--skip-systemctl-redirect $(ls /etc/postgresql) "
                           "main start")
    fx = gantt_fixtures.Database("postgresql+psycopg")
    fx.setUp()
    with fx.db.engine.begin() as conn:      # db sync must build it all
        meta = sa.MetaData()
        meta.reflect(conn)
        meta.drop_all(conn)
    yield fx
    fx.cleanUp()


def _manage(conf_file, *args):
    return subprocess.run(
        [os.path.join(BIN, "gantt-manage"), "--config-file", conf_file]
        + list(args), capture_output=True, text=True, timeout=waiting.CALL)


def test_sync_place_release_and_stop_through_psycopg3(
        psycopg3_db, rabbit, tmp_path):
    assert psycopg3_db.url.startswith("postgresql+psycopg://")
    daemon = conftest.Daemon(str(tmp_path), rabbit, psycopg3_db.url)
    sync = _manage(daemon.conf_file, "db", "sync")
    assert sync.returncode == 0, sync.stderr
    assert sync.stdout.strip() == "Database schema: empty -> %s" % (
        migration.head_version())

    daemon.start()
    try:
        for i in range(3):
            daemon.client.update_resource_stats(None, f.compute_node_obj(
                "pg3host%d" % i, cell_uuid=CELL, vcpus=4, memory_mb=8192,
                disk_gb=100))
        daemon.wait_for_hosts(3)
        uuids = f.uuids(4)
        spec = f.request(f.flavor(vcpus=2, memory_mb=2048, root_gb=10),
                         num_instances=4)
        lists = daemon.client.select_destinations(None, spec, uuids)

        assert [sels[0].consumer_uuid for sels in lists] == uuids
        assert all(sels[0].claimed for sels in lists)
        claims = invariants.allocations(psycopg3_db.db)
        assert {c: {rc: n for (_rp, rc), n in held.items()}
                for c, held in claims.items()} == {
            u: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10} for u in uuids}
        assert invariants.check(psycopg3_db.db).violations() == {}
        for u in uuids:
            assert daemon.client.release(None, u) is True
        assert invariants.allocations(psycopg3_db.db) == {}
    finally:
        code = daemon.stop(signal.SIGTERM)
        daemon.transport.cleanup()
    log = daemon.log()
    assert code == 0, log
    assert not conftest._tracebacks(log, set()), log
