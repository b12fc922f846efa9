"""Every benchmark, Gantt next to the reference, in one run: the ratio table.

Each benchmark script runs its sides as subprocesses (the reference side in
the reference venv ``benchmarks/.venv-ref``, created on first use; the Gantt
side and the no-op messaging server in this interpreter's venv), each side
writing its results as JSON. This script shows progress while they run,
then prints one table with Gantt's figure, the reference's, their ratio and
the issue's target for each row, and every benchmark's own detail table.
Results go to ``benchmarks/results/<UTC date>/`` (``results.json`` and
``table.txt``).

    tox -e bench                          # the whole suite (< 15 min)
    python benchmarks/run_all.py --quick  # small sizes, a few minutes
    python benchmarks/run_all.py --only decision,candidates --profile

Needs RabbitMQ, MariaDB and PostgreSQL on 127.0.0.1 (see README.rst).
"""

import argparse
import datetime
import json
import os
import sys
import time

import batch
import c1m
import candidates
import decision
import harness
import ingest
import refenv
import rpc_e2e
import scale

#: benchmark name -> (script, module, {side job key: side})
BENCHMARKS = (
    ("decision", decision), ("candidates", candidates),
    ("rpc_e2e", rpc_e2e), ("batch", batch), ("ingest", ingest),
    ("scale", scale), ("c1m", c1m))

#: per benchmark: arguments of the full run and of --quick
FULL = {
    "decision": ["--sizes", "1000,10000,100000"],
    "candidates": ["--sizes", "1000,10000", "--dbs",
                   "mysql,postgresql,sqlite", "--get-seconds", "3"],
    "rpc_e2e": ["--seconds", "8"],
    "batch": ["--seconds", "10"],
    "ingest": [],
    "scale": ["--hosts", "100000"],
    "c1m": ["--seconds", "20"],
}
QUICK = {
    "decision": ["--sizes", "1000,10000", "--nova-seconds", "2"],
    "candidates": ["--sizes", "1000", "--dbs", "mysql", "--get-seconds",
                   "1", "--claim-seconds", "1"],
    "rpc_e2e": ["--seconds", "3"],
    "batch": ["--seconds", "3", "--batch", "20"],
    "ingest": ["--hosts", "1000", "--absorb-casts", "1000", "--seconds",
               "4", "--burst-seconds", "1"],
    "scale": ["--hosts", "10000"],
    "c1m": ["--seconds", "5", "--hosts", "1000"],
}
PROFILED = {"decision", "rpc_e2e", "batch", "ingest", "scale"}


class Progress:
    """One status line per job; on a terminal, the latest step redrawn."""

    def __init__(self, total):
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.current = ""

    def begin(self, name):
        self.current = name
        self._line("started")

    def step(self, text):
        # only the sides' progress lines ("[  1.2s] ..."), not library noise
        if not text.startswith("[") or "] " not in text:
            return
        text = text.split("] ", 1)[1]
        self._line(text[:90])

    def end(self, ok=True):
        self.done += 1
        self._line("done" if ok else "FAILED", final=True)

    def _line(self, text, final=False):
        elapsed = time.monotonic() - self.started
        bar = "#" * int(20 * self.done / self.total)
        line = "[%-20s] %2d/%d %5.0fs  %-22s %s" % (
            bar, self.done, self.total, elapsed, self.current, text)
        if self.tty:
            sys.stderr.write("\r\033[K" + line + ("\n" if final else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _jobs(name, module, argv):
    """``[(key, side, argv)]`` of one benchmark, as its own main would."""
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    if hasattr(module, "jobs"):
        return module.jobs(args)
    sides = {"decision": ("gantt", "reference"),
             "rpc_e2e": ("gantt", "noop"), "ingest": ("gantt", "noop")}
    return [(side, side, []) for side in sides.get(name, ("gantt",))]


def run(selected, quick, profile, progress):
    results, failures = {}, {}
    plan = []
    for name, module in BENCHMARKS:
        if name not in selected:
            continue
        argv = list((QUICK if quick else FULL)[name])
        if profile and name in PROFILED:
            argv.append("--profile")
        for key, side, extra in _jobs(name, module, argv):
            plan.append((name, key, side, argv + list(extra)))
    progress.total = len(plan)
    for name, key, side, argv in plan:
        progress.begin("%s %s" % (name, key))
        try:
            res = harness.run_side(name + ".py", side, argv,
                                   on_line=progress.step, timeout=900)
            results.setdefault(name, {})[key] = res
            progress.end()
        except Exception as exc:  # one failure must not lose the others
            failures["%s %s" % (name, key)] = str(exc)[-2000:]
            progress.end(ok=False)
    return results, failures


def _batch_reference(results):
    """Nova + Placement for 100 instances at the batch's size, composed
    from the parts measured in this run (instances/s), or None."""
    try:
        b = results["batch"]["gantt"]
        hosts, per = b["hosts"], b["batch"]
        nova = {r["n"]: r for r in
                results["decision"]["reference"]["rows"]}[hosts]
        place = {r["n"]: r for r in results["candidates"][
            "reference:" + b["db"]]["rows"]}[hosts]
    except KeyError:
        return None
    ms = place["get"]["p50"] + per * (nova["sorted"]["p50"]
                                      + place["put"]["p50"])
    return per / (ms / 1e3)


def _nova_rss(results, hosts):
    try:
        rows = results["decision"]["reference"]["rows"]
        return {r["n"]: r for r in rows}[hosts]["rss_mib"]
    except KeyError:
        return None


def ratio_rows(results):
    rows = []
    for name, module in BENCHMARKS:
        res = results.get(name)
        if not res:
            continue
        try:
            if name == "batch":
                got = module.table(res, _batch_reference(results))
            elif name == "scale":
                got = module.table(res, _nova_rss(
                    results, res["gantt"]["hosts"]))
            else:
                got = module.table(res)
        except (KeyError, TypeError, ZeroDivisionError) as exc:
            got = [{"label": "%s: incomplete (%s)" % (name, exc)}]
        for row in got:
            row["bench"] = name
        rows.extend(got)
    return rows


def _ratio_text(row):
    if row.get("ratio_text"):
        return row["ratio_text"]
    ratio = row.get("ratio")
    if ratio is None:
        return "-"
    if ratio >= 10:
        return "%.0fx" % ratio
    return "%.2fx" % ratio


def format_table(rows):
    number = {name: k + 1 for k, (name, _m) in enumerate(BENCHMARKS)}
    lines = []
    head = "%-2s %-48s %-20s %-26s %-14s %-16s %s" % (
        "#", "measure", "Gantt", "reference", "ratio", "target", "met")
    lines.append(head)
    lines.append("-" * len(head))
    for row in rows:
        met = row.get("met")
        lines.append("%-2s %-48s %-20s %-26s %-14s %-16s %s" % (
            number.get(row.get("bench"), ""), row.get("label", "")[:48],
            row.get("gantt", "-"), row.get("reference", "-")[:26],
            _ratio_text(row), row.get("target") or "",
            {True: "yes", False: "NO", None: ""}[met]
            + ("" if row.get("same_input", True) else " (inputs differ!)")))
        if row.get("note"):
            lines.append("%-2s %-48s %s" % ("", "", row["note"]))
    return "\n".join(lines)


def format_rst(rows):
    """The ratio table as an RST table (for doc/source/performance.rst)."""
    number = {name: k + 1 for k, (name, _m) in enumerate(BENCHMARKS)}
    cells = [("#", "measure", "Gantt", "reference", "ratio", "target",
              "met")]
    for row in rows:
        met = {True: "yes", False: "**no**", None: ""}[row.get("met")]
        label = row.get("label", "")
        if row.get("note"):
            label += " (%s)" % row["note"]
        cells.append((str(number.get(row.get("bench"), "")), label,
                      row.get("gantt", "-"), row.get("reference", "-"),
                      _ratio_text(row), row.get("target") or "", met))
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(c.ljust(w) for c, w in zip(
        cells[0], widths, strict=True)).rstrip(), rule]
    for c in cells[1:]:
        lines.append("  ".join(x.ljust(w) for x, w in zip(
            c, widths, strict=True)).rstrip())
    lines.append(rule)
    return "\n".join(lines)


def _find_profiles(node, path=""):
    """``(where, profile summary)`` for every py-spy summary in results."""
    if isinstance(node, dict):
        if "inclusive" in node and "samples" in node:
            yield path, node
            return
        for key, value in node.items():
            yield from _find_profiles(value, "%s/%s" % (path, key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            label = value.get("n", k) if isinstance(value, dict) else k
            yield from _find_profiles(value, "%s[%s]" % (path, label))


def format_profiles(results, top=12):
    lines = []
    for where, prof in _find_profiles(results):
        lines.append("\n%s (%d samples)" % (where.strip("/"),
                                             prof["samples"]))
        mine = [(n, p) for n, p in prof["inclusive"] if "gantt/" in n]
        lines.append("  inclusive: " + "; ".join(
            "%s %.0f%%" % (n, p) for n, p in mine[:top]))
        lines.append("  self     : " + "; ".join(
            "%s %.0f%%" % (n, p) for n, p in prof["self"][:top]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(n for n, _m in
                                                   BENCHMARKS),
                        help="comma-separated benchmarks to run")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and short loops (development)")
    parser.add_argument("--profile", action="store_true",
                        help="sample Gantt with py-spy (decision, rpc_e2e, "
                             "batch, ingest, scale) and print where the "
                             "time goes")
    parser.add_argument("--out", default=None,
                        help="results directory (default: "
                             "benchmarks/results/<UTC date>)")
    args = parser.parse_args()
    selected = [s for s in args.only.split(",") if s]
    started = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    progress = Progress(total=1)
    harness.require_services("rabbit", "mysql", "postgresql")
    if {"decision", "candidates"} & set(selected):
        progress.current = "reference venv"
        refenv.ensure(progress=progress.step)
    results, failures = run(selected, args.quick, args.profile, progress)
    elapsed = time.monotonic() - started
    rows = ratio_rows(results)
    text = format_table(rows)
    info = harness.machine()
    header = ("Gantt benchmarks, %s UTC, %s (%d cores, %s GiB), %s, "
              "Python %s; whole run %.0f s%s" % (
                  now.strftime("%Y-%m-%d %H:%M"), info["cpu"],
                  info["cores"], info["mem_gib"], info["os"],
                  info["python"], elapsed, " (--quick)" if args.quick
                  else ""))
    print("\n" + header + "\n")
    print(text)
    for name, module in BENCHMARKS:
        if name in results:
            try:
                module.show(results[name])
            except (KeyError, TypeError) as exc:
                print("\n%s: incomplete results (%s)" % (name, exc))
    if args.profile:
        print("\nWhere the time goes (py-spy, % of samples)")
        print(format_profiles(results))
    for key, error in failures.items():
        print("\nFAILED %s:\n%s" % (key, error))
    out = args.out or os.path.join(harness.BENCH_DIR, "results",
                                   now.strftime("%Y-%m-%d"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"date": now.isoformat(), "machine": info,
                   "elapsed_s": elapsed, "quick": args.quick,
                   "results": results, "rows": rows, "failures": failures},
                  f, indent=1, default=str)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(header + "\n\n" + text + "\n")
    with open(os.path.join(out, "table.rst"), "w") as f:
        f.write(format_rst(rows) + "\n")
    print("\nresults: %s" % out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
