"""What a worker's resync adds to find lost ``trees_changed`` casts.

The periodic resync already reads every provider's usage and generation
(``usages_by_uuid``); to repair a lost cast it now also asks which
providers were written since its last run (``tree_load.changed_since``,
one query over ``resource_providers``). This prints both, per backend,
on a throw-away database holding ``--providers`` providers none of which
changed (the usual case), wall and process CPU time per call.

    python benchmarks/rest_trees_resync.py [--providers 10000]
"""

import argparse
import datetime
import time
import uuid

from gantt.db import host_load
from gantt.db import tree_load
from gantt.db.models import RP
from gantt.tests import fixtures as gantt_fixtures

REPEAT = 5


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(REPEAT):
        fn()
    return ((time.perf_counter() - wall) / REPEAT * 1e3,
            (time.process_time() - cpu) / REPEAT * 1e3)


def measure(backend, count):
    fx = gantt_fixtures.Database(backend)
    fx.setUp()
    try:
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        with fx.db.begin() as conn:
            conn.execute(RP.insert(), [
                {"uuid": str(uuid.uuid4()), "name": "p%d" % i,
                 "generation": 0, "created_at": now} for i in range(count)])
        since = now + datetime.timedelta(seconds=1)
        return [
            ("changed_since", _timed(
                lambda: tree_load.changed_since(fx.db, since))),
            ("usages_by_uuid", _timed(
                lambda: host_load.usages_by_uuid(fx.db)))]
    finally:
        fx.cleanUp()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=10000)
    args = parser.parse_args()
    print("%-11s %-15s %10s %10s" % ("backend", "read", "wall ms",
                                     "cpu ms"))
    for backend in ("mysql", "postgresql"):
        for name, (wall, cpu) in measure(backend, args.providers):
            print("%-11s %-15s %10.1f %10.1f" % (backend, name, wall, cpu))


if __name__ == "__main__":
    main()
