"""Packing: instances placed before the first refusal, against the bound;
and what each policy holds under churn.

Fixed, seeded fleets and flavor streams are run through Gantt's real
engine in-process (``Placer.select_destinations``: filters,
weighers and the claim in a SQLite database; set up as ``gantt-simulate``
does, :mod:`gantt.simulate.replay`), one instance per call until the
first NoValidHost, under each packing policy and the first-fit baseline.
Each count is shown as a share of the LP bound on the stream's prefix
(``packing_bound.py``), with each class's utilisation at the refusal; on
a 20-host fleet a time-limited MILP gives the exact figure the LP bound
approximates. The churn table (``packing_churn.py``) replays arrivals
and deletions at a steady population.

    nice .venv/bin/python benchmarks/packing.py     # about 25 minutes
    .venv/bin/python benchmarks/packing.py --hosts 60 --only spread,stack
    nice .venv/bin/python benchmarks/packing.py --churn-only

Needs scipy (``pip install -e .[bench]``).
"""

import argparse
import dataclasses
import random
import time
import uuid

import packing_bound
import packing_churn

from gantt import exception
from gantt.scheduler.pipeline import packing as packing_policies
from gantt.simulate import fleet as fleet_mod
from gantt.simulate import replay
from gantt.simulate import workload

CPU_RATIO = 4.0
RESERVED_MB = 4096


def _shape(name, cores, memory_mb, disk_gb):
    return fleet_mod.Shape(name, {"VCPU": (cores, 0, CPU_RATIO),
                                  "MEMORY_MB": (memory_mb, RESERVED_MB, 1.0),
                                  "DISK_GB": (disk_gb, 0, 1.0)})


GENERAL = _shape("general", 32, 262144, 2000)
RAM_RICH = _shape("ram-rich", 32, 786432, 1000)
CPU_DISK_RICH = _shape("cpu-disk-rich", 64, 262144, 6000)

#: fleet name -> ((shape, share of the hosts), ...)
FLEETS = {
    "mixed": ((GENERAL, 0.5), (RAM_RICH, 0.25), (CPU_DISK_RICH, 0.25)),
    "uniform": ((GENERAL, 1.0),),
}

M1, SKEWED = workload.M1, workload.SKEWED


def _no_disk(flavors):
    return tuple(dataclasses.replace(f, name=f.name + "-bfv", disk_gb=0)
                 for f in flavors)


#: stream name -> ((flavor, weight), ...)
STREAMS = {
    "mixed": tuple(zip(M1 + SKEWED, (25, 25, 15, 8, 9, 9, 9), strict=True)),
    "uniform": tuple(zip(M1, (30, 30, 25, 15), strict=True)),
    # boot from volume: no local disk, so disk-heavy means nothing
    "bfv": tuple(zip(_no_disk(M1 + SKEWED[:2]), (25, 25, 15, 8, 9, 9),
                     strict=True)),
}

BALANCED_KEY = "balanced_allocation_weight_multiplier"
#: the shipped packing policies, by name
POLICIES = packing_policies.POLICIES
#: what the table shows: every shipped policy, then the baseline
RUNS = (*POLICIES, replay.FIRST_FIT)
COMBINATIONS = (("mixed", "mixed"), ("mixed", "bfv"), ("mixed", "uniform"),
                ("uniform", "mixed"), ("uniform", "uniform"))


def fleet(name, hosts):
    """A fleet of ``hosts``, its shapes in a fixed order (first-fit's)."""
    shapes = []
    for shape, share in FLEETS[name]:
        shapes += [shape] * round(hosts * share)
    shapes = shapes[:hosts] + [FLEETS[name][0][0]] * (hosts - len(shapes))
    return fleet_mod.Fleet(tuple(fleet_mod.Host("%s-%03d" % (s.name, i), s)
                                 for i, s in enumerate(shapes)))


def stream(name, length, seed=7):
    """``length`` flavors drawn from a stream's mix, seeded."""
    flavors, weights = zip(*STREAMS[name], strict=True)
    return random.Random(seed).choices(flavors, weights, k=length)


def conf_for(policy, balanced=None):
    """Gantt's default options with ``policy`` laid over them."""
    conf = replay.make_conf(policy)
    if balanced is not None and policy in POLICIES and (
            BALANCED_KEY in POLICIES[policy].multipliers):
        conf.set_override(BALANCED_KEY, balanced, "filter_scheduler")
    return conf


@dataclasses.dataclass(frozen=True)
class Fill:
    """One run: instances placed before the first refusal, and each
    class's used share of the fleet's capacity then."""

    placed: int
    used: dict
    seconds: float


def fill(policy, hosts, flavors, balanced=None):
    """Place ``flavors`` in order on a fresh fleet until one is refused."""
    started = time.perf_counter()
    with replay.database() as db:
        mgr = replay.engine(conf_for(policy, balanced), db, hosts)
        placed = _place_until_refused(mgr, flavors)
        used = _utilisation(mgr)
    return Fill(placed, used, time.perf_counter() - started)


def _place_until_refused(mgr, flavors):
    for placed, flavor in enumerate(flavors):
        try:
            mgr.placer.select_destinations(replay.spec_of(flavor),
                                           [str(uuid.uuid4())],
                                           return_alternates=False)
        except exception.NoValidHost:
            return placed
    raise ValueError("the whole stream was placed: make it longer")


def _utilisation(mgr):
    used, capacity = {}, {}
    for state in mgr.operator.get_host_states():
        for r in state.resources:
            cap = (r.total - r.reserved) * r.allocation_ratio
            used[r.resource_class] = used.get(r.resource_class, 0) + r.used
            capacity[r.resource_class] = (
                capacity.get(r.resource_class, 0) + cap)
    return {rc: used[rc] / capacity[rc] for rc in packing_bound.CLASSES}


def _capacities(hosts):
    return [tuple(h.shape.capacity(rc) for rc in packing_bound.CLASSES)
            for h in hosts.hosts]


def _length(shapes):
    """A stream long enough to outlast any fleet of ``shapes``."""
    return int(sum(c[1] for c in _capacities(shapes)) / 2048) + 10


def measure(args, policies):
    """``[(fleet, stream, bound, {policy: Fill})]`` on the large fleet."""
    out = []
    for fleet_name, stream_name in COMBINATIONS:
        shapes = fleet(fleet_name, args.hosts)
        flavors = stream(stream_name, _length(shapes))
        bound = packing_bound.lp_bound(_capacities(shapes), flavors)
        fills = {p: fill(p, shapes, flavors, args.balanced_multiplier)
                 for p in policies}
        out.append((fleet_name, stream_name, bound, fills))
        _log("%s fleet, %s stream: LP bound %d; %s", fleet_name,
             stream_name, bound, ", ".join(
                 "%s %d (%.0fs)" % (p, f.placed, f.seconds)
                 for p, f in fills.items()))
    return out


def measure_small(args, policies):
    """The LP and MILP bounds and each policy on a 20-host mixed fleet."""
    shapes = fleet("mixed", args.milp_hosts)
    flavors = stream("mixed", _length(shapes))
    lp = packing_bound.lp_bound(_capacities(shapes), flavors)
    milp = packing_bound.milp_bound(_capacities(shapes), flavors[:lp + 5],
                                    args.milp_seconds)
    fills = {p: fill(p, shapes, flavors, args.balanced_multiplier)
                 for p in policies}
    _log("%d-host mixed fleet: LP %d, MILP best %d bound %d%s",
         len(shapes.hosts),
         lp, milp.best, milp.bound, "" if milp.optimal else " (time limit)")
    return lp, milp, fills


def _log(fmt, *args):
    print(fmt % args, flush=True)


def _pct(value):
    return "%.0f %%" % (100.0 * value)


def table(rows, policies):
    """The policy x fleet table, as reStructuredText."""
    head = ("fleet / stream", "LP bound", "policy", "placed", "of bound",
            "VCPU", "RAM", "disk")
    lines = [head]
    for fleet_name, stream_name, bound, fills in rows:
        for i, policy in enumerate(policies):
            f = fills[policy]
            lines.append((
                "%s / %s" % (fleet_name, stream_name) if i == 0 else "",
                str(bound) if i == 0 else "", policy, str(f.placed),
                _pct(f.placed / bound), _pct(f.used["VCPU"]),
                _pct(f.used["MEMORY_MB"]), _pct(f.used["DISK_GB"])))
    return _rst(lines)


def small_table(lp, milp, fills):
    lines = [("policy", "placed", "of LP bound", "of MILP bound")]
    for policy, f in fills.items():
        lines.append((policy, str(f.placed), _pct(f.placed / lp),
                      _pct(f.placed / milp.bound)))
    note = ("LP bound %d; MILP best %d, bound %d (%s; limit %.0f s)"
            % (lp, milp.best, milp.bound,
               "optimal" if milp.optimal else "time limit", milp.seconds))
    return note + "\n\n" + _rst(lines)


def _rst(lines):
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    rule = "  ".join("=" * w for w in widths)
    text = [rule, _row(lines[0], widths), rule]
    text += [_row(row, widths) for row in lines[1:]]
    return "\n".join(text + [rule])


def _row(row, widths):
    cells = (v.ljust(w) for v, w in zip(row, widths, strict=True))
    return "  ".join(cells).rstrip()


def _churn_fleets(args):
    """``(fleet, stream, hosts, LP bound, offered population)`` of each
    churn combination."""
    for fleet_name, stream_name in packing_churn.COMBINATIONS:
        hosts = fleet(fleet_name, args.churn_hosts)
        bound = packing_bound.lp_bound(
            _capacities(hosts), stream(stream_name, _length(hosts)))
        yield (fleet_name, stream_name, hosts, bound,
               int(bound * args.churn_load))


def measure_churn(args, policies):
    """``[(fleet, stream, bound, population, {policy: Churn})]``."""
    out = []
    for fleet_name, stream_name, hosts, bound, population in _churn_fleets(
            args):
        events = packing_churn.events_for(STREAMS[stream_name], population)
        runs = {}
        for policy in policies:
            runs[policy] = packing_churn.run(
                policy, hosts, events, population,
                conf_for(policy, args.balanced_multiplier))
            _log("churn, %s fleet, %s stream, %s: held %.0f of %d, "
                 "refused %.1f %% (%.0fs)", fleet_name, stream_name, policy,
                 runs[policy].steady.alive, population,
                 100 * runs[policy].refused, runs[policy].seconds)
        out.append((fleet_name, stream_name, bound, population, runs))
    return out


def measure_seeds(args, policies):
    """``[(fleet, stream, {seed: {policy: Churn}})]``, memory claims."""
    seeds = [int(s) for s in args.churn_seeds.split(",")]
    out = []
    for fleet_name, stream_name, hosts, _bound, population in (
            _churn_fleets(args)):
        by_seed = {}
        for seed in seeds:
            events = packing_churn.events_for(STREAMS[stream_name],
                                              population, seed)
            by_seed[seed] = {p: packing_churn.run(
                p, hosts, events, population,
                conf_for(p, args.balanced_multiplier), mode="memory")
                for p in policies}
            _log("churn seed %d, %s fleet, %s stream: %s", seed, fleet_name,
                 stream_name, ", ".join(
                     "%s %.0f" % (p, c.steady.alive)
                     for p, c in by_seed[seed].items()))
        out.append((fleet_name, stream_name, by_seed))
    return seeds, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--milp-hosts", type=int, default=20)
    parser.add_argument("--milp-seconds", type=float, default=60.0)
    parser.add_argument("--balanced-multiplier", type=float, default=None,
                        help="balanced_allocation_weight_multiplier of the "
                             "balanced policies (default: %s)"
                        % POLICIES["balanced"].multipliers[BALANCED_KEY])
    parser.add_argument("--only", default=",".join(RUNS),
                        help="comma-separated policies (default: all, and "
                             "%s)" % replay.FIRST_FIT)
    parser.add_argument("--skip-small", action="store_true",
                        help="no 20-host LP/MILP comparison")
    parser.add_argument("--churn-hosts", type=int, default=100)
    parser.add_argument("--churn-load", type=float, default=1.0,
                        help="offered population, as a share of the LP "
                             "bound filled from empty (default 1)")
    parser.add_argument("--churn-only", action="store_true")
    parser.add_argument("--churn-seeds", default="",
                        help="comma-separated seeds: instances held per "
                             "seed against first-fit, claims in memory "
                             "(e.g. 1,2,3)")
    parser.add_argument("--skip-churn", action="store_true")
    args = parser.parse_args(argv)
    policies = [p for p in args.only.split(",") if p]
    if not args.churn_only:
        rows = measure(args, policies)
        print("\n" + table(rows, policies))
        if not args.skip_small:
            print("\n" + small_table(*measure_small(args, policies)))
    if not args.skip_churn:
        print("\n" + _rst(packing_churn.table(
            measure_churn(args, policies))))
    if args.churn_seeds:
        seeds, rows = measure_seeds(args, policies)
        print("\n" + _rst(packing_churn.seeds_table(rows, seeds)))


if __name__ == "__main__":
    main()
