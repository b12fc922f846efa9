"""gantt-manage and gantt-scheduler start-up, on all three databases."""

import os
import subprocess
import sys

import pytest
import sqlalchemy as sa

from gantt import rpcapi
from gantt.db import api as db_api
from gantt.db import levels as db_levels
from gantt.db import migration
from gantt.db import reports
from gantt.tests import factories
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)


def _run(*args):
    return subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]),
                          capture_output=True, text=True, timeout=waiting.CALL)


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



def _status(tmp_path, extra=""):
    """``gantt-status upgrade check``: (exit code, its table as one line
    of words, as the table wraps its messages)."""
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n%s"
                    % (tmp_path / "g.sqlite", extra))
    out = _run("gantt-status", "--config-file", str(conf), "upgrade",
               "check")
    assert not out.stderr, out.stderr
    return out.returncode, " ".join(out.stdout.replace("|", " ").split())


def _sync(tmp_path):
    sync = _run("gantt-manage", "--config-file", str(tmp_path / "gantt.conf"),
                "db", "sync")
    assert sync.returncode == 0, sync.stderr


def test_upgrade_check_says_what_to_do(tmp_path):
    # oslo.upgradecheck's exit codes: 0 success, 1 warning, 2 failure
    code, text = _status(tmp_path)
    assert code == 2, text
    assert "Run 'gantt-manage db sync'" in text
    _sync(tmp_path)
    code, text = _status(tmp_path)
    assert code == 0, text
    for check in ("Database schema", "Scheduling profiles",
                  "Liveness settings", "RPC version cap"):
        assert "Check: %s Result: Success" % check in text


def test_upgrade_check_fails_for_a_wrong_profile(tmp_path):
    _status(tmp_path)
    _sync(tmp_path)
    code, text = _status(tmp_path, "[scheduler]\nprofiles = volume\n"
                                   "[profile:volume]\nprovider_kinds = "
                                   "volume\n")
    assert code == 2, text
    assert "Check: Scheduling profiles Result: Failure" in text
    assert "profile volume considers volume providers, but ComputeFilter" \
        in text


def test_upgrade_check_reminds_of_a_version_cap(tmp_path):
    _status(tmp_path)
    _sync(tmp_path)
    code, text = _status(tmp_path, "[upgrade_levels]\nscheduler = 1.2\n")
    assert code == 1, text
    assert "Check: RPC version cap Result: Warning" in text
    assert "[upgrade_levels] scheduler = 1.2" in text
    # (the table may wrap "gantt-scheduler" at its hyphen)
    assert "scheduler serves %s." % rpcapi.RPC_API_VERSION in text
    code, text = _status(tmp_path, "[upgrade_levels]\nscheduler = 2.0\n")
    assert code == 2, text
    assert ("this code speaks RPC API 1.0 to %s" % rpcapi.RPC_API_VERSION
            in text)
    code, text = _status(tmp_path, "[upgrade_levels]\nscheduler = one\n")
    assert code == 2, text
    assert "[upgrade_levels] scheduler:" in text


def test_upgrade_check_warns_of_changed_levels_and_hosts_outside(tmp_path):
    """Workers last started with row,rack; a host reports a shelf; this
    configuration drops rack: the check says both, as a warning."""
    _status(tmp_path)
    _sync(tmp_path)
    code, text = _status(tmp_path)
    assert code == 0 and "Check: Topology levels Result: Success" in text
    db = db_api.Database("sqlite:///%s" % (tmp_path / "g.sqlite"))
    db_levels.record(db, ("row", "rack"))
    for name, where in (("h1", "row=a/rack=r1"), ("h2", "row=a/shelf=s1"),
                        ("h3", "row=a")):
        reports.save_report(db, factories.compute_node_obj(name,
                                                           location=where))
    db.dispose()
    code, text = _status(tmp_path, "[topology]\nlevels = row,rack\n")
    assert code == 1, text
    assert "Check: Topology levels Result: Warning" in text
    assert "1 host(s) have a location naming a level not in" in text
    assert "h2 at row=a/shelf=s1" in text
    assert "last started" not in text
    code, text = _status(tmp_path, "[topology]\nlevels = row\n")
    assert code == 1, text
    assert ("the workers last started with [topology] levels = row,rack, "
            "this configuration says row") in text
    assert "2 host(s) have a location" in text


@pytest.mark.parametrize("cap,says", [
    ("2.0", "[upgrade_levels] scheduler = 2.0: this code speaks RPC API "
            "1.0 to %s" % rpcapi.RPC_API_VERSION),
    ("1.x", "[upgrade_levels] scheduler: "),
])
def test_a_cap_the_daemon_cannot_honour_stops_it(tmp_path, cap, says):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n"
                    "[upgrade_levels]\nscheduler = %s\n"
                    % (tmp_path / "g.sqlite", cap))
    _sync(tmp_path)
    result = _run("gantt-scheduler", "--config-file", str(conf))
    assert result.returncode == 2, result.stdout + result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_profile_with_an_unknown_weigher_stops_the_daemon(tmp_path):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n"
                    "[scheduler]\nprofiles = packed\n"
                    "[profile:packed]\nenabled_weighers = Tetris\n"
                    % (tmp_path / "g.sqlite"))
    _sync(tmp_path)
    result = _run("gantt-scheduler", "--config-file", str(conf))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "profile packed: unknown weighers Tetris; known: " \
        in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
