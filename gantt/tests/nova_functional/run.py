"""Run Nova's own functional test modules with Gantt in place of
nova-scheduler and placement-api, and print passed/total per file.

``python -m gantt.tests.nova_functional.run [MODULE...] [-k TEXT]
[--floor N] [--json FILE] [-v]`` (``tools/nova_functional.sh`` makes the
virtualenv and calls it). MODULE is a dotted name under
``nova.tests.functional`` (:data:`MODULES` when none is given). Nova's
tests run in its threading mode (no eventlet monkey patching: Gantt's
worker uses real threads), one at a time, with the substitutions of
:mod:`gantt.tests.nova_functional.substitutes`. A test Nova itself skips
counts in neither column. The exit status is 1 when fewer than
``--floor`` tests pass in all, else 0: the failures of single tests are
the measurement, not an error of the run.
"""

import argparse
import json
import os
import sys
import time
import unittest

#: the scheduler-related modules the report covers by default
MODULES = (
    "nova.tests.functional.test_server_group",
    "nova.tests.functional.test_availability_zones",
)


class Tally(unittest.TestResult):
    """Per module: passed, failed (with the last line of each reason)."""

    def __init__(self, verbose=False):
        super().__init__()
        self.verbose = verbose
        self.modules = {}
        self._started = 0.0

    def _module(self, test):
        name = type(test).__module__
        return self.modules.setdefault(
            name, {"passed": [], "failed": {}, "skipped": [],
                   "details": {}})

    def startTest(self, test):
        super().startTest(test)
        self._started = time.monotonic()

    def _say(self, test, word):
        if self.verbose:
            print("%-6s %5.1fs %s" % (word, time.monotonic() - self._started,
                                      test.id()), flush=True)

    def addSuccess(self, test):
        self._module(test)["passed"].append(test.id())
        self._say(test, "ok")

    def _failed(self, test, err):
        text = self._exc_info_to_string(err, test)
        self._module(test)["failed"][test.id()] = reason(text)
        self._module(test)["details"][test.id()] = text
        self._say(test, "FAIL")

    addFailure = addError = _failed

    def addSkip(self, test, why):
        self._module(test)["skipped"].append(test.id())
        self._say(test, "skip")

    def addExpectedFailure(self, test, err):
        self._failed(test, err)

    def addUnexpectedSuccess(self, test):
        self.addSuccess(test)


def reason(text):
    """The exception line of a traceback (the last ``Error``/``Exception``
    line, else the last non-empty line), at most 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception", "Mismatch", "Failure")) or \
                head.startswith(("nova.", "gantt.", "testtools.")):
            return line[:300]
    return lines[-1][:300] if lines else "?"


def select(suite, texts):
    """The tests of ``suite`` whose id contains one of ``texts`` (all
    when there is none)."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from select(item, texts)
        elif not texts or any(text in item.id() for text in texts):
            yield item


def table(modules):
    """``passed/total file`` lines and the sum."""
    rows, done, total = [], 0, 0
    for name, tally in sorted(modules.items()):
        n, m = len(tally["passed"]), len(tally["passed"]) + len(
            tally["failed"])
        rows.append("%4d/%-4d %s" % (n, m, name))
        done, total = done + n, total + m
    rows.append("%4d/%-4d in all" % (done, total))
    return "\n".join(rows), done


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    parser.add_argument("-k", dest="texts", action="append", default=[],
                        help="only ids containing TEXT (repeated: any)")
    parser.add_argument("--floor", type=int, default=0)
    parser.add_argument("--json", help="write the per-test results here")
    parser.add_argument("-v", action="store_true", dest="verbose")
    parser.add_argument(
        "--nova-only", action="store_true",
        help="no substitution: Nova's scheduler and Placement (baseline)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    os.environ.setdefault("OS_NOVA_DISABLE_EVENTLET_PATCHING", "true")
    os.environ.setdefault("OS_TEST_TIMEOUT", "120")
    # Nova's tests package refuses to run when eventlet is imported
    # before it (futurist, which Gantt imports, would import it)
    import nova.tests.functional  # noqa: F401

    from gantt.tests.nova_functional import substitutes
    substitutes.paste_config_in_prefix()
    substitutes.tolerate_noload_deprecation()
    if not args.nova_only:
        substitutes.install()
    loader = unittest.TestLoader()
    tally = Tally(args.verbose)
    started = time.monotonic()
    for module in args.modules:
        suite = loader.loadTestsFromName(module)
        unittest.TestSuite(select(suite, args.texts)).run(tally)
    text, done = table(tally.modules)
    print(text)
    print("%.0f s, CPU %.0f s" % (time.monotonic() - started,
                                  time.process_time()))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(tally.modules, out, indent=1, sort_keys=True)
    return 1 if done < args.floor else 0


if __name__ == "__main__":
    sys.exit(main())
