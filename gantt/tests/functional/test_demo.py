"""The README's first command: gantt-demo against the real daemon.

``./tools/demo.sh`` is ``gantt-demo`` in the project's venv. It once
failed on a slow machine while every other test passed (its first call
was dropped before the workers had bound their queues), so it runs here
as a user would run it, only with a smaller fleet: its own
``gantt-scheduler`` process, RabbitMQ, the embedded SQLite database, and
the end-of-run consistency check read back from that database.
"""

import os
import re
import subprocess
import sys

BIN = os.path.dirname(sys.executable)


def _demo(tmp_path, *args):
    return subprocess.run(
        [os.path.join(BIN, "gantt-demo"), "--workdir", str(tmp_path)]
        + list(args), capture_output=True, text=True, timeout=300)


def _count(pattern, text):
    match = re.search(pattern, text)
    assert match, "%r not in the demo's output:\n%s" % (pattern, text)
    return int(match.group(1))


def test_demo_places_a_small_fleet_consistently(tmp_path):
    out = _demo(tmp_path, "--hosts", "40", "--instances", "80",
                "--conductors", "4", "--failure-rate", "0.1")
    log = (tmp_path / "gantt-scheduler.log").read_text()
    assert out.returncode == 0, out.stdout + out.stderr + log
    assert "result          OK" in out.stdout
    # every request either placed its instance or was explained (the
    # x1.huge flavor cannot fit anywhere); nothing was silently dropped
    placed = _count(r"placed\s+(\d+)", out.stdout)
    no_valid_host = _count(r"no valid host (\d+)", out.stdout)
    assert placed > 0
    assert placed + no_valid_host == 80
    # the database holds exactly the placed instances, nothing over
    consumers = _count(r"database check\s+(\d+) consumers", out.stdout)
    assert consumers == placed
    assert "0 overcommitted provider classes" in out.stdout
    # failed builds were re-claimed on the alternates Gantt returned
    assert _count(r"builds failed\s+(\d+)", out.stdout) > 0
    # and the daemon stopped cleanly on SIGTERM
    assert "stopped on SIGTERM" in out.stdout


def test_demo_says_how_to_start_a_missing_broker(tmp_path):
    # a port nothing listens on: the demo must say what to do, not hang
    out = _demo(tmp_path, "--transport-url",
                "rabbit://guest:guest@127.0.0.1:1/")
    assert out.returncode == 1
    assert "RabbitMQ is not reachable at 127.0.0.1:1" in out.stderr
    assert "rabbitmq-server -detached" in out.stderr
