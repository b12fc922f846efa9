"""Volume scheduling: Gantt's volume plugins next to Cinder 29's, per request.

Runs in the Cinder differential test's virtualenv, which holds both
(``tools/cinder_diff.sh`` makes it)::

    .venv-cinder-diff/bin/python benchmarks/volumes.py [--sizes 100,1000]

For each number of backends (seeded as ``gantt/tests/cinder_diff/
worlds.py`` draws them: thin and thick pools, about a third with a
``filter_function`` and a third with a ``goodness_function``) it times one
volume request through the three filters and the four weighers: Cinder's
classes over its ``PoolState`` records (``backend_passes`` per backend,
``weigh_objects`` and ``normalize`` as its handlers run them) and Gantt's
``FilterRunner`` + ``WeigherRunner`` over a host view. Prints the median
of a few requests per side, and the ratio.
"""

import argparse
import logging
import random
import statistics
import time
import warnings

warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

from gantt.scheduler.pipeline import filters as filters_mod  # noqa: E402
from gantt.scheduler.pipeline import plugins  # noqa: E402
from gantt.scheduler.pipeline.weighers import runner  # noqa: E402
from gantt.tests.cinder_diff import cinder_side  # noqa: E402
from gantt.tests.cinder_diff import gantt_side  # noqa: E402
from gantt.tests.cinder_diff import worlds  # noqa: E402

REQUESTS = 5


def world(count, seed=7):
    rng = random.Random(seed)
    return worlds.World(
        seed=seed, backends=tuple(worlds.backend(rng, i)
                                  for i in range(count)),
        volumes=tuple(worlds.Volume(size=rng.choice((10, 50, 100)),
                                    specs=(("QoS_support", "<is> True"),))
                      for _ in range(REQUESTS)),
        multipliers=(("capacity_weight_multiplier", 1.0),
                     ("allocated_capacity_weight_multiplier", -1.0),
                     ("volume_number_multiplier", -1.0)))


def cinder_request(states, vol):
    props = cinder_side.properties(vol)
    flts = [cls() for cls in cinder_side.FILTERS.values()]
    passed = [s for s in states
              if all(f.backend_passes(s, props) for f in flts)]
    for name in cinder_side.WEIGHERS:
        cinder_side.weights(name, passed, vol)


def gantt_request(hosts, flts, weighers, vol):
    request = gantt_side.request(vol)
    mask = np.ones(hosts.n, dtype=bool)
    outcome = filters_mod.FilterRunner(flts).run(hosts, request, mask)
    weighers.weigh(hosts, request, outcome.mask)


def median_ms(volumes, run, *args):
    times = []
    for vol in volumes:
        start = time.perf_counter()
        run(*args, vol)
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def main():
    logging.disable(logging.WARNING)     # Cinder logs every backend
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--cinder-max", type=int, default=1000,
                        help="skip Cinder above this many backends")
    args = parser.parse_args()
    print("%8s  %12s  %12s  %8s" % ("backends", "cinder ms", "gantt ms",
                                    "ratio"))
    for count in map(int, args.sizes.split(",")):
        w = world(count)
        cfg = gantt_side.conf(w)
        hosts = gantt_side.view(w)
        flts = plugins.load(plugins.FILTERS, list(gantt_side.FILTERS), cfg)
        weighers = runner.WeigherRunner(plugins.load(
            plugins.WEIGHERS, list(gantt_side.WEIGHERS), cfg))
        gantt = median_ms(w.volumes, gantt_request, hosts, flts, weighers)
        cinder = None
        if count <= args.cinder_max:
            states = [cinder_side.pool_state(b) for b in w.backends]
            with cinder_side.multipliers(w), cinder_side.volume_counts(w):
                cinder = median_ms(w.volumes, cinder_request, states)
        print("%8d  %12s  %12.1f  %8s" % (
            count, "-" if cinder is None else "%.1f" % cinder, gantt,
            "-" if cinder is None else "%.1fx" % (cinder / gantt)))


if __name__ == "__main__":
    main()
