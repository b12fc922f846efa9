#!/usr/bin/env python3
"""Failure domains in the claim: what a ``spread`` policy's read costs.

A claim for a member of a group with a ``spread`` policy reads where
every host is (:func:`gantt.db.domains.places` with no host list: its
minimum counts the domains without members too); the other hard rules
read the members' and the candidates' hosts only. This times that read
on a migrated MariaDB and PostgreSQL database (the test servers of this
machine) holding ``--hosts`` compute hosts (10,000, 200 per rack, 1,000
per row) and ``--agents`` L3 agents (200, kind ``network``, spread over
the same racks): wall and process CPU time per read, mean of
``--repeat`` reads in one transaction.

    python benchmarks/domain_claim.py [--hosts 10000] [--agents 200]
"""

import argparse
import datetime
import time
import uuid

from gantt.db import domains
from gantt.db import models
from gantt.tests import fixtures

NOW = datetime.datetime(2026, 11, 29)


def _fill(db, hosts, agents):
    providers = [{"id": i + 1, "uuid": str(uuid.uuid4()), "name": "h%d" % i,
                  "generation": 0, "root_provider_id": i + 1,
                  "created_at": NOW} for i in range(hosts + agents)]
    compute = [{"resource_provider_id": i + 1, "host": "h%d" % i,
                "nodename": "h%d" % i, "report_sequence": 1,
                "received_at": NOW, "details": "{}",
                "location": "row=r%d/rack=k%d" % (i // 1000, i // 200)}
               for i in range(hosts)]
    standalone = [{"resource_provider_id": i + 1, "report_sequence": 1,
                   "received_at": NOW, "kind": "network",
                   "capabilities": "{}",
                   "location": "rack=k%d" % (i % max(hosts // 200, 1))}
                  for i in range(hosts, hosts + agents)]
    with db.begin() as conn:
        conn.execute(models.RP.insert(), [
            {k: v for k, v in p.items() if k in models.RP.c}
            for p in providers])
        conn.execute(models.REPORTS.insert(), compute)
        if standalone:
            conn.execute(models.PROVIDER_REPORTS.insert(), standalone)


def _time(db, repeat):
    with db.begin() as conn:
        found = domains.places(conn, None)         # warm
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(repeat):
            domains.places(conn, None)
        return (len(found.keys()),
                (time.perf_counter() - wall) / repeat * 1000,
                (time.process_time() - cpu) / repeat * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print("%-11s %6s  %12s  %11s" % ("database", "hosts", "wall ms/read",
                                     "cpu ms/read"))
    for backend in ("mysql", "postgresql"):
        fx = fixtures.Database(backend)
        fx.setUp()
        try:
            _fill(fx.db, args.hosts, args.agents)
            hosts, wall, cpu = _time(fx.db, args.repeat)
        finally:
            fx.cleanUp()
        print("%-11s %6d  %12.1f  %11.1f" % (backend, hosts, wall, cpu))


if __name__ == "__main__":
    main()
