"""7. C1M-style: as many placements as fit in a bounded time, all persisted.

After HashiCorp's "C1M" runs (Nomad scheduled a million containers; its
published rate was 3 750 placements/s on 5 servers), at this machine's
size: a real ``gantt-scheduler`` on a throw-away MariaDB database holding
the shared cloud's first 5 000 hosts; several callers ask for batches of
m1.medium instances back to back until the time is up. Every placement is
a claim: the run ends by counting the consumers in the database (they must
equal the placements) and checking that no provider is over its capacity.

    python benchmarks/c1m.py [--hosts 5000] [--seconds 30] [--callers 4]
                             [--batch 50] [--workers 1]
"""

import argparse
import sys
import uuid

import fleet
import harness


def gantt_side(args):
    import dbs
    import gantt_env
    import sqlalchemy as sa

    harness.require_services("rabbit", args.db)
    cloud = fleet.build(args.hosts)
    spec = gantt_env.request_spec(cloud, num_instances=args.batch,
                                  group=False)
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, cloud).grow_to(args.hosts)
        before = _consumers(db, sa)
        with gantt_env.Daemon(tdb.url, workers=args.workers) as daemon:
            daemon.wait_ready()
            client, transport = daemon.client(timeout=300)
            placed = []

            def call():
                uuids = [str(uuid.uuid4()) for _ in range(args.batch)]
                placed.append(len(client.select_destinations(
                    None, spec, uuids, return_alternates=True)))

            rate_calls, lat = harness.threaded_rate(call, args.callers,
                                                    args.seconds)
            transport.cleanup()
        log = daemon.log()
        persisted = _consumers(db, sa) - before
        over = _overcommitted(db)
        db.dispose()
    total = sum(placed)
    rate = rate_calls * args.batch
    harness.log("gantt: %d placements at %.0f/s; %d persisted; %d "
                "providers over capacity", total, rate, persisted, over)
    return {"side": "gantt", "db": args.db, "hosts": args.hosts,
            "workers": args.workers, "callers": args.callers,
            "batch": args.batch, "seconds": args.seconds,
            "placements": total, "rate": rate, "persisted": persisted,
            "overcommitted": over, "latency": harness.summary_ms(lat),
            "tracebacks": log.count("Traceback"),
            "digest": fleet.digest(cloud),
            "versions": gantt_env.gantt_versions()}


def _consumers(db, sa):
    with db.begin() as conn:
        return conn.execute(sa.text(
            "SELECT COUNT(DISTINCT consumer_uuid) FROM allocations")).scalar()


def _overcommitted(db):
    from gantt.db import audit

    with db.begin() as conn:
        return len(audit.overcommitted(conn))


def table(results):
    g = results["gantt"]
    ok = g["persisted"] == g["placements"] and g["overcommitted"] == 0
    return [{
        "label": "C1M-style: %dk hosts, %d callers x %d, %ds" % (
            g["hosts"] // 1000, g["callers"], g["batch"], g["seconds"]),
        "gantt": "%.0f placements/s" % g["rate"],
        "reference": "3750/s Nomad (5 servers)",
        "ratio": g["rate"] / 3750.0, "higher_is_better": True,
        "target": "all persisted", "met": ok,
        "note": "%d placed, %d persisted, %d over capacity" % (
            g["placements"], g["persisted"], g["overcommitted"])}]


def show(results):
    g = results["gantt"]
    print("\nC1M-style: %d hosts, %d worker(s), %d callers x %d instances, "
          "%ds" % (g["hosts"], g["workers"], g["callers"], g["batch"],
                   g["seconds"]))
    print("  %d placements, %.0f/s; %d persisted in the database; %d "
          "providers over capacity; call p50 %.0f ms; %d tracebacks" % (
              g["placements"], g["rate"], g["persisted"], g["overcommitted"],
              g["latency"].get("p50", float("nan")), g["tracebacks"]))


def add_arguments(parser):
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--callers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--db", default="mysql")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side}, show)


if __name__ == "__main__":
    sys.exit(main())
