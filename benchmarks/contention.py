"""Many workers, one database: throughput, lost races, staleness, recovery.

For 1, 2 and 4 ``gantt-scheduler`` workers on one topic, over 5,000 hosts
already 90% full (allocations written straight into MariaDB), conductors
place instances until the cloud is 95% full. Printed per run: placements/s,
claim conflicts retried per placement, select_destinations p50/p99, and how
stale other workers' caches were (p99 delay of a peer's claim). Then the
broker is restarted under load and the recovery time is measured.

    .venv/bin/python benchmarks/contention.py [--hosts 5000] [--quick]

Needs this machine's RabbitMQ and MariaDB; it starts a private RabbitMQ node
for the restart, never touching the shared one.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import uuid

import numpy as np
import sqlalchemy as sa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from gantt import rpc  # noqa: E402
from gantt.db import models  # noqa: E402
from gantt.db import reports  # noqa: E402
from gantt.rpcapi import client as rpc_client  # noqa: E402
from gantt.tests import factories as f  # noqa: E402
from gantt.tests import fixtures as gantt_fixtures  # noqa: E402
from gantt.tests import rabbit_node  # noqa: E402
from gantt.tests.functional import conftest  # noqa: E402
from gantt.tests.functional import invariants  # noqa: E402
from gantt.tests.functional import storm  # noqa: E402

FLAVOR = f.flavor("m1", vcpus=2, memory_mb=4096, root_gb=40)
PER_HOST = 8          # the flavor fits 8 times on a host below
# the prefilled hosts never report again here: keep them up for the run
PLUGINS = ("[scheduler]\nservice_down_time = 3600\n"
           "[filter_scheduler]\nenabled_filters = ComputeFilter,"
           "ResourceFilter\nenabled_weighers = RAMWeigher\n"
           "host_subset_size = %d\n")


def _hosts(count):
    return [f.compute_node_obj("c%05d" % i, vcpus=16, memory_mb=32768,
                               disk_gb=320, sequence=1)
            for i in range(count)]


def _prefill(db, nodes, fill):
    """Write hosts and allocations straight into the database: each host
    ``fill`` full (in whole instances), as if long in service."""
    for node in nodes:
        reports.save_report(db, node)
    per_host = int(PER_HOST * fill)
    alloc = models.Allocation.__table__
    consumers = models.Consumer.__table__
    rp = models.ResourceProvider.__table__
    now = sa.func.now()
    with db.begin() as conn:
        ids = [r.id for r in conn.execute(sa.select(rp.c.id))]
        rows, people = [], []
        for rp_id in ids:
            for _ in range(per_host):
                consumer = str(uuid.uuid4())
                people.append({"uuid": consumer, "generation": 0})
                for rc, amount in (("VCPU", 2), ("MEMORY_MB", 4096),
                                   ("DISK_GB", 40)):
                    rows.append({"resource_provider_id": rp_id,
                                 "consumer_uuid": consumer,
                                 "resource_class": rc, "used": amount})
        for chunk in range(0, len(people), 5000):
            conn.execute(consumers.insert().values(created_at=now),
                         people[chunk:chunk + 5000])
        for chunk in range(0, len(rows), 5000):
            conn.execute(alloc.insert().values(created_at=now),
                         rows[chunk:chunk + 5000])
        conn.execute(rp.update().values(generation=rp.c.generation + 1))
    return len(ids) * per_host


def _all_stats(client, workers):
    seen = {}
    for _ in range(workers * 20):
        s = client.get_statistics(None)
        seen[s.worker] = s
        if len(seen) == workers:
            break
    return list(seen.values())


def run_workers(workers, hosts, subset, fill_from, fill_to, threads):
    db_fx = gantt_fixtures.Database("mysql")
    db_fx.setUp()
    try:
        nodes = _hosts(hosts)
        _prefill(db_fx.db, nodes, fill_from)
        tmp = tempfile.mkdtemp(prefix="gantt-bench-")
        daemon = conftest.Daemon(tmp, conftest.RABBIT_URL, db_fx.url,
                                 workers, PLUGINS % subset)
        daemon.start()
        client = rpc_client.SchedulerClient(daemon.transport, daemon.topic,
                                            timeout=60)
        count = int(hosts * PER_HOST * (fill_to - fill_from))
        requests = [(f.request(FLAVOR), f.uuids(1)) for _ in range(count)]
        started = time.monotonic()
        outcome, _ = storm.run(client, requests, threads=threads)
        elapsed = time.monotonic() - started
        stats = _all_stats(client, workers)
        found = invariants.check(db_fx.db)
        daemon.stop()
        daemon.transport.cleanup()
        lat = np.array(outcome.latencies) * 1000
        placed = len(outcome.placed)
        lags = [s.peer_lag_p99_ms for s in stats
                if s.peer_lag_p99_ms is not None]
        return {
            "workers": workers, "subset": subset, "placed": placed,
            "no_valid_host": len(outcome.no_valid_host),
            "placements_s": placed / elapsed,
            "conflicts_per_placement": (
                sum(s.claim_conflicts for s in stats) / max(placed, 1)),
            "p50_ms": float(np.percentile(lat, 50)) if len(lat) else None,
            "p99_ms": float(np.percentile(lat, 99)) if len(lat) else None,
            "peer_lag_p99_ms": max(lags) if lags else None,
            "violations": found.violations(),
        }
    finally:
        db_fx.cleanUp()


def run_restart(hosts=200):
    """Seconds from the broker accepting connections to (a) the first
    answered call and (b) every worker's cache fresh again."""
    node = rabbit_node.RabbitNode()
    node.setUp()
    db_fx = gantt_fixtures.Database("mysql")
    db_fx.setUp()
    try:
        tmp = tempfile.mkdtemp(prefix="gantt-bench-")
        daemon = conftest.Daemon(tmp, node.url, db_fx.url, 2, PLUGINS % 1)
        daemon.start()
        transport = rpc.get_transport(daemon.conf, url=node.url)
        client = rpc_client.SchedulerClient(transport, daemon.topic,
                                            timeout=5)
        nodes = _hosts(hosts)
        stop = threading.Event()

        def agents():
            while not stop.is_set():
                try:
                    for n in nodes:
                        n.report_sequence = time.time_ns()
                        client.update_resource_stats(None, n)
                except storm.TRANSIENT:
                    pass
                stop.wait(2.0)

        threading.Thread(target=agents, daemon=True).start()
        daemon.wait_for_hosts(hosts)
        node.stop_app()
        time.sleep(3)
        node.start_app()
        back, back_seq = time.monotonic(), time.time_ns()
        first_call = fresh = None
        seen = set()
        while time.monotonic() - back < 60 and fresh is None:
            try:
                s = client.get_statistics(None)
            except storm.TRANSIENT:
                time.sleep(0.05)
                continue
            first_call = first_call or time.monotonic() - back
            if s.hosts == hosts and s.min_report_sequence >= back_seq:
                seen.add(s.worker)
                if len(seen) == 2:
                    fresh = time.monotonic() - back
        stop.set()
        daemon.stop()
        transport.cleanup()
        return {"first_call_s": first_call, "caches_fresh_s": fresh}
    finally:
        db_fx.cleanUp()
        node.cleanUp()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--subsets", default="1,5",
                        help="host_subset_size values to compare")
    parser.add_argument("--quick", action="store_true",
                        help="1,000 hosts, 90%% -> 92%%: a smoke run")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    fill_to = 0.92 if args.quick else 0.95
    hosts = 1000 if args.quick else args.hosts
    results = []
    print("%d hosts, 90%% -> %d%% full, %d callers, MariaDB" % (
        hosts, fill_to * 100, args.threads))
    print("%7s %6s %8s %12s %14s %8s %8s %13s  %s" % (
        "workers", "subset", "placed", "placements/s", "conflicts/pl.",
        "p50 ms", "p99 ms", "peer lag p99", "invariants"))
    for subset in [int(s) for s in args.subsets.split(",")]:
        for workers in [int(w) for w in args.workers.split(",")]:
            r = run_workers(workers, hosts, subset, 0.90, fill_to,
                            args.threads)
            results.append(r)
            print("%7d %6d %8d %12.0f %14.3f %8.1f %8.1f %10s ms  %s" % (
                r["workers"], r["subset"], r["placed"], r["placements_s"],
                r["conflicts_per_placement"], r["p50_ms"], r["p99_ms"],
                "%.1f" % r["peer_lag_p99_ms"]
                if r["peer_lag_p99_ms"] is not None else "-",
                "OK" if not r["violations"] else r["violations"]),
                flush=True)
    restart = run_restart()
    print("broker restart: first call answered %.1f s, every worker's cache "
          "fresh %.1f s after the broker accepted connections" % (
              restart["first_call_s"], restart["caches_fresh_s"]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"runs": results, "restart": restart}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
