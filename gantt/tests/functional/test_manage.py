"""gantt-manage and gantt-scheduler start-up, on all three databases."""

import os
import subprocess
import sys

import pytest
import sqlalchemy as sa

from gantt.db import migration
from gantt.tests.functional import conftest

BIN = os.path.dirname(sys.executable)


def _run(*args):
    return subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]),
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(params=["sqlite", "mysql", "postgresql"])
def empty_db_url(request, tmp_path):
    if request.param == "sqlite":
        yield "sqlite:///" + str(tmp_path / "gantt.sqlite")
        return
    fx = conftest._database(request.param)
    # start from an empty schema: drop what the fixture migrated
    with fx.db.engine.begin() as conn:
        meta = sa.MetaData()
        meta.reflect(conn)
        meta.drop_all(conn)
    yield fx.url
    fx.cleanUp()


def test_db_sync_and_version(empty_db_url, tmp_path):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = %s\n" % empty_db_url)
    version = _run("gantt-manage", "--config-file", str(conf), "db",
                   "version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == "empty"
    sync = _run("gantt-manage", "--config-file", str(conf), "db", "sync")
    assert sync.returncode == 0, sync.stderr
    assert "empty -> %s" % migration.head_version() in sync.stdout
    again = _run("gantt-manage", "--config-file", str(conf), "db", "sync")
    assert again.returncode == 0, again.stderr
    version = _run("gantt-manage", "--config-file", str(conf), "db",
                   "version")
    assert version.stdout.strip() == migration.head_version()
    engine = sa.create_engine(empty_db_url)
    tables = set(sa.inspect(engine).get_table_names())
    engine.dispose()
    assert {"resource_providers", "inventories", "allocations",
            "consumers", "host_reports", "instance_groups"} <= tables


def test_unknown_filter_stops_the_daemon_with_a_clear_message(tmp_path):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n"
                    "[filter_scheduler]\nenabled_filters = ComputeFilter,"
                    "NoSuchFilter\n" % (tmp_path / "g.sqlite"))
    result = _run("gantt-scheduler", "--config-file", str(conf))
    assert result.returncode == 2
    assert "unknown filters NoSuchFilter" in result.stderr
    assert "ResourceFilter" in result.stderr      # lists the known ones


def test_unmigrated_database_stops_the_daemon(tmp_path):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n"
                    % (tmp_path / "g.sqlite"))
    result = _run("gantt-scheduler", "--config-file", str(conf))
    assert result.returncode == 2
    assert "gantt-manage db sync" in result.stderr
