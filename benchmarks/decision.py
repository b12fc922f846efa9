"""1. Decision time per request: Gantt vs Nova's FilterScheduler pass.

Nova side (reference venv): ``SchedulerManager._get_sorted_hosts`` with
Nova's default filters and all 13 weighers over HostStates that Nova's own
HostManager built from the shared cloud (see ``ref_nova.py``). The HostState
refresh Nova does before every request is timed once and shown apart.

Gantt side (Gantt venv): the same cloud in a worker's host cache, and the
path ``select_destinations`` takes before its claim: a ``HostView``, then
``candidates.for_request``, then ``Pipeline.rank`` (filters and weighers)
and ``Picker.pick``. Gantt runs its default filters plus every Nova default
filter it registers under the same name, and its default weighers plus any
Nova weigher it registers; both sides print the list they ran.

    python benchmarks/decision.py [--sizes 1000,10000,100000]
"""

import argparse
import gc
import os
import sys
import time

import fleet
import harness

DEFAULT_SIZES = "1000,10000,100000"


def _sizes(args):
    return [int(x) for x in args.sizes.split(",") if x]


def gantt_side(args):
    import random

    import gantt_env

    from gantt import scheduler as scheduler_mod
    from gantt.scheduler.pipeline import candidates
    from gantt.scheduler.pipeline import cycle as cycle_mod
    from gantt.scheduler.pipeline import translate

    conf = gantt_env.make_conf()
    now = 1.0e9
    rows = []
    timed_out = False
    for n in _sizes(args):
        if timed_out:
            rows.append({"n": n, "timeout_s": args.gantt_cap})
            continue
        started = time.perf_counter()
        cloud = fleet.build(n)
        digest = fleet.digest(cloud)
        rss_base = harness.rss_mib()
        mgr = scheduler_mod.build(conf, None, clock=lambda: now,
                                  rng=random.Random(1)).placer
        gantt_env.fill_cache(mgr.cache, cloud, now)
        request = translate.from_spec(
            gantt_env.request_spec(cloud), [fleet.make_uuid(1, 7)],
            gantt_env.NoLookup())
        build_s = time.perf_counter() - started
        last = {}

        def decide(mgr=mgr, request=request, last=last):
            view = mgr.view()
            cycle = cycle_mod.CycleState(
                request, view,
                candidates=candidates.for_request(view, request))
            ranking = mgr.pipeline.rank(cycle)
            row, _weight = mgr.picker.pick(ranking.weighing)
            last.update(view=view, outcome=ranking.outcome, row=row)

        row = {"n": n, "digest": digest, "build_s": build_s,
               "rss_mib": harness.rss_mib() - rss_base}
        rows.append(row)
        lat = []
        prof = gantt_env.Profile(os.getpid(), args.profile)
        try:
            with harness.time_limit(args.gantt_cap):
                decide()
                gc.collect()
                with prof:
                    harness.repeat(decide, args.gantt_seconds, min_reps=3,
                                   max_reps=args.max_reps, into=lat)
        except harness.Timeout:
            if not lat:
                timed_out = True
                row["timeout_s"] = args.gantt_cap
                harness.log("gantt N=%d: one decision took over %.0f s; "
                            "larger sizes skipped", n, args.gantt_cap)
                continue
        row.update(decision=harness.summary_ms(lat), profile=prof.result,
                   passed=int(last["outcome"].mask.sum()),
                   chosen=str(last["view"].hosts[last["row"]]),
                   removed=last["outcome"].removed)
        harness.log("gantt N=%d: %.3f ms p50 over %d reps (setup %.1fs)",
                    n, row["decision"]["p50"], len(lat), build_s)
        del mgr, cloud, request, last
        gc.collect()
    filters = list(conf.filter_scheduler.enabled_filters)
    weighers = list(conf.filter_scheduler.enabled_weighers)
    return {"side": "gantt", "rows": rows, "filters": filters,
            "weighers": weighers, "versions": _gantt_versions()}


def _gantt_versions():
    import gantt_env
    return gantt_env.gantt_versions()


def reference_side(args):
    import ref_nova

    # heartbeats are not refreshed by a cell-DB read here: keep them valid
    # for the whole (long, at 1e5 hosts) measurement
    ref_nova.CONF.set_override("service_down_time", 3600)
    rows = []
    filters = weighers = None
    for n in _sizes(args):
        started = time.perf_counter()
        cloud = fleet.build(n)
        digest = fleet.digest(cloud)
        rss_base = harness.rss_mib()
        sched = ref_nova.NovaScheduler(ref_nova.NovaCloud(cloud))
        build_s = time.perf_counter() - started
        filters, weighers = sched.filters, sched.weighers
        phases = sched.timed_phases()
        s = time.perf_counter()
        states = sched.host_states()
        refresh = time.perf_counter() - s
        rss = harness.rss_mib() - rss_base
        gc.collect()
        last = []

        def sort(sched=sched, states=states, last=last):
            last[:] = [sched.sorted_hosts(states)]

        big = n >= 50000
        lat = harness.repeat(sort, 0 if big else args.nova_seconds,
                             min_reps=1 if big else 3,
                             max_reps=args.max_reps)
        ranked = last[0]
        rows.append({
            "n": n, "digest": digest, "build_s": build_s,
            "refresh_ms": refresh * 1e3, "rss_mib": rss,
            "sorted": harness.summary_ms(lat),
            "filter": harness.summary_ms(phases["filter"]),
            "weigh": harness.summary_ms(phases["weigh"]),
            "passed": len(ranked),
            "chosen": ranked[0].host if ranked else None})
        harness.log("nova N=%d: %.1f ms p50 over %d reps (refresh %.0f ms, "
                    "setup %.1fs)", n, rows[-1]["sorted"]["p50"], len(lat),
                    refresh * 1e3, build_s)
        del sched, states, cloud, last, ranked
        gc.collect()
    return {"side": "reference", "rows": rows, "filters": filters,
            "weighers": weighers,
            "versions": {"nova": ref_nova.version()}}


def table(results):
    """Rows for the ratio table."""
    out = []
    g = {r["n"]: r for r in results["gantt"]["rows"]}
    ref = {r["n"]: r for r in results["reference"]["rows"]}
    for n in sorted(set(g) & set(ref)):
        rm = ref[n]["sorted"]["p50"]
        row = {"label": "decision (filter+weigh) %s hosts" % _n(n),
               "reference": "%s ms" % _ms(rm), "higher_is_better": False,
               "target": ">= 2000x" if n == 10000 else None,
               "same_input": g[n].get("digest") == ref[n]["digest"]}
        if "decision" in g[n]:
            gm = g[n]["decision"]["p50"]
            row.update(gantt="%s ms" % _ms(gm), ratio=rm / gm,
                       met=(rm / gm >= 2000) if n == 10000 else None)
        else:
            cap = g[n]["timeout_s"]
            row.update(gantt="> %.0f s" % cap, ratio=rm / (cap * 1e3),
                       ratio_text="< %.2fx" % (rm / (cap * 1e3)),
                       met=False if n == 10000 else None)
        out.append(row)
    return out


def _n(n):
    return "%dk" % (n // 1000) if n % 1000 == 0 else str(n)


def _ms(value):
    if value >= 100:
        return "%.0f" % value
    if value >= 10:
        return "%.1f" % value
    if value >= 1:
        return "%.2f" % value
    return "%.3f" % value


def show(results):
    g, ref = results["gantt"], results["reference"]
    print("\nDecision time per request (filter + weigh + pick), ms p50 "
          "(p90); RSS growth of the host picture, MiB")
    print("Gantt filters : %s" % ", ".join(g["filters"]))
    print("Gantt weighers: %s" % ", ".join(g["weighers"]))
    print("Nova filters  : %s" % ", ".join(ref["filters"] or []))
    print("Nova weighers : %s" % ", ".join(ref["weighers"] or []))
    print("%8s %18s %7s %6s %18s %9s %7s %6s %9s %5s" % (
        "hosts", "Gantt", "passed", "RSS", "Nova _get_sorted",
        "refresh", "passed", "RSS", "ratio", "same"))
    gr = {r["n"]: r for r in g["rows"]}
    for r in ref["rows"]:
        x = gr.get(r["n"])
        if x is None:
            continue
        nd = r["sorted"]
        if "decision" in x:
            gd = x["decision"]
            gcell = "%s (%s)" % (_ms(gd["p50"]), _ms(gd["p90"]))
            ratio = "%8.0fx" % (nd["p50"] / gd["p50"])
            passed, rss = str(x["passed"]), "%.0f" % x["rss_mib"]
        else:
            gcell, ratio, passed, rss = ("> %.0f s" % x["timeout_s"], "-",
                                         "-", "-")
        print("%8d %18s %7s %6s %18s %9.0f %7d %6.0f %9s %5s" % (
            r["n"], gcell, passed, rss,
            "%s (%s)" % (_ms(nd["p50"]), _ms(nd["p90"])), r["refresh_ms"],
            r["passed"], r["rss_mib"], ratio,
            "yes" if x.get("digest") == r["digest"] else "NO"))


def add_arguments(parser):
    parser.add_argument("--sizes", default=DEFAULT_SIZES)
    parser.add_argument("--nova-seconds", type=float, default=6.0,
                        help="time budget of Nova's timed loop per size "
                             "(at least 3 reps; 1 rep from 50k hosts)")
    parser.add_argument("--gantt-seconds", type=float, default=2.0)
    parser.add_argument("--gantt-cap", type=float, default=30.0,
                        help="give up on a Gantt size whose first decision "
                             "takes longer than this (s)")
    parser.add_argument("--max-reps", type=int, default=2000)
    parser.add_argument("--profile", action="store_true",
                        help="sample the Gantt side with py-spy")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "reference": reference_side}, show)


if __name__ == "__main__":
    sys.exit(main())
