"""2. Candidates + claim: Gantt vs Placement, on each database.

Two scenarios (``--scenario``), each on the same data for both sides:

``flat``: one compute-node provider per host (:mod:`fleet`). Placement is
asked as nova-scheduler asks it (``resources=VCPU:2,MEMORY_MB:4096,
DISK_GB:40&limit=1000&required=!COMPUTE_STATUS_DISABLED``).

``trees``: every host is a provider tree, a compute root (local DISK_GB on
half of the hosts only), two NUMA cells with the VCPU and MEMORY_MB, one
SR-IOV PF per cell, plus one sharing DISK_GB pool per aggregate of 100
hosts (:mod:`trees`: five providers per host). Placement is asked as Nova
asks for an instance with an SR-IOV port with NUMA affinity::

    resources=DISK_GB:20&resources_CPU=VCPU:2,MEMORY_MB:4096
    &resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET_A
    &same_subtree=_CPU,_NET&group_policy=isolate
    &root_required=!COMPUTE_STATUS_DISABLED&limit=1000

Placement side (reference venv): the real Placement app in-process
(``ref_placement.py``) at its latest microversion, the cloud bulk-inserted
into its schema; ``GET /allocation_candidates``, then ``PUT
/allocations/{consumer}`` of one returned allocation request (cycling
through them).

Gantt side (Gantt venv): the same cloud bulk-inserted into Gantt's schema
on the same kind of database, a built ``Scheduler`` that loads its cache
from it, then ``select_destinations`` in-process for one instance (request,
candidates, every enabled filter and weigher, the tree solver, the claim
transaction in the database, the selection; no alternates), the claim
transaction alone (``Claimer.claim`` of one candidate's allocations) for
comparison with the PUT, and ``get_allocation_candidates`` (Placement's
GET on the cache).

At the first size, if it is at most ``--check-hosts``, both sides also
list every candidate (no limit) before anything is claimed; the table
says whether the two answers are the same set of allocation requests
(later sizes are not compared: each side's claims changed its usage).

Both sides grow one database: the first 1 000 hosts, measure, then up to
10 000 hosts, measure. Each side creates a throw-away database and drops it.

    python benchmarks/candidates.py [--sizes 1000,10000]
                                    [--dbs mysql,postgresql,sqlite]
                                    [--scenario flat,trees]
"""

import argparse
import datetime
import gc
import hashlib
import json
import sys
import time

import dbs
import fleet
import harness
import trees

DEFAULT_SIZES = "1000,10000"
DEFAULT_DBS = "mysql,postgresql,sqlite"
SCENARIOS = ("flat", "trees")
SCENARIO_LABELS = {"flat": "flat", "trees": "trees+sharing"}
#: the issue's target, at this many providers and more
TARGET_PROVIDERS = 10000
TARGET_RATIO = 300
TARGET_P99_MS = 5.0


def _sizes(args):
    return sorted(int(x) for x in args.sizes.split(",") if x)


def _scenarios(args):
    names = [s for s in args.scenario.split(",") if s]
    unknown = sorted(set(names) - set(SCENARIOS))
    if unknown or not names:
        raise SystemExit("unknown --scenario %s (choose among %s)" % (
            ",".join(unknown) or "''", ",".join(SCENARIOS)))
    return names


def _one_scenario(args):
    names = _scenarios(args)
    if len(names) != 1:
        raise SystemExit("--side runs one --scenario, not %s"
                         % args.scenario)
    return names[0]


def answer_digest(mappings, sharing=frozenset()):
    """A side's whole answer, comparable across sides whatever its order:
    ``count``, ``digest``, the sorted short hash of every allocation
    request (each given as ``{provider uuid: {class: amount}}``) and those
    of the requests that take something from a provider of ``sharing``."""
    canon = {}
    for m in mappings:
        text = json.dumps(sorted((rp, rc, int(amount))
                                 for rp, amounts in m.items()
                                 for rc, amount in amounts.items()))
        canon[hashlib.sha256(text.encode()).hexdigest()[:12]] = bool(
            sharing & set(m))
    hashes = sorted(canon)
    return {"count": len(hashes),
            "digest": hashlib.sha256("".join(hashes).encode()).hexdigest()[
                :16],
            "hashes": hashes,
            "shared": [h for h in hashes if canon[h]]}


def sharing_providers(data, scenario):
    if scenario != "trees":
        return frozenset()
    return frozenset(p["uuid"] for p in data.providers
                     if p["kind"] == "pool")


def distinct_targets(items, mapping_of=lambda m: m):
    """The allocation requests to claim in a loop: the first of each set
    of providers giving something else than disk, so that no two claims
    of the loop share a NUMA cell or a PF (each candidate has room for
    one more instance, not necessarily for two)."""
    seen = set()
    out = []
    for item in items:
        m = mapping_of(item)
        key = tuple(sorted(rp for rp, amounts in m.items()
                           if set(amounts) - {"DISK_GB"})) or tuple(sorted(m))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# -- Placement -----------------------------------------------------------


def reference_side(args):
    import ref_placement

    harness.require_services(args.db)
    scenario = _one_scenario(args)
    sizes = _sizes(args)
    if scenario == "trees":
        data = trees.build(sizes[-1])
        request = data.request()
        url = ref_placement.tree_query(request)
        url_all = ref_placement.tree_query(dict(request, limit=None))

        def body_of(allocation_request):
            return ref_placement.tree_claim_body(allocation_request)

        digest = trees.digest(data)
    else:
        data = fleet.build(sizes[-1])
        request = data.request()
        url = ref_placement.query(request)
        url_all = ref_placement.query(request, limit=10 ** 6)

        def body_of(allocation_request):
            return ref_placement.claim_body(
                next(iter(allocation_request["allocations"])), request)

        digest = fleet.digest(data)
    rows = []
    with dbs.ThrowawayDB(args.db, prefix="bench_placement_") as tdb:
        conf = ref_placement.configure(tdb.url)
        with ref_placement.client(conf) as client:
            # the app syncs the schema, traits and classes on first use
            assert client.get("/").status_code == 200
            if scenario == "trees":
                ref_placement.create_custom_traits(client,
                                                   trees.PHYSNET_TRAITS)
                pop = ref_placement.TreePopulator(ref_placement.engine(),
                                                  data)
            else:
                pop = ref_placement.Populator(ref_placement.engine(), data)
            for n in sizes:
                started = time.perf_counter()
                pop.grow_to(n, progress=lambda k: harness.log(
                    "placement %s %s: %d providers inserted", scenario,
                    args.db, k))
                dbs.analyze(ref_placement.engine())
                populate_s = time.perf_counter() - started
                row = {"n": n, "populate_s": populate_s,
                       "providers": _providers(data, n, scenario)}
                if n == sizes[0] and n <= args.check_hosts:
                    row["answer"] = _placement_answer(
                        client, url_all, sharing_providers(data, scenario))
                row.update(_time_placement(args, client, url, body_of))
                rows.append(row)
                harness.log("placement %s %s N=%d: GET %.1f ms, PUT %.1f "
                            "ms (%d candidates; populated in %.1fs)",
                            scenario, args.db, n, row["get"]["p50"],
                            row["put"]["p50"], row["candidates"],
                            populate_s)
    return {"side": "reference", "db": args.db, "scenario": scenario,
            "rows": rows, "digest": digest,
            "versions": ref_placement.version()}


def _providers(data, n, scenario):
    return data.provider_count(n) if scenario == "trees" else n


def _placement_mapping(allocation_request):
    return {rp: body["resources"]
            for rp, body in allocation_request["allocations"].items()}


def _placement_answer(client, url, sharing):
    resp = client.get(url)
    assert resp.status_code == 200, (resp.status_code, resp.text[:300])
    return answer_digest(map(_placement_mapping,
                             resp.json()["allocation_requests"]), sharing)


def _time_placement(args, client, url, body_of):
    """GET (after a warm-up) and PUT of the candidates it returned; the
    GET's process CPU time too (Placement runs in this process)."""
    import uuid as uuidlib

    started = time.perf_counter()
    resp = client.get(url)  # warm-up, and the candidates to claim
    warm_s = time.perf_counter() - started
    assert resp.status_code == 200, (resp.status_code, resp.text[:300])
    found = resp.json()["allocation_requests"]
    assert found, "Placement found no candidate: %s" % url
    targets = distinct_targets(found, _placement_mapping)

    cpu_get = []

    def get():
        used = time.process_time()
        r = client.get(url)
        assert r.status_code == 200, r.status_code
        cpu_get.append(time.process_time() - used)
        return r.content

    gc.collect()
    # three queries if they are not too slow, else as many as fit in
    # --get-cap (at least one): a query is never interrupted, which would
    # break the app's database connection
    reps = max(1, min(3, int(args.get_cap / max(warm_s, 1e-3))))
    lat_get = harness.repeat(get, min(args.get_seconds, args.get_cap),
                             min_reps=reps, max_reps=args.max_reps)
    seq = iter(range(10 ** 9))

    def put():
        k = next(seq)
        r = client.put("/allocations/%s" % uuidlib.uuid4(),
                       json=body_of(targets[k % len(targets)]))
        assert r.status_code == 204, (r.status_code, r.text[:300])

    lat_put = harness.repeat(put, args.claim_seconds,
                             min_reps=min(10, len(targets)),
                             max_reps=min(args.max_reps, len(targets)))
    return {"candidates": len(found), "get": harness.summary_ms(lat_get),
            "get_cpu": harness.summary_ms(cpu_get),
            "put": harness.summary_ms(lat_put)}


# -- Gantt ---------------------------------------------------------------


class GanttTreePopulator:
    """Bulk-inserts hosts of a :class:`trees.TreeCloud` into Gantt's schema:
    what the agents' reports (``save_report``: the compute roots with their
    children and host reports), the pools' owners (``save_provider``:
    provider reports) and earlier claims would have left there."""

    def __init__(self, db, tc):
        from gantt.db import models

        self.db = db
        self.tc = tc
        self.t = models.Base.metadata.tables
        self.now = datetime.datetime.utcnow().replace(microsecond=0)
        self.done = 0

    def grow_to(self, count, batch=2000, progress=None):
        """Insert the hosts (and pools) not inserted yet, up to ``count``
        hosts."""
        trees.grow(self, count, batch, progress)
        if self.db.backend == "postgresql":
            with self.db.begin() as conn:
                conn.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence("
                    "'resource_providers', 'id'), "
                    "(SELECT max(id) FROM resource_providers))")
        dbs.analyze(self.db.engine)
        return self

    def _insert(self, lo, hi):
        rows = {name: [] for name in (
            "resource_providers", "host_reports", "provider_reports",
            "inventories", "provider_traits", "provider_aggregates",
            "consumers", "allocations")}
        for p in self.tc.providers_upto(lo, hi):
            self._provider_rows(p, rows)
        for consumer, _host, alloc in self.tc.consumers_upto(lo, hi):
            rows["consumers"].append({
                "uuid": consumer, "project_id": fleet.PROJECT_ID,
                "user_id": fleet.USER_ID, "generation": 0,
                "instance_group_uuid": None, "created_at": self.now})
            for uuid, amounts in alloc.items():
                rp_id = self.tc.by_uuid[uuid]["id"]
                rows["allocations"] += [{
                    "resource_provider_id": rp_id, "consumer_uuid": consumer,
                    "resource_class": rc, "used": used,
                    "created_at": self.now} for rc, used in amounts.items()]
        with self.db.begin() as conn:
            for name, values in rows.items():
                for k in range(0, len(values), 5000):
                    conn.execute(self.t[name].insert(), values[k:k + 5000])

    def _provider_rows(self, p, rows):
        import gantt_env

        rp_id = p["id"]
        rows["resource_providers"].append({
            "id": rp_id, "uuid": p["uuid"], "name": p["name"],
            "generation": 1, "root_provider_id": p["root_id"],
            "parent_provider_id": p["parent_id"], "created_at": self.now})
        if p["kind"] == "root":
            host = self.tc.hosts[p["host"]]
            rows["host_reports"].append({
                "resource_provider_id": rp_id, "host": host["name"],
                "nodename": host["name"], "cell_uuid": gantt_env.CELL_UUID,
                "availability_zone": host["zone"],
                "disabled": host["disabled"], "report_sequence": 1,
                "num_instances": gantt_env.num_instances(host),
                "num_io_ops": host["io_ops"],
                "details": json.dumps({
                    "capabilities": gantt_env.capabilities(host),
                    "stats": gantt_env.stats(host), "metrics": {}}),
                "agent_updated_at": None, "received_at": self.now})
        elif p["kind"] == "pool":
            rows["provider_reports"].append({
                "resource_provider_id": rp_id, "report_sequence": 1,
                "received_at": self.now})
        for rc, (total, reserved, lo, hi, step, ratio) in sorted(
                p["inventories"].items()):
            rows["inventories"].append({
                "resource_provider_id": rp_id, "resource_class": rc,
                "total": total, "reserved": reserved, "min_unit": lo,
                "max_unit": hi, "step_size": step, "allocation_ratio": ratio})
        rows["provider_traits"] += [
            {"resource_provider_id": rp_id, "trait": t} for t in p["traits"]]
        rows["provider_aggregates"] += [
            {"resource_provider_id": rp_id, "aggregate_uuid": a}
            for a in p["aggregates"]]


def tree_spec(tc):
    """The tree request (:meth:`trees.TreeCloud.request`) as a Gantt
    RequestSpec: the unsuffixed disk from the flavor, the granular groups
    as RequestGroups."""
    from gantt.objects import request_spec as rs

    req = tc.request()
    unsuffixed = next(r for s, r, _t in req["groups"] if not s)
    f = fleet.FLAVOR
    return rs.RequestSpec(
        instance_uuid=fleet.make_uuid(2, 4), project_id=req["project_id"],
        user_id=req["user_id"], num_instances=1,
        flavor=rs.Flavor(
            name="sriov.numa", vcpus=0, memory_mb=0,
            root_gb=unsuffixed["DISK_GB"], ephemeral_gb=0, swap=0,
            extra_specs=dict(f["extra_specs"])),
        image=rs.ImageMeta(id=fleet.make_uuid(7, 4), name="ubuntu-24.04",
                           properties=dict(fleet.IMAGE_PROPERTIES)),
        request_groups=[
            rs.RequestGroup(suffix=s, resources=dict(r),
                            required_traits=list(t))
            for s, r, t in req["groups"] if s],
        group_policy=req["group_policy"],
        same_subtree=[list(s) for s in req["same_subtree"]],
        root_forbidden=list(req["root_forbidden"]))


def gantt_side(args):
    import gantt_env

    harness.require_services(args.db)
    scenario = _one_scenario(args)
    sizes = _sizes(args)
    if scenario == "trees":
        data = trees.build(sizes[-1])
        spec = tree_spec(data)
        digest = trees.digest(data)
    else:
        data = fleet.build(sizes[-1])
        spec = gantt_env.request_spec(data, group=False)
        digest = fleet.digest(data)
    rows = []
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        if scenario == "trees":
            pop = GanttTreePopulator(db, data)
        else:
            pop = gantt_env.Populator(db, data)
        for n in sizes:
            started = time.perf_counter()
            pop.grow_to(n, progress=lambda k: harness.log(
                "gantt %s %s: %d %s inserted", scenario, args.db, k,
                "providers" if scenario == "trees" else "hosts"))
            populate_s = time.perf_counter() - started
            row = {"n": n, "populate_s": populate_s,
                   "providers": _providers(data, n, scenario)}
            # the answers are compared at the first size only
            sharing = (sharing_providers(data, scenario)
                       if n == sizes[0] and n <= args.check_hosts else None)
            row.update(_time_gantt(args, tdb.url, db, spec, scenario,
                                   data.hosts[:n], sharing))
            rows.append(row)
            harness.log("gantt %s %s N=%d: select_destinations %.2f ms "
                        "(p99 %.2f), claim %.2f ms, get_allocation_"
                        "candidates %.2f ms (cache loaded in %.2fs, "
                        "populated in %.1fs)", scenario, args.db, n,
                        row["select"].get("p50", float("nan")),
                        row["select"].get("p99", float("nan")),
                        row["claim"]["p50"], row["candidates_ms"]["p50"],
                        row["load_s"], populate_s)
            gc.collect()
        db.dispose()
    return {"side": "gantt", "db": args.db, "scenario": scenario,
            "rows": rows, "digest": digest,
            "versions": gantt_env.gantt_versions()}


def _time_gantt(args, url, db, spec, scenario, hosts, sharing):
    """Load a worker's cache, list every candidate (unless ``sharing``,
    the sharing providers, is None), then time select_destinations, the
    claim alone and get_allocation_candidates."""
    import uuid as uuidlib

    import gantt_env

    from gantt import scheduler as scheduler_mod

    conf = gantt_env.make_conf(**{"database.connection": url,
                                  "scheduler.service_down_time": 3600})
    sched = scheduler_mod.build(conf, db)
    mgr = sched.placer
    started = time.perf_counter()
    sched.stats.load_cache()
    out = {"load_s": time.perf_counter() - started}
    if sharing is not None:
        every = mgr.get_allocation_candidates(spec, limit=10 ** 6)
        out["answer"] = answer_digest(
            (c.allocation_request.as_mapping() for c in every), sharing)
    out["candidates"] = len(mgr.get_allocation_candidates(spec, limit=1000))

    def place():
        mgr.select_destinations(spec, [str(uuidlib.uuid4())],
                                return_alternates=False)

    seq = iter(range(10 ** 9))
    maps = []

    def claim():
        sched.claims.claimer.claim(
            str(uuidlib.uuid4()), maps[next(seq) % len(maps)],
            project_id=fleet.PROJECT_ID, user_id=fleet.USER_ID)

    def candidates():
        mgr.get_allocation_candidates(spec, limit=1000)

    place()  # warm-up
    gc.collect()
    lat_sel = []
    try:
        with harness.time_limit(args.gantt_cap):
            harness.repeat(place, args.get_seconds, min_reps=5,
                           max_reps=args.max_reps, into=lat_sel)
    except harness.Timeout:
        pass
    out["select"] = harness.summary_ms(lat_sel)
    # claim targets as the cache now sees the room (select claimed some)
    maps.extend(_claim_targets(mgr, spec, scenario, hosts))
    out["claim"] = harness.summary_ms(harness.repeat(
        claim, args.claim_seconds, min_reps=min(10, len(maps)),
        max_reps=min(args.max_reps, len(maps))))
    out["candidates_ms"] = harness.summary_ms(harness.repeat(
        candidates, args.claim_seconds, min_reps=3,
        max_reps=args.max_reps))
    return out


def _claim_targets(mgr, spec, scenario, hosts):
    """What the claim loop claims, one after the other."""
    if scenario == "flat":
        return [{u: {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 40}}
                for u in _roomiest(hosts, 200)]
    maps = distinct_targets(
        c.allocation_request.as_mapping()
        for c in mgr.get_allocation_candidates(spec, limit=1000))
    assert maps, "Gantt found no candidate"
    return maps


def _roomiest(hosts, count):
    """The uuids of the enabled hosts with the most free memory."""
    free = sorted(((fleet.capacity(h)["MEMORY_MB"] - h["used"]["MEMORY_MB"],
                    h["uuid"]) for h in hosts if not h["disabled"]),
                  reverse=True)
    return [u for _f, u in free[:count]]


# -- the two sides together ---------------------------------------------


def jobs(args):
    out = []
    for db in [d for d in args.dbs.split(",") if d]:
        for scenario in _scenarios(args):
            key = db if scenario == "flat" else "%s:%s" % (db, scenario)
            for side in ("reference", "gantt"):
                out.append(("%s:%s" % (side, key), side,
                            ["--db", db, "--scenario", scenario]))
    return out


def _pairs(results):
    """``[(scenario, db, gantt result, reference result)]`` in run order
    (keys ``side:db`` for the flat scenario, ``side:db:scenario`` for the
    others)."""
    out = []
    for key, res in results.items():
        side, rest = key.split(":", 1)
        if side == "gantt" and "reference:" + rest in results:
            db, _sep, scenario = rest.partition(":")
            out.append((scenario or "flat", db, res,
                        results["reference:" + rest]))
    return out


def _rows(results):
    """``(scenario, db, placement row, gantt row, same input)`` per size
    measured by both sides."""
    for scenario, db, g, ref in _pairs(results):
        gr = {r["n"]: r for r in g["rows"]}
        for r in ref["rows"]:
            if r["n"] in gr:
                yield (scenario, db, r, gr[r["n"]],
                       g["digest"] == ref["digest"])


def _ratio(r, x):
    sel = x["select"]
    if not sel.get("n"):
        return float("nan")
    return (r["get"]["p50"] + r["put"]["p50"]) / sel["p50"]


def _target(r, x):
    """(target text, met) for a row at the issue's size, else (None,
    None)."""
    providers = r.get("providers", r["n"])
    if providers < TARGET_PROVIDERS:
        return None, None
    sel = x["select"]
    met = bool(sel.get("n")) and _ratio(r, x) >= TARGET_RATIO and (
        sel["p99"] <= TARGET_P99_MS)
    return ">= %dx, p99 <= %g ms" % (TARGET_RATIO, TARGET_P99_MS), met


def table(results):
    out = []
    for scenario, db, r, x, same in _rows(results):
        if not x["select"].get("n"):
            continue
        gms = x["select"]["p50"]
        rms = r["get"]["p50"] + r["put"]["p50"]
        if scenario == "flat":
            label = "candidates+claim %dk hosts, %s" % (
                r["n"] // 1000, harness.DB_LABELS[db])
        else:
            label = "%s %dk hosts/%dk RPs, %s" % (
                SCENARIO_LABELS[scenario], r["n"] // 1000,
                r.get("providers", r["n"]) // 1000, harness.DB_LABELS[db])
        target, met = _target(r, x)
        row = {"label": label, "gantt": "%.2f ms" % gms,
               "reference": "%.0f ms" % rms, "ratio": rms / gms,
               "higher_is_better": False, "target": target, "met": met,
               "same_input": same}
        if target:
            row["note"] = "Gantt p99 %.2f ms" % x["select"]["p99"]
        out.append(row)
    return out


def show(results):
    print("\nCandidates + claim per request, ms p50 (p99); Placement: GET "
          "allocation_candidates + PUT allocations; Gantt: "
          "select_destinations in-process (incl. claim), the claim alone "
          "and get_allocation_candidates; ratio: (GET + PUT) / select; "
          "cands: candidates returned (limit 1000), Placement/Gantt; "
          "answers: every candidate (no limit) at the first size, the "
          "same on both sides")
    print("%-13s %-10s %9s %6s %11s %18s %8s %18s %8s %8s %6s %6s %7s" % (
        "scenario", "db", "providers", "hosts", "cands P/G",
        "Placement GET", "PUT", "Gantt select", "claim", "G cands",
        "ratio", "same", "answers"))
    for scenario, db, r, x, same in _rows(results):
        print("%-13s %-10s %9d %6d %11s %18s %8s %18s %8s %8s %5.0fx "
              "%6s %7s" % (
                  SCENARIO_LABELS.get(scenario, scenario),
                  harness.DB_LABELS[db], r.get("providers", r["n"]),
                  r["n"], "%d/%d" % (r["candidates"],
                                     x.get("candidates", -1)),
                  _cell(r["get"]), _p50(r["put"]), _cell(x["select"]),
                  _p50(x["claim"]), _p50(x.get("candidates_ms", {})),
                  _ratio(r, x), "yes" if same else "NO",
                  _same_answers(r, x)))
    notes = [_answer_note(scenario, db, r, x)
             for scenario, db, r, x, _same in _rows(results)]
    for note in filter(None, notes):
        print("answers differ: " + note)


def _same_answers(r, x):
    a, b = r.get("answer"), x.get("answer")
    if a is None or b is None:
        return "-"
    return "yes" if a["digest"] == b["digest"] else "NO"


def _answer_note(scenario, db, r, x):
    """How the two whole answers differ, in words (None if they don't)."""
    a, b = r.get("answer"), x.get("answer")
    if a is None or b is None or a["digest"] == b["digest"]:
        return None
    pa, ga = set(a["hashes"]), set(b["hashes"])
    shared = set(a["shared"]) | set(b["shared"])
    text = ("%s, %s, %d hosts: Placement %d candidates, Gantt %d; %d "
            "only Placement's, %d only Gantt's" % (
                SCENARIO_LABELS.get(scenario, scenario),
                harness.DB_LABELS[db], r["n"], len(pa), len(ga),
                len(pa - ga), len(ga - pa)))
    if (pa - ga) | (ga - pa) <= shared:
        text += ("; all of those take DISK_GB from a sharing pool, the "
                 "candidates without one are the same")
        if not pa - ga:
            text += (" (Placement pairs each pool with one host only when "
                     "the unsuffixed group comes from the pool alone: see "
                     "trees.py)")
    return text


def _cell(s):
    if not s.get("n"):
        return "timeout"
    return "%.2f (%.2f)" % (s["p50"], s["p99"])


def _p50(s):
    if not s.get("n"):
        return "-"
    return "%.2f" % s["p50"]


def add_arguments(parser):
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help="numbers of hosts, grown in one database "
                             "(default %(default)s)")
    parser.add_argument("--dbs", default=DEFAULT_DBS,
                        help="databases to run on, in this order")
    parser.add_argument("--db", default="sqlite",
                        help="(with --side) the one database of this run")
    parser.add_argument("--scenario", default="flat",
                        help="comma-separated scenarios: flat (one "
                             "provider per host), trees (NUMA + SR-IOV "
                             "provider trees and sharing DISK_GB pools, "
                             "5 providers per host; see trees.py); with "
                             "--side, exactly one (default %(default)s)")
    parser.add_argument("--get-seconds", type=float, default=4.0,
                        help="time budget for the candidates query loop "
                             "(at least 3 reps)")
    parser.add_argument("--claim-seconds", type=float, default=2.0,
                        help="time budget for the claim (PUT) loops and "
                             "Gantt's get_allocation_candidates loop")
    parser.add_argument("--max-reps", type=int, default=500)
    parser.add_argument("--gantt-cap", type=float, default=30.0)
    parser.add_argument("--get-cap", type=float, default=20.0,
                        help="fewer than 3 of Placement's GETs (at least "
                             "one) when a GET takes more than a third of "
                             "this (s)")
    parser.add_argument("--check-hosts", type=int, default=1000,
                        help="if the first size is at most this many "
                             "hosts, both sides also list every candidate "
                             "there (no limit) and the table compares the "
                             "answers (default %(default)s)")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Without --side, runs each side of each scenario on each "
               "database in its own interpreter and prints the table.")
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "reference": reference_side}, show,
                             jobs=jobs)


if __name__ == "__main__":
    sys.exit(main())
