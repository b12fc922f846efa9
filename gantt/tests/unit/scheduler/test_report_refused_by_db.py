"""A report the database refuses is never cached either.

MariaDB closes the connection over a statement larger than its
``max_allowed_packet``; oslo.db reports that as ``DBConnectionError``,
exactly as it reports an unreachable database. Only the latter keeps the
report in the cache (hosts stay up while the database is away).
"""

from oslo_db import exception as db_exc
import pytest

from gantt import exception
from gantt.db import reports as db_reports
from gantt.tests import factories


@pytest.fixture
def dropped(monkeypatch):
    def save_report(db, node, received_at, force=False):
        raise db_exc.DBConnectionError("(2006, 'MySQL server has gone away')")
    monkeypatch.setattr(db_reports, "save_report", save_report)


def test_a_report_the_database_drops_while_it_answers_is_refused(
        scheduler, dropped):
    with pytest.raises(exception.InvalidRequest) as info:
        scheduler.stats.update_resource_stats(factories.compute_node_obj("h1"))
    assert "the database refused the report of h1" in str(info.value)
    assert scheduler.operator.get_host_states() == []


def test_a_report_is_cached_while_the_database_is_unreachable(
        scheduler, dropped, monkeypatch):
    monkeypatch.setattr(scheduler.stats.db, "answers", lambda: False)
    assert scheduler.stats.update_resource_stats(
        factories.compute_node_obj("h1"))
    assert [s.host for s in scheduler.operator.get_host_states()] == ["h1"]


def test_the_database_answers_when_it_is_there(sqlite_db):
    assert sqlite_db.answers()
