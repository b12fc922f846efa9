"""The documented wire contract, exercised by a caller that is not Gantt.

``doc/examples/external_client.py`` imports neither Gantt nor its objects:
it writes every primitive by hand from doc/source/wire/. Running it against
the real daemon (on MariaDB, then on PostgreSQL) checks that the
documentation and the code agree.
"""

import ast
import os
import re
import subprocess
import sys

import sqlalchemy as sa

from gantt.tests.functional import waiting

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "doc", "examples", "external_client.py")
PREFIX = "extclient"
HOSTS = {"%s-%d" % (PREFIX, i) for i in (1, 2, 3)}


def _count(db, table):
    with db.engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT COUNT(*) FROM %s" % table)).scalar()


def _imported_modules(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module


def test_external_client_imports_no_gantt():
    top = {name.split(".")[0] for name in _imported_modules(SCRIPT)}
    assert "gantt" not in top
    assert top <= {"argparse", "sys", "time", "uuid", "warnings",
                   "oslo_config", "oslo_messaging"}, top


def _run_example(daemon, rabbit):
    # run from / so that nothing of the checkout's root is on sys.path (the
    # import check above is what proves the script needs no gantt)
    return subprocess.run(
        [sys.executable, SCRIPT, "--transport-url", rabbit,
         "--topic", daemon.topic, "--host-prefix", PREFIX,
         "--timeout", "30"],
        capture_output=True, text=True, timeout=waiting.CALL, cwd="/")


def test_external_client_speaks_the_documented_wire(daemon, rabbit):
    result = _run_example(daemon, rabbit)
    transcript = result.stdout
    assert result.returncode == 0, (
        "exit %d\n--- stdout\n%s\n--- stderr\n%s\n--- daemon log\n%s" % (
            result.returncode, transcript, result.stderr, daemon.log()))

    # two instances placed, each on one of the hosts the script reported
    placed = re.findall(r"-> placed on (\S+),", transcript)
    assert len(placed) == 2, transcript
    assert set(placed) <= HOSTS, transcript
    # with three equal hosts, each claim comes with the two others as
    # alternates (max_attempts = 3, all in the same, null, cell)
    alternates = re.findall(r"alternates: (.*)", transcript)
    assert len(alternates) == 2, transcript
    for host, alts in zip(placed, alternates, strict=True):
        names = sorted(a.strip() for a in alts.split(","))
        assert names == sorted(HOSTS - {host}), transcript
    assert transcript.count("-> True") == 2, transcript
    assert "again -> False" in transcript, transcript
    assert "RemoteError exc_type=NoValidHost" in transcript, transcript
    assert "lacked MEMORY_MB" in transcript, transcript
    assert transcript.rstrip().endswith("OK"), transcript

    # the database holds the three reported hosts and nothing allocated
    db = daemon.database
    assert _count(db, "resource_providers") == 3
    assert _count(db, "host_reports") == 3
    assert _count(db, "inventories") == 9
    assert _count(db, "allocations") == 0
    assert _count(db, "consumers") == 0
    with db.engine.connect() as conn:
        stored = {r[0] for r in conn.execute(sa.text(
            "SELECT host FROM host_reports"))}
    assert stored == HOSTS

    # and the daemon counted what the script did
    stats = daemon.client.get_statistics(None)
    assert (stats.requests, stats.placements, stats.no_valid_host) == (2, 2, 1)
    assert stats.messages_rejected == 0
