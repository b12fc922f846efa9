#!/usr/bin/env python3
"""What the kind rule costs a request: the candidates step with and
without standalone providers of other kinds in the table.

Every standalone provider (a volume backend, a container host…) is a row
of the host table; the candidates' first step keeps the rows of the
kinds a request asks for. A cloud that never held another kind than
``compute`` skips the step; otherwise it is one comparison of an int32
column. The table prints the candidates step (forced hosts, pre-filters
and all) for a compute request and for a volume request, median and p99
over ``--reps`` runs, in microseconds.

Usage::

    python benchmarks/kind_rule.py [--hosts 10000] [--standalone 0,100,1000]
"""

import argparse
import dataclasses
import time

from gantt.scheduler.pipeline import candidates
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers


def _volume(i):
    uuid = factories.host_uuid("volume/%d" % i)
    return provider_tree.Provider(
        uuid=uuid, name="cinder@lvm#%d" % i, parent_uuid=None,
        root_uuid=uuid, inventories={"DISK_GB": update_mod.Inventory(
            1000, 0, 1, 1000, 1, 1.0)})


def build(hosts, standalone):
    cache = helpers.make_cache(*[helpers.node("h%d" % i)
                                 for i in range(hosts)])
    for i in range(standalone):
        cache.apply_provider(_volume(i), 1, details=update_mod.Standalone(
            kind="volume", capabilities={"thin_provisioning_support": True}))
    return cache


def timed(cache, request, reps):
    view = helpers.view_of(cache)
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        candidates.for_request(view, request)
        samples.append(time.perf_counter() - started)
    samples.sort()
    return (samples[len(samples) // 2] * 1e6,
            samples[int(len(samples) * 0.99)] * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--standalone", default="0,100,1000")
    parser.add_argument("--reps", type=int, default=500)
    args = parser.parse_args()
    compute = helpers.make_request()
    volume = dataclasses.replace(compute,
                                 provider_kinds=frozenset({"volume"}))
    print("%8s %10s  %22s  %22s" % ("compute", "standalone",
                                    "compute req p50/p99 us",
                                    "volume req p50/p99 us"))
    for standalone in (int(s) for s in args.standalone.split(",") if s):
        cache = build(args.hosts, standalone)
        print("%8d %10d  %10.0f / %-9.0f  %10.0f / %-9.0f" % (
            args.hosts, standalone, *timed(cache, compute, args.reps),
            *timed(cache, volume, args.reps)))


if __name__ == "__main__":
    main()
