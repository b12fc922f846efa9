"""6. Scale: a worker over 100 000 hosts, its memory and its cold start.

The shared cloud's 100 000 hosts are bulk-inserted into a throw-away
MariaDB database (providers, inventories, reports, traits, aggregates,
and each host's usage as one consumer; the 10 server-group members as
their own). Once the database had time to write the bulk insert out
(``--settle``: otherwise it flushes pages while the worker reads, which a
worker restarting in production does not meet), a real
``gantt-scheduler`` starts on it:

* cold start: from the daemon's exec to its first answered call that needs
  the cache (and the load time the worker logs itself);
* worker RSS once ready, and after a few ``select_destinations`` at that
  size (whose latency is reported too).

Nova's side is its scheduler's in-memory picture of the same hosts: the
RSS growth of the Nova process of ``decision.py`` once its HostManager has
built the 100 000 HostStates (shown by ``run_all.py``).

    python benchmarks/scale.py [--hosts 100000]
"""

import argparse
import sys
import time
import uuid

import fleet
import harness


def gantt_side(args):
    import dbs
    import gantt_env

    harness.require_services("rabbit", args.db)
    started = time.perf_counter()
    cloud = fleet.build(args.hosts)
    spec = gantt_env.request_spec(cloud, group=False)
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, cloud, per_instance=False).grow_to(
            args.hosts, progress=lambda k: harness.log(
                "gantt %s: %d hosts inserted", args.db, k))
        db.dispose()
        populate_s = time.perf_counter() - started
        settle_s = _settle(tdb.url, args.settle)
        load_profile = _profile_load(tdb.url) if args.profile else None
        with gantt_env.Daemon(tdb.url) as daemon:
            cold = daemon.wait_ready(timeout=300)
            pid = daemon.worker_pids()[0]
            rss_ready = harness.rss_mib(pid)
            harness.log("gantt: ready in %.2fs with %d hosts, worker RSS "
                        "%.0f MiB", cold, args.hosts, rss_ready)
            client, transport = daemon.client(timeout=120)
            lat = []

            def call():
                client.select_destinations(None, spec, [str(uuid.uuid4())])

            try:
                with harness.time_limit(args.call_cap):
                    harness.repeat(call, args.seconds, min_reps=3,
                                   max_reps=200, into=lat)
            except harness.Timeout:
                pass
            rss_after = harness.rss_mib(pid)
            transport.cleanup()
        loaded = _logged_load(daemon.log())
    return {"side": "gantt", "db": args.db, "hosts": args.hosts,
            "populate_s": populate_s, "settle_s": settle_s,
            "cold_start_s": cold,
            "cache_load_s": loaded, "rss_ready_mib": rss_ready,
            "rss_after_mib": rss_after,
            "select": harness.summary_ms(lat),
            "load_profile": load_profile,
            "digest": fleet.digest(cloud),
            "versions": gantt_env.gantt_versions()}


def _settle(url, seconds):
    """Give the database ``seconds`` to write the bulk insert out (after a
    checkpoint on PostgreSQL); returns the seconds it took.

    NOTE: a fixed time, not MariaDB's count of dirty pages: on a shared
    server other clients keep some dirty all the time.
    """
    import sqlalchemy as sa

    started = time.perf_counter()
    if seconds > 0:
        engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                if engine.dialect.name == "postgresql":
                    conn.exec_driver_sql("CHECKPOINT")
        finally:
            engine.dispose()
        time.sleep(max(0.0, seconds - (time.perf_counter() - started)))
    return time.perf_counter() - started


def _profile_load(url):
    """Where a cache load's time goes: ``load_cache`` in this process,
    sampled by py-spy, and the share of each of its steps."""
    import os

    import gantt_env

    from gantt import scheduler as scheduler_mod

    db = gantt_env.gantt_database(url)
    mgr = scheduler_mod.build(
        gantt_env.make_conf(**{"database.connection": url}), db).stats
    before = harness.rss_mib()
    with gantt_env.Profile(os.getpid(), True, rate=100) as prof:
        started = time.perf_counter()
        mgr.load_cache()
        elapsed = time.perf_counter() - started
    result = {"load_s": elapsed, "rss_growth_mib": harness.rss_mib() - before,
              "profile": prof.result}
    harness.log("gantt: in-process load_cache %.1fs, RSS +%.0f MiB",
                elapsed, result["rss_growth_mib"])
    del mgr
    db.dispose()
    return result


def _logged_load(log):
    import re
    m = re.search(r"Host cache loaded: \d+ hosts from the database in "
                  r"([0-9.]+)s", log)
    return float(m.group(1)) if m else None


def table(results, nova_rss=None):
    g = results["gantt"]
    rss = max(g["rss_ready_mib"], g["rss_after_mib"])
    rows = [
        {"label": "worker RSS at %dk hosts" % (g["hosts"] // 1000),
         "gantt": "%.0f MiB" % rss,
         "reference": ("%.0f MiB Nova HostStates" % nova_rss
                       if nova_rss else "-"),
         "ratio": (nova_rss / rss) if nova_rss else None,
         "higher_is_better": False, "target": "<= 1 GiB",
         "met": rss <= 1024},
        {"label": "cold start from %s at %dk hosts" % (
            harness.DB_LABELS[g["db"]], g["hosts"] // 1000),
         "gantt": "%.2f s" % g["cold_start_s"], "reference": "-",
         "ratio": None, "target": "<= 5 s",
         "met": g["cold_start_s"] <= 5.0},
    ]
    if g["select"].get("n"):
        rows.append({
            "label": "select_destinations p50 at %dk hosts" % (
                g["hosts"] // 1000),
            "gantt": "%.1f ms" % g["select"]["p50"], "reference": "-",
            "ratio": None, "target": None, "met": None})
    return rows


def show(results):
    g = results["gantt"]
    print("\nScale: %d hosts on %s (populated in %.0fs, settled in "
          "%.0fs)" % (g["hosts"], harness.DB_LABELS[g["db"]],
                      g["populate_s"], g.get("settle_s", 0)))
    print("  cold start %.2fs (cache load %ss); worker RSS %.0f MiB ready, "
          "%.0f MiB after %d calls (select p50 %s ms)" % (
              g["cold_start_s"], g["cache_load_s"], g["rss_ready_mib"],
              g["rss_after_mib"], g["select"].get("n", 0),
              "%.1f" % g["select"]["p50"] if g["select"].get("n") else "-"))


def add_arguments(parser):
    parser.add_argument("--hosts", type=int, default=100000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--call-cap", type=float, default=30.0)
    parser.add_argument("--db", default="mysql")
    parser.add_argument("--profile", action="store_true",
                        help="also load the cache in-process under py-spy")
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds between the bulk insert and the "
                             "worker's start (0: none)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side}, show)


if __name__ == "__main__":
    sys.exit(main())
