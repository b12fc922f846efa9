"""The README's first command: gantt-demo against the real daemon.

``./tools/demo.sh`` is ``gantt-demo`` in the project's venv. It once
failed on a slow machine while every other test passed (its first call
was dropped before the workers had bound their queues), so it runs here
as a user would run it, only with a smaller fleet: its own
``gantt-scheduler`` process, RabbitMQ, the embedded SQLite database, and
the end-of-run consistency check read back from that database.

Each flow (``--flow compute|containers|volumes``) runs as its own
process, and the default (``all``) once, each checked by its summary.
"""

import os
import re
import subprocess
import sys

from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)


def _demo(tmp_path, *args):
    return subprocess.run(
        [os.path.join(BIN, "gantt-demo"), "--workdir", str(tmp_path)]
        + list(args), capture_output=True, text=True, timeout=waiting.CALL)


def _count(pattern, text):
    match = re.search(pattern, text)
    assert match, "%r not in the demo's output:\n%s" % (pattern, text)
    return int(match.group(1))


def test_demo_places_a_small_fleet_consistently(tmp_path):
    out = _demo(tmp_path, "--flow", "compute", "--hosts", "40",
                "--instances", "80", "--conductors", "4",
                "--failure-rate", "0.1")
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


def _ok(out, tmp_path):
    log = (tmp_path / "gantt-scheduler.log").read_text()
    assert out.returncode == 0, out.stdout + out.stderr + log
    assert "stopped on SIGTERM" in out.stdout
    return out.stdout


def test_containers_fill_instances_then_vacant_ones_are_retired(tmp_path):
    out = _ok(_demo(tmp_path, "--flow", "containers", "--containers", "40"),
              tmp_path)
    assert "Gantt demo summary" not in out and "Volumes summary" not in out
    summary = out.split("=== Containers summary", 1)[1]
    assert _count(r"containers\s+(\d+) placed", summary) == 40
    # sequential fill: the fewest instances the sizes allow, or one more
    used = _count(r"instances\s+(\d+) used", summary)
    fewest = _count(r"fewest possible (\d+)", summary)
    assert fewest <= used <= fewest + 1
    # and each container on the first instance, in name order, with room
    first_fit = re.search(r"first fit\s+(\d+) of (\d+) placements", summary)
    assert first_fit.group(1) == first_fit.group(2), summary
    # every instance after the first was asked for by a ProvidersFull
    # answer, and each creation is in the log of what happened
    created = out.count("every instance full: created magnum-")
    assert created == _count(r"answers\s+(\d+) 'every instance is full'",
                             summary)
    assert out.count("the first instance: created magnum-0001") == 1
    # the churn emptied instances (cluster-b left), which were retired;
    # the refill went into the holes first
    assert _count(r"churn\s+\d+ containers deleted -> (\d+)", summary) > 0
    refill = re.search(r"refill\s+(\d+) containers of cluster-e: (\d+) new",
                       summary)
    assert int(refill.group(2)) < int(refill.group(1))
    # every instance created was announced vacant once and retired at
    # that generation; nothing is left on container hosts
    assert _count(r"(\d+) provider.vacant announced", summary) == 1 + created
    assert _count(r"(\d+) retired at their generation", summary) == (
        1 + created)
    assert "0 conflicts" in summary
    assert "0 container hosts left, 0 resource classes" in summary
    assert "result         OK" in summary


def test_volumes_on_thin_pools_with_refusals_by_reason(tmp_path):
    out = _ok(_demo(tmp_path, "--flow", "volumes", "--volumes", "80"),
              tmp_path)
    summary = out.split("=== Volumes summary", 1)[1]
    asked = _count(r"(\d+) asked", summary)
    placed = _count(r"(\d+) placed", summary)
    refused = _count(r"(\d+) refused", summary)
    assert asked == 80 and placed + refused == asked and placed > 0
    ratios = dict(
        (m.group(1), (float(m.group(2)), float(m.group(3))))
        for m in re.finditer(r"(cinder-\S+)\s+\d+\s+\d+ GB\s+\d+ GB\s+"
                             r"\d+ GB\s+([\d.]+)x\s+([\d.]+)x", summary))
    assert len(ratios) == 4
    # the thin pool is over-subscribed, within its ratio; thick ones never
    ceph, ceph_max = ratios["cinder-2@ceph#rbd"]
    assert 1.0 < ceph <= ceph_max == 10.0
    assert all(r <= 1.0 for r, m in ratios.values() if m == 1.0)
    # no backend replicates: every replicated volume was refused by the
    # CapabilitiesFilter, and said so
    replicated = re.search(r"replicated\s+(\d+) of\s+(\d+)\s+(.*)", summary)
    assert replicated.group(1) == replicated.group(2)
    assert "CapabilitiesFilter" in replicated.group(3)
    assert "on 4 of 4 pools; 0 overcommitted" in summary
    assert "result         OK" in summary


def test_the_default_plays_every_flow_on_one_daemon(tmp_path):
    out = _ok(_demo(tmp_path, "--hosts", "20", "--instances", "30",
                    "--containers", "20", "--volumes", "30"), tmp_path)
    for title in ("Gantt demo summary", "Containers summary",
                  "Volumes summary"):
        assert out.count("=== " + title) == 1
    assert "flows          compute OK, containers OK, volumes OK" in out


def test_demo_says_how_to_start_a_missing_broker(tmp_path):
    # a port nothing listens on: the demo must say what to do, not hang
    out = _demo(tmp_path, "--transport-url",
                "rabbit://guest:guest@127.0.0.1:1/")
    assert out.returncode == 1
    assert "RabbitMQ is not reachable at 127.0.0.1:1" in out.stderr
    assert "rabbitmq-server -detached" in out.stderr
