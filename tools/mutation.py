"""Mutation-test the scheduler's filters, weighers, candidates step and claim.

Runs mutmut (configured in the ``[mutmut]`` section of setup.cfg) once per
module or package named on the command line, then prints killed/total per
module from mutmut's result files under ``mutants/``. A survivor that
doc/source/contributor/mutation.rst names is an equivalent mutant (the page
says why); any other survivor is listed so that it gets a test or a line
there. See that page for how to read the figures.

Usage: python tools/mutation.py [--report-only] [MODULE ...]
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys

MODULES = (
    "gantt.db.allocations",
    "gantt.scheduler.pipeline.weighers",
    "gantt.scheduler.pipeline.filters",
    "gantt.scheduler.pipeline.prefilters",
    "gantt.scheduler.pipeline.candidates",
    "gantt.scheduler.pipeline.containers",
    "gantt.scheduler.pipeline.pools",
    "gantt.scheduler.pipeline.backend_functions",
    "gantt.scheduler.pipeline.backend_columns",
    "gantt.scheduler.pipeline.backend_sources",
    "gantt.scheduler.pipeline.expressions",
    "gantt.scheduler.pipeline.expressions_vec",
    "gantt.scheduler.claims",
)
ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "doc" / "source" / "contributor" / "mutation.rst"
# mutmut's exit codes (mutmut/stats.py), folded into the four columns
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests",
          33: "no tests", 36: "timeout", -24: "timeout", 24: "timeout",
          152: "timeout", 255: "timeout", None: "not checked"}


def main(argv=None):
    args = _parse(argv)
    if not args.report_only:
        for module in args.modules:
            _run(module, args.children)
    results = _results(args.modules)
    print(_table(results))
    unexplained = _unexplained(results)
    for name in unexplained:
        print("survived, not explained in %s: %s" % (DOC.name, name))
    return 1 if unexplained else 0


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", default=MODULES,
                        help="dotted module or package names (default: all "
                             "of %s)" % ", ".join(MODULES))
    parser.add_argument("--report-only", action="store_true",
                        help="print the figures of earlier runs")
    parser.add_argument("--children", type=int,
                        default=int(os.environ.get("GANTT_MUTATION_CHILDREN",
                                                   "2")),
                        help="mutants tested at once (default 2)")
    return parser.parse_args(argv)


def _run(module, children):
    mutmut = pathlib.Path(sys.executable).parent / "mutmut"
    print("==> mutmut run %s.*" % module, flush=True)
    subprocess.run([str(mutmut), "run", "--max-children", str(children),
                    module + ".*"], cwd=ROOT, check=False)


def _results(modules):
    """{module: {mutant name: status}} for the modules asked about."""
    out = collections.defaultdict(dict)
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        for name, code in codes.items():
            module = _module_of(name)
            if any(module == m or module.startswith(m + ".")
                   for m in modules):
                out[module][name] = STATUS.get(code, "suspicious")
    return out


def _module_of(mutant):
    """``gantt.x.y.xǁClassǁmethod__mutmut_3`` -> ``gantt.x.y``."""
    head = mutant.split("__mutmut_")[0]
    return head.rsplit(".", 1)[0]


def _table(results):
    rows = ["%-42s %7s %8s %7s %8s %6s %6s" % (
        "module", "killed", "survived", "timeout", "no tests", "total",
        "score")]
    totals = collections.Counter()
    for module in sorted(results):
        counts = collections.Counter(results[module].values())
        totals.update(counts)
        rows.append(_row(module, counts))
    rows.append(_row("all", totals))
    return "\n".join(rows)


def _row(label, counts):
    total = sum(counts.values())
    caught = counts["killed"] + counts["timeout"]
    return "%-42s %7d %8d %7d %8d %6d %5.1f%%" % (
        label, counts["killed"], counts["survived"], counts["timeout"],
        counts["no tests"], total, 100.0 * caught / total if total else 0)


def _unexplained(results):
    text = DOC.read_text() if DOC.exists() else ""
    return sorted(name for statuses in results.values()
                  for name, status in statuses.items()
                  if status in ("survived", "no tests", "suspicious")
                  and name not in text)


if __name__ == "__main__":
    sys.exit(main())
