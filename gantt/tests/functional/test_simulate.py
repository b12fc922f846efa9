"""gantt-simulate as an operator runs it: the console script in a
subprocess, its table, its plot, its one-line errors; and ``--from-live``
against a real daemon (RabbitMQ, MariaDB then PostgreSQL).
"""

import csv
import importlib.util
import os
import re
import subprocess
import sys

from gantt.tests import factories as f
from gantt.tests.functional import waiting

SIMULATE = os.path.join(os.path.dirname(sys.executable), "gantt-simulate")
FLEET = """\
shapes:
  - {name: general, count: 6, vcpus: 16, memory_mb: 65536, disk_gb: 1000}
  - {name: ram-rich, count: 2, vcpus: 16, memory_mb: 262144, disk_gb: 500}
"""


def _run(*args, timeout=waiting.CALL):
    return subprocess.run([SIMULATE, *args], capture_output=True,
                          text=True, timeout=timeout)


def _row(out, name):
    match = re.search(r"^%s\s+(.*)$" % re.escape(name), out, re.M)
    assert match, "%r not in the table:\n%s" % (name, out)
    return match.group(1).split()


def test_policies_side_by_side_with_churn_and_a_plot(tmp_path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    plot = tmp_path / "out.png"
    run = ("--fleet", str(fleet), "--arrivals", "300", "--mean-lifetime",
           "60", "--initial", "60", "--policy", "spread", "--policy",
           "first-fit", "--add-hosts", "1xram-rich")
    out = _run(*run, "--plot", str(plot))
    if importlib.util.find_spec("matplotlib"):
        assert out.returncode == 0, out.stdout + out.stderr
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "plot: %s" % plot in out.stdout
    else:
        # said before the run, with the way out
        assert out.returncode == 2
        assert out.stderr == ("gantt-simulate: plots need matplotlib: pip "
                              "install 'gantt[simulate]'\n")
        out = _run(*run)
        assert out.returncode == 0, out.stdout + out.stderr
    assert _row(out.stdout, "")[:2] == ["spread", "first-fit"]
    placed = [int(x) for x in _row(out.stdout, "placed")]
    deleted = [int(x) for x in _row(out.stdout, "deleted")]
    assert all(p > 200 for p in placed) and all(d > 100 for d in deleted)
    # the what-if host is in the fleet: 3 ram-rich hosts
    assert _row(out.stdout, "ram-rich (3)")
    assert "Fleet: 9 hosts (6 general, 3 ram-rich)" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_trace_replays_and_a_bad_one_is_one_line(tmp_path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    trace = tmp_path / "trace.csv"
    trace.write_text("time,event,instance,flavor\n"
                     "0,create,a,r1.xlarge\n1,create,b,m1.small\n"
                     "2,delete,a,\n3,create,c,r1.xlarge\n")
    samples = tmp_path / "samples.csv"
    out = _run("--fleet", str(fleet), "--trace", str(trace), "--quiet",
               "--csv", str(samples))
    assert out.returncode == 0, out.stderr
    # no policy named: the one a fresh install schedules by
    assert " ".join(_row(out.stdout, "")) == "default (balanced+stack)"
    assert _row(out.stdout, "placed") == ["3"]
    assert _row(out.stdout, "deleted") == ["1"]
    assert out.stderr == ""
    rows = list(csv.DictReader(samples.open()))
    # one sample after each event
    assert [(r["time"], r["alive"]) for r in rows] == [
        ("0.000", "1"), ("1.000", "2"), ("2.000", "1"), ("3.000", "2")]
    capacity = 6 * (65536 - 4096) + 2 * (262144 - 4096)
    # at the end b (m1.small) and c (r1.xlarge) hold RAM
    assert float(rows[-1]["RAM_used"]) == round(
        (2048 + 65536) / capacity, 4)

    trace.write_text("time,event,instance,flavor\n0,create,a,m1.small\n"
                     "1,create,b,x9.huge\n")
    out = _run("--fleet", str(fleet), "--trace", str(trace))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        "gantt-simulate: %s:3: unknown flavor 'x9.huge' (known: c1.xlarge, "
        "d1.large, m1.large, m1.medium, m1.small, m1.xlarge, r1.xlarge)"
        % trace)

    # a plot it cannot draw is said before the run, not after
    out = _run("--fleet", str(fleet), "--plot", str(tmp_path / "p.pdf"))
    assert out.returncode == 2
    assert out.stderr.endswith("p.pdf: a plot is a .png or .svg file\n")
    assert "Fleet:" not in out.stderr

    fleet.write_text("shapes:\n  - {name: a, count: 1, vcpus: 4}\n")
    out = _run("--fleet", str(fleet))
    assert out.returncode == 2
    assert out.stderr == ("gantt-simulate: %s:2: shape: 'memory_mb' is "
                          "required\n" % fleet)


def test_help_walks_through_a_what_if():
    out = _run("--help")
    assert out.returncode == 0
    for step in ("--example-fleet > fleet.yaml", "--add-hosts 20xram-rich",
                 "--scale-flavor r1.xlarge=1.3", "--plot",
                 "--policy spread --policy balanced+stack"):
        assert step in out.stdout


def test_from_live_starts_from_what_the_hosts_hold(daemon_factory,
                                                   server_db, tmp_path):
    daemon = daemon_factory(server_db.url)
    for name in ("live-a", "live-b"):
        daemon.client.update_resource_stats(None, f.compute_node_obj(
            name, vcpus=16, memory_mb=65536, disk_gb=1000))
    daemon.wait_for_hosts(2)
    # live-a is nearly full of RAM already
    [sels] = daemon.client.select_destinations(
        None, f.request(f.flavor("big", vcpus=1, memory_mb=60000,
                                 root_gb=10), force_hosts=["live-a"]),
        f.uuids(1))
    assert sels[0].service_host == "live-a"
    trace = tmp_path / "trace.csv"
    trace.write_text("time,event,instance,flavor\n"
                     "0,create,a,r1.xlarge\n1,create,b,r1.xlarge\n")
    out = _run("--from-live", daemon.conf_file, "--trace", str(trace),
               "--policy", "first-fit", "--quiet")
    assert out.returncode == 0, out.stderr
    # a RAM-heavy flavor (64 GB) no longer fits on live-a: the first goes
    # to live-b, the second fits nowhere
    assert _row(out.stdout, "placed") == ["1"]
    assert _row(out.stdout, "refused") == ["1"]
    assert _row(out.stdout, "lacked MEMORY_MB") == ["1"]
    assert "16c-64G-1000G (2)" in out.stdout
    # the simulation claimed nothing in the daemon's database
    states = {s.host: s for s in daemon.client.get_host_states(None)}
    used = {h: {r.resource_class: r.used for r in s.resources}["MEMORY_MB"]
            for h, s in states.items()}
    assert used == {"live-a": 60000, "live-b": 0}


def test_an_operators_config_is_one_more_column(tmp_path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    conf = tmp_path / "mine.conf"
    # the stack policy, written by hand
    conf.write_text("[filter_scheduler]\nram_weight_multiplier = -1.0\n"
                    "cpu_weight_multiplier = -1.0\n"
                    "disk_weight_multiplier = -1.0\n")
    out = _run("--fleet", str(fleet), "--arrivals", "400", "--config",
               str(conf), "--policy", "stack", "--policy", "spread",
               "--mode", "memory", "--quiet")
    assert out.returncode == 0, out.stderr
    assert _row(out.stdout, "")[:3] == ["mine.conf", "stack", "spread"]
    first_refusal = _row(out.stdout, "placed before 1st refusal")
    assert first_refusal[0] == first_refusal[1] != first_refusal[2]
    fills = re.findall(r"^general \(6\)\s+(.*)$", out.stdout, re.M)[0]
    mine, stack, spread = re.split(r"\s{2,}", fills)
    assert mine == stack != spread

    conf.write_text("[filter_scheduler]\nram_weight_multiplier = lots\n")
    out = _run("--fleet", str(fleet), "--config", str(conf))
    assert out.returncode == 2
    assert out.stderr == (
        "gantt-simulate: --config %s: Configuration error: "
        "[filter_scheduler] ram_weight_multiplier: could not convert "
        "string to float: 'lots'\n" % conf)
