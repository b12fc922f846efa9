"""Find an example case for each known deviation (``deviations.DEVIATIONS``).

Each entry names a case that shows it (``example=(seed, request)``). A
change of the generator moves the cases; then ``test_deviation_example``
fails for entries whose example agrees now, and this prints fresh ones::

    .venv-nova-diff/bin/python -m gantt.tests.nova_diff.examples [FIRST LAST]
"""

import sys

from gantt.tests.nova_diff import compare
from gantt.tests.nova_diff import deviations


def find(seeds):
    """``{deviation index: (seed, request index)}``, the first of each."""
    found = {}
    for seed in seeds:
        for outcome in compare.run_world(seed):
            for k in outcome.covered:
                found.setdefault(k, (seed, outcome.index))
        if len(found) == len(deviations.DEVIATIONS):
            break
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    first, last = (int(a) for a in argv) if argv else (0, 2000)
    found = find(range(first, last))
    for k, dev in enumerate(deviations.DEVIATIONS):
        print("%2d %-8s %-34s example=%s" % (
            k, dev.kind, dev.name, found.get(k, "none found")))
    return 0 if len(found) == len(deviations.DEVIATIONS) else 1


if __name__ == "__main__":
    sys.exit(main())
