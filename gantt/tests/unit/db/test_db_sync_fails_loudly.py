"""``gantt-manage db sync`` ends at this code's head revision or fails.

A wheel once shipped without its revision scripts; ``db sync`` then said
``empty -> None``, created nothing and exited 0, and the scheduler started
on an empty database. Whatever keeps the upgrade from the head (no
scripts, a damaged environment, a database stamped by some other Gantt)
must now stop a deployment script: a non-zero exit, one line on stderr,
and the database left as it was.
"""

import shutil

from oslo_upgradecheck import upgradecheck
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.cmd import common
from gantt.cmd import manage
from gantt.cmd import scheduler
from gantt.cmd import status
from gantt.db import api as db_api
from gantt.db import migration


@pytest.fixture
def db_url(tmp_path):
    return "sqlite:///" + str(tmp_path / "gantt.sqlite")


@pytest.fixture
def conf_file(tmp_path, db_url):
    path = tmp_path / "gantt.conf"
    path.write_text("[database]\nconnection = %s\n" % db_url)
    return str(path)


@pytest.fixture
def scripts(tmp_path, monkeypatch):
    """A copy of the migrations this code runs, to damage."""
    copy = tmp_path / "migrations"
    shutil.copytree(migration._HERE, copy)
    monkeypatch.setattr(migration, "_HERE", str(copy))
    return copy


@pytest.fixture
def no_scripts(scripts):
    """An installation that lost its revision scripts (the broken wheel)."""
    for script in (scripts / "versions").glob("0*.py"):
        script.unlink()
    return scripts


def _sync(conf_file, capsys):
    code = manage.main(["--config-file", conf_file, "db", "sync"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _tables(db_url):
    engine = sa.create_engine(db_url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def _stamp(db_url, revision):
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '%s'"
                             % revision)
    engine.dispose()


def test_a_sync_reaches_the_head_and_says_so(conf_file, db_url, capsys):
    code, out, err = _sync(conf_file, capsys)
    assert code == 0, err
    assert out.strip() == "Database schema: empty -> %s" % (
        migration.head_version())
    assert "resource_providers" in _tables(db_url)


def test_no_revision_scripts_fail_the_sync(no_scripts, conf_file, db_url,
                                           capsys):
    code, out, err = _sync(conf_file, capsys)
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert "no schema revision scripts in %s" % (
        no_scripts / "versions") in err
    assert "incomplete" in err
    assert "resource_providers" not in _tables(db_url)


def test_an_upgrade_that_ends_short_of_the_head_fails_the_sync(
        scripts, conf_file, db_url, capsys):
    """A damaged alembic environment that runs no migration at all."""
    (scripts / "env.py").write_text('"""runs nothing"""\n')
    code, out, err = _sync(conf_file, capsys)
    assert code == 1
    assert err.strip() == (
        "gantt-manage db sync: the database schema is at None after the "
        "upgrade, not at this code's %s" % migration.head_version())
    assert "resource_providers" not in _tables(db_url)


def test_a_database_at_an_unknown_revision_fails_the_sync(
        conf_file, db_url, capsys):
    """E.g. a database a newer Gantt migrated, then this one ran."""
    assert _sync(conf_file, capsys)[0] == 0
    _stamp(db_url, "9999_from_the_future")
    code, out, err = _sync(conf_file, capsys)
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("gantt-manage db sync: cannot upgrade the "
                          "database schema from 9999_from_the_future: ")
    db = db_api.Database(db_url)
    try:
        assert migration.current_version(db) == "9999_from_the_future"
    finally:
        db.dispose()


def test_the_scheduler_refuses_an_installation_without_scripts(
        no_scripts, conf_file):
    """The daemon's start-up check compares the database with the head;
    with no scripts both were None, and it started on nothing. (Its
    ConfigurationError is printed as one line, exit code 2.)"""
    conf = common.parse_args(["--config-file", conf_file], log=False)
    with pytest.raises(exception.ConfigurationError,
                       match="no schema revision scripts"):
        scheduler._preflight(conf)


def test_the_upgrade_check_names_an_installation_without_scripts(
        no_scripts, conf_file):
    checks = status.Checks()
    checks.conf = common.parse_args(["--config-file", conf_file], log=False)
    result = checks._check_schema()
    assert result.code == upgradecheck.Code.FAILURE
    assert result.details.startswith("no schema revision scripts in ")
