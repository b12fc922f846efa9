"""Run Placement's gabbi files against Gantt's API and count, per file.

``python -m gantt.tests.placement_gabbits.run [FILE ...] [--floor N |
--check-floor] [--json PATH] [-v]``: the YAML files of the installed
openstack-placement (``placement/tests/functional/gabbits``, read where
pip put them, never copied or changed), all or those named
(``allocations`` or ``allocations.yaml``), against
``gantt.api.app.make_app`` in-process, with the fixtures of
:mod:`gantt.tests.placement_gabbits.fixtures`. Prints passed/total per
file and overall; with ``--floor``, exits 1 when fewer than N tests pass
(the conformance figure may rise, never fall; ``--check-floor`` is
``--floor`` :data:`FLOOR`); ``--json`` writes every test's outcome and,
for the others, the first line of why.

A test counts as passed when it succeeds. gabbi runs a file's tests in
order and skips the rest of a file after a failure ("prior test
failed"): those count as not passed, with that reason.
"""

import argparse
import collections
import dataclasses
import json
import logging
import os
import re
import sys
import time
import unittest

from gabbi import driver

from gantt.tests.placement_gabbits import fixtures

#: the number of tests that passed when the figure was last recorded
#: (doc/source/admin/placement-conformance.rst): ``--check-floor`` fails
#: below it, so the figure cannot fall back unnoticed; raise it with the
#: figure
FLOOR = 1306

#: the prefix of every test id (``gabbits.<file>_<test>.test_request``)
LOADER_NAME = "gabbits"


def gabbits_dir():
    """The YAML files' folder in the installed openstack-placement."""
    import placement.tests.functional as functional
    return os.path.join(os.path.dirname(functional.__file__), "gabbits")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One test's result."""

    file: str
    test: str
    passed: bool
    reason: str = ""


def split_id(test_id):
    """``gabbits.allocations_get-foo.test_request`` -> (file, test)."""
    name = test_id.split(".", 1)[1].rsplit(".", 1)[0]
    stem, _, test = name.partition("_")
    return stem, test


#: the line of a traceback that says what went wrong
_EXCEPTION_LINE = re.compile(r"^[\w.]*(Error|Exception|Failure)\b")


def first_line(text):
    """The exception line of a traceback (gabbi's failures go on with the
    response body), shortened."""
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip()]
    for line in lines:
        if _EXCEPTION_LINE.match(line):
            return line[:300]
    return lines[-1][:300] if lines else ""


class CountingResult(unittest.TestResult):
    """Collects an :class:`Outcome` per test."""

    def __init__(self):
        super().__init__()
        self.outcomes = []

    def _add(self, test, passed, reason=""):
        stem, name = split_id(test.id())
        self.outcomes.append(Outcome(stem, name, passed, reason))

    def addSuccess(self, test):
        self._add(test, True)

    def addFailure(self, test, err):
        self._add(test, False, "failed: " + first_line(
            self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        self._add(test, False, "error: " + first_line(
            self._exc_info_to_string(err, test)))

    def addSkip(self, test, reason):
        self._add(test, False, "skipped: " + reason)

    def addExpectedFailure(self, test, err):
        self._add(test, True)

    def addUnexpectedSuccess(self, test):
        self._add(test, False, "unexpected success")


def build(wanted):
    """The suite of each YAML file (named in ``wanted``, or all)."""
    top = driver.build_tests(
        gabbits_dir(), unittest.TestLoader(), test_loader_name=LOADER_NAME,
        intercept=fixtures.setup_app, fixture_module=fixtures)
    suites = []
    for file_suite in top:
        tests = list(file_suite)
        if tests and (not wanted or split_id(tests[0].id())[0] in wanted):
            suites.append(file_suite)
    return suites


def run(suites):
    result = CountingResult()
    for file_suite in suites:
        file_suite.run(result)
    return result.outcomes


def per_file(outcomes):
    """{file: (passed, total)}, files in name order."""
    counts = collections.defaultdict(lambda: [0, 0])
    for o in outcomes:
        counts[o.file][0] += o.passed
        counts[o.file][1] += 1
    return {f: tuple(counts[f]) for f in sorted(counts)}


def table(outcomes):
    """The per-file table and the overall line, as text."""
    counts = per_file(outcomes)
    width = max([len(f) for f in counts] + [5])
    lines = ["%-*s %6s %6s" % (width, "file", "passed", "total")]
    for name, (passed, total) in counts.items():
        lines.append("%-*s %6d %6d" % (width, name, passed, total))
    passed = sum(o.passed for o in outcomes)
    total = len(outcomes)
    lines.append("%-*s %6d %6d  (%.1f%%)" % (
        width, "TOTAL", passed, total, 100.0 * passed / max(total, 1)))
    return "\n".join(lines)


def write_json(path, outcomes, seconds):
    with open(path, "w") as f:
        json.dump({"seconds": round(seconds, 1),
                   "per_file": per_file(outcomes),
                   "outcomes": [dataclasses.asdict(o) for o in outcomes]},
                  f, indent=1)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*",
                        help="YAML files to run (default: all)")
    parser.add_argument("--floor", type=int, default=None,
                        help="fail unless at least this many tests pass")
    parser.add_argument("--check-floor", action="store_const",
                        dest="floor", const=FLOOR,
                        help="--floor %d: the recorded figure" % FLOOR)
    parser.add_argument("--json", help="write every outcome here")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print why each test that did not pass")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL)
    wanted = {f.removesuffix(".yaml") for f in args.files}
    start = time.monotonic()
    outcomes = run(build(wanted))
    seconds = time.monotonic() - start
    if args.verbose:
        for o in outcomes:
            if not o.passed:
                print("%s: %s: %s" % (o.file, o.test, o.reason))
    print(table(outcomes))
    print("%.0f s" % seconds)
    if args.json:
        write_json(args.json, outcomes, seconds)
    passed = sum(o.passed for o in outcomes)
    if args.floor is not None and passed < args.floor:
        print("FAIL: %d tests passed, the floor is %d" % (passed, args.floor))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
