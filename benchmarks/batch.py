"""4. Batched placement: instances per second, 100 instances per call.

A real ``gantt-scheduler`` (one worker) on a throw-away MariaDB database
holding the shared cloud; one caller asks ``select_destinations`` for
``num_instances`` = 100 m1.medium instances per call, alternates included,
back to back for a bounded time. Every instance is claimed in the database
(all or nothing per call).

There is no batch API to call on the reference side: ``run_all.py`` puts
next to it what Nova + Placement would take for the same 100 instances,
composed from parts measured in the same run (one GET
allocation_candidates, then per instance one ``_get_sorted_hosts`` over the
same number of hosts and one PUT allocations).

    python benchmarks/batch.py [--hosts 1000] [--batch 100] [--seconds 10]
"""

import argparse
import sys
import uuid

import fleet
import harness


def gantt_side(args):
    import dbs
    import gantt_env

    harness.require_services("rabbit", args.db)
    cloud = fleet.build(args.hosts)
    spec = gantt_env.request_spec(cloud, num_instances=args.batch,
                                  group=False)
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, cloud).grow_to(args.hosts)
        db.dispose()
        with gantt_env.Daemon(tdb.url) as daemon:
            client, transport = daemon.client(timeout=300)
            daemon.wait_ready()
            alternates = []

            def call():
                uuids = [str(uuid.uuid4()) for _ in range(args.batch)]
                placed = client.select_destinations(None, spec, uuids)
                assert len(placed) == args.batch
                alternates.append(sum(len(s) - 1 for s in placed))

            with gantt_env.Profile(daemon.worker_pids()[0], args.profile,
                                   within="select_destinations") as prof:
                lat = harness.repeat(call, args.seconds, min_reps=1,
                                     max_reps=10 ** 6)
            transport.cleanup()
        server = daemon.server_times_ms()
    instances = args.batch * len(lat)
    rate = instances / sum(lat)
    harness.log("gantt: %d instances in %d calls, %.0f instances/s",
                instances, len(lat), rate)
    return {"side": "gantt", "db": args.db, "hosts": args.hosts,
            "batch": args.batch, "calls": len(lat), "instances": instances,
            "rate": rate, "latency": harness.summary_ms(lat),
            "server_ms": harness.summary_ms([x / 1e3 for x in server]),
            "alternates_per_instance": sum(alternates) / max(instances, 1),
            "digest": fleet.digest(cloud), "profile": prof.result,
            "versions": gantt_env.gantt_versions()}


def table(results, reference=None):
    g = results["gantt"]
    row = {"label": "batched placement, %d per call, %dk hosts (%s)" % (
        g["batch"], g["hosts"] // 1000, harness.DB_LABELS[g["db"]]),
        "gantt": "%.0f inst/s" % g["rate"], "reference": "-",
        "ratio": None, "higher_is_better": True, "target": ">= 5000/s",
        "met": g["rate"] >= 5000}
    if reference:
        row["reference"] = "%.1f inst/s est." % reference
        row["ratio"] = g["rate"] / reference
    return [row]


def show(results):
    g = results["gantt"]
    print("\nBatched placement: %d instances per call, %d hosts, %s" % (
        g["batch"], g["hosts"], harness.DB_LABELS[g["db"]]))
    print("  %d calls, %d instances, %.0f instances/s; call p50 %.0f ms "
          "(worker %.0f ms); %.1f alternates per instance" % (
              g["calls"], g["instances"], g["rate"], g["latency"]["p50"],
              g["server_ms"].get("p50", float("nan")),
              g["alternates_per_instance"]))


def add_arguments(parser):
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--db", default="mysql")
    parser.add_argument("--profile", action="store_true",
                        help="sample the worker with py-spy")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side}, show)


if __name__ == "__main__":
    sys.exit(main())
