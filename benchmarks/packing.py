"""Packing: instances placed before the first refusal, against the bound.

Fixed, seeded fleets and flavor streams are run through Gantt's real
engine in-process (``Placer.select_destinations``: filters,
weighers and the claim in a SQLite database), one instance per call until
the first NoValidHost, under several weigher policies. Each count is shown
as a share of the LP bound on the stream's prefix (``packing_bound.py``),
with each class's utilisation at the refusal; on a 20-host fleet a
time-limited MILP gives the exact figure the LP bound approximates.

    nice .venv/bin/python benchmarks/packing.py     # about 5 minutes
    .venv/bin/python benchmarks/packing.py --hosts 60 --only spread,stack

Needs scipy (``pip install -e .[bench]``).
"""

import argparse
import dataclasses
import os
import random
import tempfile
import time
import uuid

import gantt_env
import packing_bound

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.objects import compute_node as cn_obj
from gantt.objects import request_spec as rs_obj
from gantt.scheduler.pipeline import packing as packing_policies

CPU_RATIO = 4.0
RESERVED_MB = 4096
NOW = 1.0e9


@dataclasses.dataclass(frozen=True)
class Shape:
    """A host model: physical cores, RAM and local disk."""

    name: str
    cores: int
    memory_mb: int
    disk_gb: int

    def capacity(self):
        """Placement's capacity per class (packing_bound.CLASSES)."""
        return (self.cores * CPU_RATIO, self.memory_mb - RESERVED_MB,
                self.disk_gb)


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    disk_gb: int

    @property
    def amounts(self):
        return {"VCPU": self.vcpus, "MEMORY_MB": self.memory_mb,
                "DISK_GB": self.disk_gb}


GENERAL = Shape("general", 32, 262144, 2000)
RAM_RICH = Shape("ram-rich", 32, 786432, 1000)
CPU_DISK_RICH = Shape("cpu-disk-rich", 64, 262144, 6000)

#: fleet name -> ((shape, share of the hosts), ...)
FLEETS = {
    "mixed": ((GENERAL, 0.5), (RAM_RICH, 0.25), (CPU_DISK_RICH, 0.25)),
    "uniform": ((GENERAL, 1.0),),
}

M1 = (Flavor("m1.small", 1, 2048, 20), Flavor("m1.medium", 2, 4096, 40),
      Flavor("m1.large", 4, 8192, 80), Flavor("m1.xlarge", 8, 16384, 160))
SKEWED = (Flavor("c1.xlarge", 16, 8192, 40),     # CPU-heavy
          Flavor("r1.xlarge", 4, 65536, 40),     # RAM-heavy
          Flavor("d1.large", 2, 4096, 800))      # disk-heavy


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
COMBINATIONS = (("mixed", "mixed"), ("mixed", "bfv"), ("mixed", "uniform"),
                ("uniform", "mixed"), ("uniform", "uniform"))


def fleet(name, hosts):
    """The shapes of a fleet of ``hosts``, in a fixed order."""
    shapes = []
    for shape, share in FLEETS[name]:
        shapes += [shape] * round(hosts * share)
    return shapes[:hosts] + [FLEETS[name][0][0]] * (hosts - len(shapes))


def stream(name, length, seed=7):
    """``length`` flavors drawn from a stream's mix, seeded."""
    flavors, weights = zip(*STREAMS[name], strict=True)
    return random.Random(seed).choices(flavors, weights, k=length)


def conf_for(policy, db_url, balanced=None):
    conf = gantt_env.make_conf(**{"database.connection": db_url})
    settings = packing_policies.settings(
        policy, conf.filter_scheduler.enabled_weighers)
    if balanced is not None and BALANCED_KEY in settings:
        settings[BALANCED_KEY] = balanced
    for name, value in settings.items():
        conf.set_override(name, value, "filter_scheduler")
    return conf


def scheduler(conf, db):
    """Gantt's engine on ``db`` (``gantt.scheduler.build``), its cache
    loaded."""
    sched = scheduler_mod.build(conf, db, clock=lambda: NOW,
                                rng=random.Random(1))
    sched.stats.load_cache()
    return sched


def _node(index, shape):
    name = "%s-%03d" % (shape.name, index)
    total = {"VCPU": (shape.cores, CPU_RATIO, 0),
             "MEMORY_MB": (shape.memory_mb, 1.0, RESERVED_MB),
             "DISK_GB": (shape.disk_gb, 1.0, 0)}
    return cn_obj.ComputeNode(
        uuid=str(uuid.UUID(int=index + 1)), host=name, nodename=name,
        cell_uuid=gantt_env.CELL_UUID, availability_zone=None,
        disabled=False, traits=[], aggregates=[], num_instances=0,
        num_io_ops=0, capabilities={}, report_sequence=1,
        inventories=[cn_obj.Inventory(
            resource_class=rc, total=t, reserved=r, allocation_ratio=ratio)
            for rc, (t, ratio, r) in total.items()])


def _spec(flavor):
    return rs_obj.RequestSpec(
        project_id="packing", user_id="packing", num_instances=1,
        flavor=rs_obj.Flavor(name=flavor.name, vcpus=flavor.vcpus,
                             memory_mb=flavor.memory_mb,
                             root_gb=flavor.disk_gb, ephemeral_gb=0, swap=0,
                             extra_specs={}))


@dataclasses.dataclass(frozen=True)
class Fill:
    """One run: instances placed before the first refusal, and each
    class's used share of the fleet's capacity then."""

    placed: int
    used: dict
    seconds: float


def fill(policy, shapes, flavors, balanced=None):
    """Place ``flavors`` in order on a fresh fleet until one is refused."""
    started = time.perf_counter()
    # in memory where there is a tmpfs: the claims' commits wait on fsync
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="gantt-packing-", dir=shm) as tmp:
        url = "sqlite:///%s/gantt.sqlite" % tmp
        db = gantt_env.gantt_database(url)
        try:
            mgr = scheduler(conf_for(policy, url, balanced), db)
            for i, shape in enumerate(shapes):
                mgr.stats.update_resource_stats(_node(i, shape))
            placed = _place_until_refused(mgr, flavors)
            used = _utilisation(mgr)
        finally:
            db.dispose()
    return Fill(placed, used, time.perf_counter() - started)


def _place_until_refused(mgr, flavors):
    for placed, flavor in enumerate(flavors):
        try:
            mgr.placer.select_destinations(_spec(flavor), [str(uuid.uuid4())],
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


def _capacities(shapes):
    return [shape.capacity() for shape in shapes]


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
    _log("%d-host mixed fleet: LP %d, MILP best %d bound %d%s", len(shapes),
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--milp-hosts", type=int, default=20)
    parser.add_argument("--milp-seconds", type=float, default=60.0)
    parser.add_argument("--balanced-multiplier", type=float, default=None,
                        help="balanced_allocation_weight_multiplier of the "
                             "balanced policies (default: %s)"
                        % POLICIES["balanced"].multipliers[BALANCED_KEY])
    parser.add_argument("--only", default=",".join(POLICIES),
                        help="comma-separated policies (default: all)")
    parser.add_argument("--skip-small", action="store_true",
                        help="no 20-host LP/MILP comparison")
    args = parser.parse_args(argv)
    policies = [p for p in args.only.split(",") if p]
    rows = measure(args, policies)
    print("\n" + table(rows, policies))
    if not args.skip_small:
        print("\n" + small_table(*measure_small(args, policies)))


if __name__ == "__main__":
    main()
