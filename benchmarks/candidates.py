"""2. Candidates + claim: Gantt vs Placement, on each database.

Placement side (reference venv): the real Placement app in-process
(``ref_placement.py``): ``GET /allocation_candidates`` as nova-scheduler
sends it (``resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40&limit=1000
&required=!COMPUTE_STATUS_DISABLED``), then ``PUT /allocations/{consumer}``
on one of the candidates.

Gantt side (Gantt venv): the same cloud bulk-inserted into Gantt's schema on
the same kind of database, a ``SchedulerManager`` that loads its cache from
it, then ``select_destinations`` in-process for one instance (request,
candidates, every enabled filter and weigher, the claim transaction in the
database, the selection; no alternates), and the claim transaction alone
(``Claimer.claim``) for comparison with the PUT.

Both sides grow one database: the first 1 000 hosts, measure, then up to
10 000 hosts, measure. Each side creates a throw-away database and drops it.

    python benchmarks/candidates.py [--sizes 1000,10000]
                                    [--dbs mysql,postgresql,sqlite]
"""

import argparse
import gc
import sys
import time

import dbs
import fleet
import harness

DEFAULT_SIZES = "1000,10000"
DEFAULT_DBS = "mysql,postgresql,sqlite"


def _sizes(args):
    return sorted(int(x) for x in args.sizes.split(",") if x)


def reference_side(args):
    import uuid as uuidlib

    import ref_placement

    harness.require_services(args.db)
    sizes = _sizes(args)
    cloud = fleet.build(sizes[-1])
    request = cloud.request()
    rows = []
    with dbs.ThrowawayDB(args.db, prefix="bench_placement_") as tdb:
        conf = ref_placement.configure(tdb.url)
        with ref_placement.client(conf) as client:
            # the app syncs the schema, traits and classes on first use
            assert client.get("/").status_code == 200
            pop = ref_placement.Populator(ref_placement.engine(), cloud)
            for n in sizes:
                started = time.perf_counter()
                pop.grow_to(n, progress=lambda k: harness.log(
                    "placement %s: %d providers inserted", args.db, k))
                dbs.analyze(ref_placement.engine())
                populate_s = time.perf_counter() - started
                url = ref_placement.query(request)
                client.get(url)  # warm-up
                resp = client.get(url)
                assert resp.status_code == 200, (resp.status_code,
                                                 resp.text[:300])
                body = resp.json()
                targets = [next(iter(a["allocations"]))
                           for a in body["allocation_requests"]]

                def get(url=url):
                    r = client.get(url)
                    assert r.status_code == 200, r.status_code
                    return r.content

                gc.collect()
                lat_get = []
                try:  # at least one query, three if they are not too slow
                    with harness.time_limit(args.get_cap):
                        harness.repeat(get, args.get_seconds, min_reps=3,
                                       max_reps=args.max_reps, into=lat_get)
                except harness.Timeout:
                    if not lat_get:
                        harness.repeat(get, 0, min_reps=1, into=lat_get)
                seq = iter(range(10 ** 9))

                def put(targets=targets, seq=seq):
                    k = next(seq)
                    consumer = str(uuidlib.uuid4())
                    r = client.put("/allocations/%s" % consumer,
                                   json=ref_placement.claim_body(
                                       targets[k % len(targets)], request))
                    assert r.status_code == 204, (r.status_code,
                                                  r.text[:300])

                lat_put = harness.repeat(put, args.claim_seconds,
                                         min_reps=10, max_reps=args.max_reps)
                rows.append({"n": n, "populate_s": populate_s,
                             "candidates": len(targets),
                             "get": harness.summary_ms(lat_get),
                             "put": harness.summary_ms(lat_put)})
                harness.log("placement %s N=%d: GET %.1f ms, PUT %.1f ms "
                            "(%d candidates; populated in %.1fs)", args.db,
                            n, rows[-1]["get"]["p50"],
                            rows[-1]["put"]["p50"], len(targets), populate_s)
    return {"side": "reference", "db": args.db, "rows": rows,
            "digest": fleet.digest(cloud),
            "versions": ref_placement.version()}


def gantt_side(args):
    import uuid as uuidlib

    import gantt_env

    from gantt.scheduler import manager as manager_mod

    harness.require_services(args.db)
    sizes = _sizes(args)
    cloud = fleet.build(sizes[-1])
    spec = gantt_env.request_spec(cloud, group=False)
    rows = []
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        pop = gantt_env.Populator(db, cloud)
        for n in sizes:
            started = time.perf_counter()
            pop.grow_to(n, progress=lambda k: harness.log(
                "gantt %s: %d hosts inserted", args.db, k))
            populate_s = time.perf_counter() - started
            conf = gantt_env.make_conf(**{"database.connection": tdb.url})
            mgr = manager_mod.SchedulerManager(conf, db)
            started = time.perf_counter()
            mgr.load_cache()
            load_s = time.perf_counter() - started
            chosen = []

            def place(mgr=mgr, chosen=chosen):
                placed = mgr.select_destinations(
                    spec, [str(uuidlib.uuid4())], return_alternates=False)
                chosen.append(placed[0][0].compute_node_uuid)

            roomy = _roomiest(cloud.hosts[:n], 200)
            seq = iter(range(10 ** 9))

            def claim(mgr=mgr, roomy=roomy, seq=seq):
                mgr.claimer.claim(
                    str(uuidlib.uuid4()),
                    {roomy[next(seq) % len(roomy)]: {
                        "VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 40}},
                    project_id=fleet.PROJECT_ID, user_id=fleet.USER_ID)

            place()  # warm-up
            gc.collect()
            lat_sel = []
            try:
                with harness.time_limit(args.gantt_cap):
                    harness.repeat(place, args.get_seconds, min_reps=5,
                                   max_reps=args.max_reps, into=lat_sel)
            except harness.Timeout:
                pass
            lat_claim = harness.repeat(claim, args.claim_seconds,
                                       min_reps=10, max_reps=args.max_reps)
            rows.append({"n": n, "populate_s": populate_s, "load_s": load_s,
                         "select": harness.summary_ms(lat_sel),
                         "claim": harness.summary_ms(lat_claim)})
            harness.log("gantt %s N=%d: select_destinations %.2f ms, claim "
                        "%.2f ms (cache loaded in %.2fs, populated in "
                        "%.1fs)", args.db, n, rows[-1]["select"]["p50"],
                        rows[-1]["claim"]["p50"], load_s, populate_s)
            del mgr
            gc.collect()
        db.dispose()
    return {"side": "gantt", "db": args.db, "rows": rows,
            "digest": fleet.digest(cloud),
            "versions": __import__("gantt_env").gantt_versions()}


def _roomiest(hosts, count):
    """The uuids of the enabled hosts with the most free memory."""
    free = sorted(((fleet.capacity(h)["MEMORY_MB"] - h["used"]["MEMORY_MB"],
                    h["uuid"]) for h in hosts if not h["disabled"]),
                  reverse=True)
    return [u for _f, u in free[:count]]


def jobs(args):
    out = []
    for db in [d for d in args.dbs.split(",") if d]:
        out.append(("reference:" + db, "reference", ["--db", db]))
        out.append(("gantt:" + db, "gantt", ["--db", db]))
    return out


def _pairs(results):
    """``[(db, gantt result, reference result)]`` in run order."""
    out = []
    for key, res in results.items():
        side, db = key.split(":", 1)
        if side == "gantt" and "reference:" + db in results:
            out.append((db, res, results["reference:" + db]))
    return out


def table(results):
    out = []
    for db, g, ref in _pairs(results):
        gr = {r["n"]: r for r in g["rows"]}
        for r in ref["rows"]:
            x = gr.get(r["n"])
            if x is None or not x["select"].get("n"):
                continue
            gms = x["select"]["p50"]
            rms = r["get"]["p50"] + r["put"]["p50"]
            out.append({
                "label": "candidates+claim %dk hosts, %s" % (
                    r["n"] // 1000, harness.DB_LABELS[db]),
                "gantt": "%.2f ms" % gms, "reference": "%.0f ms" % rms,
                "ratio": rms / gms, "higher_is_better": False,
                "target": ">= 300x" if r["n"] == 10000 else None,
                "met": rms / gms >= 300 if r["n"] == 10000 else None,
                "same_input": g["digest"] == ref["digest"]})
    return out


def show(results):
    print("\nCandidates + claim per request, ms p50 (p90); Placement: GET "
          "allocation_candidates + PUT allocations; Gantt: "
          "select_destinations in-process (incl. claim), and claim alone")
    print("%-11s %7s %18s %18s %9s %18s %18s %10s %7s" % (
        "db", "hosts", "Placement GET", "Placement PUT", "cands",
        "Gantt select", "Gantt claim", "ratio", "same"))
    for db, g, ref in _pairs(results):
        gr = {r["n"]: r for r in g["rows"]}
        for r in ref["rows"]:
            x = gr.get(r["n"])
            if x is None:
                continue
            sel = x["select"]
            ratio = ((r["get"]["p50"] + r["put"]["p50"]) / sel["p50"]
                     if sel.get("n") else float("nan"))
            print("%-11s %7d %18s %18s %9d %18s %18s %9.0fx %7s" % (
                harness.DB_LABELS[db], r["n"], _cell(r["get"]),
                _cell(r["put"]), r["candidates"], _cell(sel),
                _cell(x["claim"]), ratio,
                "yes" if g["digest"] == ref["digest"] else "NO"))


def _cell(s):
    if not s.get("n"):
        return "timeout"
    return "%.2f (%.2f)" % (s["p50"], s["p90"])


def add_arguments(parser):
    parser.add_argument("--sizes", default=DEFAULT_SIZES)
    parser.add_argument("--dbs", default=DEFAULT_DBS,
                        help="databases to run on, in this order")
    parser.add_argument("--db", default="sqlite",
                        help="(with --side) the one database of this run")
    parser.add_argument("--get-seconds", type=float, default=4.0,
                        help="time budget for the candidates query loop "
                             "(at least 3 reps)")
    parser.add_argument("--claim-seconds", type=float, default=2.0)
    parser.add_argument("--max-reps", type=int, default=500)
    parser.add_argument("--gantt-cap", type=float, default=30.0)
    parser.add_argument("--get-cap", type=float, default=20.0,
                        help="stop repeating Placement's GET after this "
                             "(s), once it has one measurement")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "reference": reference_side}, show,
                             jobs=jobs)


if __name__ == "__main__":
    sys.exit(main())
