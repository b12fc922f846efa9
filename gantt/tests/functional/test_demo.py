"""The README's first command: gantt-demo against the real daemon.

``./tools/demo.sh`` is ``gantt-demo`` in the project's venv. It once
failed on a slow machine while every other test passed (its first call
was dropped before the workers had bound their queues), so it runs here
as a user would run it, only with a smaller fleet: its own
``gantt-scheduler`` process, RabbitMQ, the embedded SQLite database, and
the end-of-run consistency check read back from that database.

Each flow (``--flow compute|containers|volumes``) runs as its own
process, and the default (``all``) once, each checked by its summary.

On a machine without a broker the demo plays in one process on
oslo.messaging's fake transport (the default URL pointed at a closed
port through ``GANTT_DEMO_DEFAULT_TRANSPORT_URL``); every broker error
(refused, bad credentials, a missing virtual host) is one line and a
quick non-zero exit.
"""

import os
import re
import subprocess
import sys
import time

import pytest

from gantt.cmd import demo_bus
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
#: a fleet small enough for a quick run of every flow
SMALL = ("--hosts", "20", "--instances", "30", "--containers", "20",
         "--volumes", "30")
#: what a broker error may take beyond the demo's own start-up on this
#: machine now (which load makes long): the probe's few seconds, far from
#: the 60 s of a wait
QUICK = 20


def _demo(tmp_path, *args, default_url=None):
    env = dict(os.environ)
    env.pop(demo_bus.DEFAULT_URL_ENV, None)
    if default_url:
        env[demo_bus.DEFAULT_URL_ENV] = default_url
    return subprocess.run(
        [os.path.join(BIN, "gantt-demo"), "--workdir", str(tmp_path)]
        + list(args), capture_output=True, text=True, timeout=waiting.CALL,
        env=env)


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


def _ok(out, tmp_path, stopped="gantt-scheduler stopped on SIGTERM"):
    log = (tmp_path / "gantt-scheduler.log").read_text()
    assert out.returncode == 0, out.stdout + out.stderr + log
    assert stopped in out.stdout
    assert "Traceback" not in out.stdout + out.stderr + log
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
    out = _ok(_demo(tmp_path, *SMALL), tmp_path)
    for title in ("Gantt demo summary", "Containers summary",
                  "Volumes summary"):
        assert out.count("=== " + title) == 1
    assert "flows          compute OK, containers OK, volumes OK" in out
    # RabbitMQ answered: no word of the fake transport
    assert "fake transport" not in out


def test_with_no_broker_every_flow_plays_in_process(tmp_path, closed_port):
    # nothing named and nothing at the default URL: the scheduler's
    # worker runs in the demo's process, on the fake transport
    out = _demo(tmp_path, *SMALL, default_url=(
        "rabbit://guest:guest@127.0.0.1:%d/" % closed_port))
    text = _ok(out, tmp_path,
               stopped="in-process scheduler worker stopped")
    said = ("gantt-demo: no RabbitMQ answered at 127.0.0.1:%d; running on "
            "oslo.messaging's in-process fake transport" % closed_port)
    assert text.splitlines()[0] == said
    # said once, and only there
    assert (out.stdout + out.stderr).count("fake transport") == 1
    assert "started the scheduler worker in this process" in text
    assert "gantt-scheduler (pid" not in text
    assert "flows          compute OK, containers OK, volumes OK" in text
    # the vacancies reached the container service on the same bus
    assert "0 conflicts" in text.split("=== Containers summary", 1)[1]


def _start_up_seconds():
    """How long ``gantt-demo --version`` takes here now: the start-up
    that "within seconds" is measured beyond."""
    started = time.monotonic()
    subprocess.run([os.path.join(BIN, "gantt-demo"), "--version"],
                   capture_output=True, check=True, timeout=waiting.CALL)
    return time.monotonic() - started


def _refused(tmp_path, *args, default_url=None):
    """The demo's answer to a broker it cannot use: one line on stderr,
    exit code 1, within seconds, nothing started."""
    started = time.monotonic()
    out = _demo(tmp_path, *args, default_url=default_url)
    took = time.monotonic() - started
    assert out.returncode == 1, out.stdout + out.stderr
    assert took < _start_up_seconds() + QUICK, "took %.1f s:\n%s" % (
        took, out.stderr)
    assert out.stdout == "", out.stdout
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert not (tmp_path / "gantt-scheduler.log").exists()
    return lines[0]


def test_a_refused_named_broker_is_an_error_not_a_fallback(tmp_path,
                                                           closed_port):
    # a port nothing listens on, named: say what to do, do not hang, and
    # do not play on the fake transport instead of the broker asked for
    line = _refused(tmp_path, "--transport-url",
                    "rabbit://guest:secret@127.0.0.1:%d/" % closed_port)
    assert ("RabbitMQ is not reachable at 127.0.0.1:%d "
            "(rabbit://guest:***@127.0.0.1:%d/): connection refused"
            % (closed_port, closed_port)) in line
    assert "rabbitmq-server -detached" in line
    assert "secret" not in line


@pytest.mark.parametrize("named", [True, False], ids=["named", "default"])
def test_bad_credentials_are_one_line(rabbit, tmp_path, named):
    # the broker answers and refuses the login: an error even for the
    # default URL (RabbitMQ is there; the fake transport would hide it)
    url = "rabbit://guest:wrong-password@127.0.0.1:5672/"
    line = (_refused(tmp_path, "--transport-url", url) if named
            else _refused(tmp_path, default_url=url))
    assert "rabbit://guest:***@127.0.0.1:5672/" in line
    assert "refused the login (ACCESS_REFUSED)" in line
    assert "wrong user name or password" in line
    assert "wrong-password" not in line


def test_a_missing_vhost_is_one_line(rabbit, tmp_path):
    line = _refused(tmp_path, "--transport-url",
                    "rabbit://guest:guest@127.0.0.1:5672/nosuchvhost")
    assert ("RabbitMQ at rabbit://guest:***@127.0.0.1:5672/nosuchvhost has "
            "no virtual host 'nosuchvhost' (NOT_ALLOWED)") in line
    assert "rabbitmqctl add_vhost nosuchvhost" in line
