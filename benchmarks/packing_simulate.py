"""gantt-simulate's speed: placements on a large fleet, with plots.

The target (issue 26): 100k placements on 10k hosts in under a minute,
plots included. Each row runs what ``gantt-simulate`` runs for one
policy (:func:`gantt.simulate.replay.replay`, then the tables and the
plot) on the example fleet's three shapes scaled to ``--hosts``, with a
generated workload of ``--placements`` arrivals that churns (mean
lifetime half the run), in each claim mode:

* ``sqlite``: Gantt's claim transactions on a SQLite file (/dev/shm);
* ``memory``: the same engine and decisions, claims kept in memory.

Columns: setting the fleet up (reports into the engine), the replay, the
plot, their sum, the CPU time the process had for all three (on a shared
machine the wall time is that divided by the share of a core it got),
and the replay's time per placement (the deletions included). The load
average (``/proc/loadavg``) before and after each row is printed with
it. ``--placements`` below the target gives the run time
measured, and the time 100k would take at that rate (projected, marked
so).

    nice .venv/bin/python benchmarks/packing_simulate.py
    .venv/bin/python benchmarks/packing_simulate.py --hosts 10000 \\
        --placements 10000 --modes memory,sqlite

Needs matplotlib (``pip install -e .[simulate]``).
"""

import argparse
import os
import tempfile
import time

from gantt.simulate import fleet as fleet_mod
from gantt.simulate import plots
from gantt.simulate import replay
from gantt.simulate import report
from gantt.simulate import workload

TARGET = 100000
EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, "gantt", "cmd",
                       "examples", "simulate-fleet.yaml")


def fleet_of(hosts):
    """The example fleet's shapes, in its proportions, ``hosts`` in all."""
    example = fleet_mod.load_fleet(EXAMPLE)
    counts = example.shapes()
    total = sum(counts.values())
    out = []
    for name, count in counts.items():
        shape = example.shape(name)
        out += [fleet_mod.Host("%s-%d" % (name, len(out) + i), shape)
                for i in range(round(hosts * count / total))]
    return fleet_mod.Fleet(tuple(out[:hosts]))


def measure(hosts, placements, mode):
    fleet = fleet_of(hosts)
    events = workload.generate(workload.Generator(
        mix=workload.DEFAULT_MIX, arrivals=placements,
        mean_lifetime=placements / 2.0))
    load = os.getloadavg()[0]
    cpu = time.process_time()
    started = time.perf_counter()
    result = replay.replay(fleet, events, "spread", mode=mode)
    replayed = time.perf_counter()
    setup = replayed - started - result.seconds
    for rows in (report.summary([result]), report.shape_fill(fleet,
                                                             [result])):
        report.render(rows)
    with tempfile.TemporaryDirectory() as tmp:
        plots.draw(os.path.join(tmp, "speed.png"), fleet, [result])
    plotted = time.perf_counter() - replayed
    return {"hosts": hosts, "placements": result.placed, "mode": mode,
            "setup": setup, "replay": result.seconds, "plot": plotted,
            "cpu": time.process_time() - cpu,
            "load": "%.1f-%.1f" % (load, os.getloadavg()[0]),
            "ms": 1000.0 * result.seconds / max(result.placed, 1)}


def row(m):
    total = m["setup"] + m["replay"] + m["plot"]
    projected = ""
    if m["placements"] < TARGET:
        projected = "%.0f s" % (m["setup"] + m["plot"]
                                + m["ms"] * TARGET / 1000.0)
    return ("%d" % m["hosts"], "%d" % m["placements"], m["mode"],
            "%.1f s" % m["setup"], "%.1f s" % m["replay"],
            "%.1f s" % m["plot"], "%.1f s" % total, "%.1f s" % m["cpu"],
            "%.2f" % m["ms"], projected, m["load"])


def table(measured):
    head = ("hosts", "placements", "mode", "setup", "replay", "plot",
            "total", "cpu", "ms/placement", "100k (projected)", "load")
    rows = [head] + [row(m) for m in measured]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, _line(head, widths), rule]
    lines += [_line(r, widths) for r in rows[1:]]
    return "\n".join(lines + [rule])


def _line(cells, widths):
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths,
                                                 strict=True)).rstrip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--placements", type=int, default=TARGET)
    parser.add_argument("--modes", default="memory,sqlite")
    args = parser.parse_args(argv)
    measured = []
    for mode in args.modes.split(","):
        measured.append(measure(args.hosts, args.placements, mode))
        print("  ".join(row(measured[-1])), flush=True)
    print("\n" + table(measured))


if __name__ == "__main__":
    main()
