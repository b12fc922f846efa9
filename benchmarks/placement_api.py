"""Placement's REST API: Gantt's (gantt-api) next to Placement's.

The flat scenario of :mod:`candidates` (one compute-node provider per
host, :mod:`fleet`), the same cloud on both sides, asked the same HTTP
requests as nova-scheduler sends them (:mod:`placement_requests`):
``GET /allocation_candidates?resources=VCPU:..,MEMORY_MB:..,DISK_GB:..
&limit=1000&required=!COMPUTE_STATUS_DISABLED``, then ``PUT
/allocations/{new consumer}`` of the candidates it returned, cycling;
then, on Gantt's side, a PUT followed by the timed GET, the first GET
after a write (Gantt's API keeps its provider index between requests and
brings it up to date when a write moved the database's change stamp,
:mod:`gantt.api.index_cache`; Placement keeps nothing, every GET of its
pays for the whole read). Gantt's process CPU time per GET is shown next
to the wall time (the API runs in this process; the database's work is
not in it).

Placement side (reference venv): exactly :func:`candidates.reference_side`
(the real app in-process, wsgi-intercept). Gantt side: the cloud
bulk-inserted into Gantt's schema (:class:`gantt_env.Populator`), Gantt's
WSGI application (``gantt.api.app.make_app``, ``noauth2``, microversion
1.39) called in-process through WebOb: both sides pay for the whole
middleware stack and JSON, neither for a socket. A request Gantt does not
answer with 200 / 204 is shown with its status instead of a time.

    python benchmarks/placement_api.py [--sizes 1000,10000]
                                       [--dbs mysql,postgresql]
"""

import argparse
import gc
import json
import sys
import time
import uuid as uuidlib

import candidates
import dbs
import fleet
import harness
import placement_requests

DEFAULT_DBS = "mysql,postgresql"
MICROVERSION = "placement 1.39"


def reference_side(args):
    args.scenario = "flat"
    args.check_hosts = 0
    return candidates.reference_side(args)


class Client:
    """Gantt's WSGI application, called in-process as an admin."""

    def __init__(self, app):
        self.app = app

    def call(self, method, path, body=None):
        import webob
        req = webob.Request.blank(path, method=method, headers={
            "X-Auth-Token": "admin", "OpenStack-API-Version": MICROVERSION,
            "Accept": "application/json"})
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = "application/json"
        return req.get_response(self.app)


def make_client(url, db):
    import gantt_env

    from gantt.api import app as app_mod
    conf = gantt_env.make_conf(**{"database.connection": url,
                                  "api.auth_strategy": "noauth2",
                                  "api.notify_workers": False})
    return Client(app_mod.make_app(conf, db=db))


def gantt_side(args):
    import gantt_env

    harness.require_services(args.db)
    sizes = [int(s) for s in args.sizes.split(",")]
    data = fleet.build(sizes[-1])
    request = data.request()
    rows = []
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        pop = gantt_env.Populator(db, data)
        client = make_client(tdb.url, db)
        for n in sizes:
            pop.grow_to(n, progress=lambda k: harness.log(
                "gantt %s: %d hosts inserted", args.db, k))
            row = {"n": n, "providers": n}
            row.update(_time(args, client, request))
            rows.append(row)
            harness.log("gantt-api %s N=%d: %s", args.db, n, row)
        db.dispose()
    return {"side": "gantt", "db": args.db, "scenario": "flat",
            "rows": rows, "digest": fleet.digest(data),
            "versions": gantt_env.gantt_versions()}


def _time(args, client, request):
    """GET (after a warm-up), PUT of the candidates it returned, and GET
    right after a PUT; the status instead of times when Gantt does not
    answer."""
    url = placement_requests.query(request)
    resp = client.call("GET", url)
    if resp.status_int != 200:
        return {"get_status": resp.status_int, "candidates": 0}
    found = resp.json["allocation_requests"]
    targets = candidates.distinct_targets(
        found, lambda a: {rp: b["resources"]
                          for rp, b in a["allocations"].items()})
    gc.collect()
    wall, cpu = [], []
    harness.repeat(lambda: _timed(lambda: client.call("GET", url), wall,
                                  cpu),
                   args.get_seconds, min_reps=3, max_reps=args.max_reps)
    out = {"candidates": len(found), "get": harness.summary_ms(wall),
           "get_cpu": harness.summary_ms(cpu)}
    out.update(_time_put(args, client, request, targets))
    out.update(_time_get_after_put(args, client, request, targets, url))
    return out


def _timed(fn, wall, cpu):
    """Call ``fn``; append its wall and process CPU seconds."""
    started, used = time.perf_counter(), time.process_time()
    fn()
    wall.append(time.perf_counter() - started)
    cpu.append(time.process_time() - used)


def _claim(client, request, target):
    rp = next(iter(target["allocations"]))
    return client.call("PUT", "/allocations/%s" % uuidlib.uuid4(),
                       placement_requests.claim_body(rp, request))


def _time_put(args, client, request, targets):
    if not targets:
        return {"put_status": "no candidate"}
    seq = iter(range(10 ** 9))
    statuses = {}

    def put():
        r = _claim(client, request, targets[next(seq) % len(targets)])
        statuses.setdefault(r.status_int, r.text[:300])

    lat = harness.repeat(put, args.claim_seconds,
                         min_reps=min(10, len(targets)),
                         max_reps=min(args.max_reps, len(targets)))
    if set(statuses) != {204}:
        harness.log("PUT answered: %s", statuses)
        return {"put_status": ",".join(map(str, sorted(statuses)))}
    return {"put": harness.summary_ms(lat)}


def _time_get_after_put(args, client, request, targets, url):
    """The first GET after a write: each PUT (untimed, of a target the
    PUT loop above did not take, counting from the end) moves the change
    stamp, so the GET brings the API's index up to date before it
    answers."""
    if not targets:
        return {}
    wall, cpu, statuses = [], [], {}
    seq = iter(range(1, 10 ** 9))

    def put_then_get():
        r = _claim(client, request, targets[-(next(seq) % len(targets))])
        statuses.setdefault(r.status_int, r.text[:300])
        _timed(lambda: client.call("GET", url), wall, cpu)

    harness.repeat(put_then_get, args.claim_seconds, min_reps=3,
                   max_reps=min(args.max_reps, len(targets)))
    if set(statuses) != {204}:
        harness.log("PUT before GET answered: %s", statuses)
        return {"get_after_put_status": ",".join(map(str,
                                                     sorted(statuses)))}
    return {"get_after_put": harness.summary_ms(wall),
            "get_after_put_cpu": harness.summary_ms(cpu)}


def jobs(args):
    return [("%s:%s" % (side, db), side, ["--db", db])
            for db in args.dbs.split(",") if db
            for side in ("reference", "gantt")]


def _cell(row, key):
    if key in row:
        return "%.2f" % row[key]["p50"]
    status = row.get(key + "_status")
    return "-" if status is None else "HTTP %s" % status


def _ratio(ref, gantt, key, gantt_key=None):
    gantt_key = gantt_key or key
    if gantt_key not in gantt or key not in ref:
        return "-"
    return "%.1fx" % (ref[key]["p50"] / gantt[gantt_key]["p50"])


def rows(results):
    """(db, Placement row, Gantt row, same input) per size and database."""
    for key, res in results.items():
        side, db = key.split(":", 1)
        ref = results.get("reference:" + db)
        if side != "gantt" or ref is None:
            continue
        by_n = {r["n"]: r for r in res["rows"]}
        for r in ref["rows"]:
            if r["n"] in by_n:
                yield db, r, by_n[r["n"]], res["digest"] == ref["digest"]


def show(results):
    print("\nPlacement's REST API, ms p50: GET /allocation_candidates "
          "(limit 1000) with its process CPU ms; Gantt's GET right after "
          "a PUT (its index brought up to date; Placement keeps none, so "
          "its GET is compared); PUT /allocations/{consumer}. ratio: "
          "Placement / Gantt (higher: Gantt faster)")
    print("%-10s %6s %9s %7s %8s %6s %6s %7s %9s %6s %6s %8s %8s %6s %4s" % (
        "db", "rps", "Plac. GET", "cpu", "Gantt", "cpu", "ratio",
        "cpu rt", "after PUT", "cpu", "ratio", "Plac. PUT", "Gantt",
        "ratio", "same"))
    for db, r, g, same in rows(results):
        print("%-10s %6d %9s %7s %8s %6s %6s %7s %9s %6s %6s %8s %8s %6s "
              "%4s" % (
                  harness.DB_LABELS[db], r["n"], _cell(r, "get"),
                  _cell(r, "get_cpu"), _cell(g, "get"), _cell(g, "get_cpu"),
                  _ratio(r, g, "get"), _ratio(r, g, "get_cpu"),
                  _cell(g, "get_after_put"), _cell(g, "get_after_put_cpu"),
                  _ratio(r, g, "get", "get_after_put"), _cell(r, "put"),
                  _cell(g, "put"), _ratio(r, g, "put"),
                  "yes" if same else "NO"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    candidates.add_arguments(parser)
    parser.set_defaults(dbs=DEFAULT_DBS)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "reference": reference_side}, show,
                             jobs=jobs)


if __name__ == "__main__":
    sys.exit(main())
