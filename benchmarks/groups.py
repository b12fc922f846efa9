"""Holistic group scheduling: acceptance and speed (issue #23).

Acceptance: a fixed, seeded suite of group requests against partly
filled fleets of 40 to 80 hosts (racks of 5 hosts, rows of 4 racks):
anti-affinity at host and at rack, affinity at row, max-per rack under
tight capacity, each with mixed member shapes. Each group is decided

* sequentially (Gantt's greedy: one member after another, each seeing
  only the members before it, as server groups are placed today),
* holistically (Gantt's joint MILP, ``gantt.scheduler.groups.solve``,
  started from the sequential answer, time budget 1 s), and
* by the exact per-host ILP without a time limit (``groups_exact``,
  an independent formulation: the referee).

Every accepted answer is re-checked from scratch (capacity, filters,
every hard policy); the table counts the groups each accepted.

Speed: a 200-member rack-level anti-affinity group and a 2,000-member
host-level anti-affinity group on 10,000 hosts (500 racks of 20, rows of
25 racks, partly filled), decided by the joint model, against the
sequential answer on the same fleet in the same run. With
``--reserve BACKEND`` (mysql or postgresql) the 200-member group is also
decided and reserved end to end by an in-process GroupService on that
database (10,000 hosts stored; filters, solver and the one claim
transaction).

    python benchmarks/groups.py [--groups 120] [--reserve postgresql]

Needs scipy for the referee (``pip install -e .[bench]``); Gantt's own
solver calls HiGHS through ``highspy``.
"""

import argparse
import os
import statistics
import sys
import time

import groups_exact
import numpy as np

from gantt.scheduler.groups import greedy
from gantt.scheduler.groups import problem as problem_mod
from gantt.scheduler.groups import solve

SEED = 20261125
Policy = problem_mod.Policy
#: (vcpus, memory GiB) of the member shapes
SMALL, LARGE = (2, 4), (8, 16)


def fleet(rng, hosts, rack_size=5, racks_per_row=4, fill=(0.3, 0.8)):
    """(free (hosts, 2), {"rack", "row"} domains) of a partly filled
    fleet of 16/32/48-vCPU hosts (2 GiB per vCPU)."""
    vcpus = rng.choice([16, 32, 48], hosts).astype(float)
    total = np.stack([vcpus, vcpus * 2], axis=1)
    used = np.floor(total * rng.uniform(*fill, (hosts, 1)))
    rack = np.arange(hosts) // rack_size
    return total - used, {"rack": rack, "row": rack // racks_per_row}


def shapes(hosts, counts):
    return tuple(problem_mod.Shape(
        name, count, np.array(size, dtype=float), np.ones(hosts, bool))
        for name, size, count in zip(("small", "large"), (SMALL, LARGE),
                                     counts, strict=True) if count)


KINDS = {
    "anti-affinity at host": lambda rng: (
        (Policy("host", "anti-affinity"),), (rng.integers(6, 20),
                                             rng.integers(3, 12)), (0.4, 0.9),
        "most-spread"),
    "anti-affinity at rack": lambda rng: (
        (Policy("rack", "anti-affinity"),), (rng.integers(2, 8),
                                             rng.integers(2, 8)), (0.5, 0.95),
        "most-spread"),
    "affinity at row": lambda rng: (
        (Policy("row", "affinity"), Policy("host", "anti-affinity")),
        (rng.integers(4, 12), rng.integers(2, 6)), (0.4, 0.9),
        "most-spread"),
    "max-per rack, tight": lambda rng: (
        (Policy("rack", "max-per", limit=2),),
        (rng.integers(6, 16), rng.integers(4, 10)), (0.6, 0.97),
        "fewest-hosts"),
}


def suite(count, seed=SEED):
    """``[(kind, Problem)]``, the same for every run."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        kind = list(KINDS)[i % len(KINDS)]
        policies, counts, fill, objective = KINDS[kind](rng)
        hosts = int(rng.choice([40, 60, 80]))
        free, domains = fleet(rng, hosts, fill=fill)
        out.append((kind, problem_mod.Problem(
            free, domains, shapes(hosts, [int(c) for c in counts]),
            policies, objective=objective)))
    return out


def _accepted(problem, rows):
    if rows is None:
        return False
    broken = groups_exact.violations(problem, rows)
    if broken:
        raise AssertionError("an accepted answer breaks %s" % broken)
    return True


def acceptance(count):
    per_kind = {}
    methods = {}
    for kind, problem in suite(count):
        answer = solve.decide(problem, time_budget=1.0)
        row = per_kind.setdefault(kind, [0, 0, 0, 0])
        row[0] += 1
        row[1] += _accepted(problem, greedy.place(problem))
        row[2] += _accepted(problem, answer.rows)
        row[3] += groups_exact.feasible(problem)
        methods[answer.method] = methods.get(answer.method, 0) + 1
    return per_kind, methods


def big_fleet(seed=SEED, hosts=10000):
    rng = np.random.default_rng(seed + 1)
    return fleet(rng, hosts, rack_size=20, racks_per_row=25, fill=(0.0, 0.8))


def speed(repeats=5):
    free, domains = big_fleet()
    hosts = free.shape[0]
    rows = []
    for name, policy, count in (
            ("200 members, anti-affinity at rack",
             Policy("rack", "anti-affinity"), 200),
            ("2000 members, anti-affinity at host",
             Policy("host", "anti-affinity"), 2000)):
        problem = problem_mod.Problem(free, domains,
                                      shapes(hosts, [count, 0]), (policy,))
        joint = _median(lambda p=problem: solve.decide(p, 1.0), repeats)
        seq = _median(lambda p=problem: greedy.place(p), repeats)
        answer = solve.decide(problem, 1.0)
        assert not groups_exact.violations(problem, answer.rows)
        rows.append((name, joint, count / joint[0], seq, answer.method))
    return rows


def _median(fn, repeats):
    """Median (wall, process CPU) seconds of ``fn``."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def show_acceptance(per_kind, methods):
    print("\nAcceptance: groups accepted (every answer re-checked)\n")
    print("| kind | groups | sequential | holistic | exact ILP | "
          "holistic / exact |")
    print("|---|---:|---:|---:|---:|---:|")
    total = [0, 0, 0, 0]
    for kind, row in per_kind.items():
        total = [a + b for a, b in zip(total, row, strict=True)]
        print("| %s | %d | %d | %d | %d | %.1f %% |" % (
            kind, *row, 100.0 * row[2] / max(row[3], 1)))
    print("| **all** | %d | %d | %d | %d | %.1f %% |" % (
        *total, 100.0 * total[2] / max(total[3], 1)))
    print("\nAnswers used by the holistic decision: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(methods.items())))


def show_speed(rows):
    print("\nSpeed on 10,000 hosts (median of 5 of wall and of process "
          "CPU time; solver only; the joint decision includes the "
          "sequential answer, its start; load average %.1f)\n"
          % os.getloadavg()[0])
    print("| group | joint decision (CPU) | members/s | sequential (CPU) "
          "| answer |")
    print("|---|---:|---:|---:|---|")
    for name, joint, rate, seq, method in rows:
        print("| %s | %.0f ms (%.0f ms) | %.0f | %.0f ms (%.0f ms) | %s |"
              % (name, joint[0] * 1e3, joint[1] * 1e3, rate, seq[0] * 1e3,
                 seq[1] * 1e3, method))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=120,
                        help="groups in the acceptance suite (default 120)")
    parser.add_argument("--reserve", choices=("mysql", "postgresql"),
                        help="also reserve the 200-member group end to "
                             "end on this database")
    args = parser.parse_args(argv)
    show_acceptance(*acceptance(args.groups))
    show_speed(speed())
    if args.reserve:
        import groups_reserve
        groups_reserve.show(groups_reserve.run(args.reserve))
    return 0


if __name__ == "__main__":
    sys.exit(main())
