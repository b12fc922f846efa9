"""Holistic groups reserved end to end: wall and process CPU time per
reservation, several runs on one stored fleet (issue #23's rates).

10,000 hosts (the shared synthetic cloud, each host's rack as its
location) stored in a throw-away database; an in-process worker
(``gantt.scheduler.build``, no RabbitMQ) then, per run, reserves a
200-member group with anti-affinity at rack and an N-member group with
anti-affinity at host (``GroupService.reserve``: the filters once per
shape, the sequential answer, HiGHS started from it, one claim
transaction), and releases both. Each row gives the wall time, the
process CPU time (``time.process_time``: the shared machine's load
inflates the wall time, not this), members per second of wall time, the
answer used, the full garbage collections during the call and the load
average.

    python benchmarks/groups_rate.py postgresql [--members 2000]
        [--runs 3] [--no-freeze] [--profile FILE]

After the cache load the heap is settled as the daemon settles it
(``gantt.service.settle_heap``: collected, then frozen); ``--no-freeze``
leaves it as it is, for comparison. ``--profile FILE`` writes cProfile
statistics of the host-level reservations to FILE (read them with
``python -m pstats FILE``).
"""

import argparse
import cProfile
import gc
import os
import sys
import time
import uuid

import dbs
import fleet
import gantt_env
import harness

from gantt import scheduler as scheduler_mod
from gantt import service
from gantt.objects import group as group_obj
from gantt.objects import request_spec as rs_obj


class _Racks(gantt_env.Populator):
    """Each stored host located in its rack."""

    def _host_rows(self, host, rows):
        super()._host_rows(host, rows)
        rows["host_reports"][-1]["location"] = "rack=rack-%d" % host["rack"]


def _request(spec, count, level):
    return group_obj.GroupRequest(
        group_uuid=str(uuid.uuid4()), project_id="rate", user_id="rate",
        policies=[rs_obj.GroupLevelPolicy(level=level,
                                          rule="anti-affinity")],
        members=[group_obj.GroupMember(name="m", count=count,
                                       request_spec=spec.obj_clone())],
        time_budget=1.0)


def worker_on(url, cloud, members):
    """An in-process worker on ``cloud`` stored at ``url``."""
    db = gantt_env.gantt_database(url)
    harness.log("storing %d hosts", len(cloud.hosts))
    _Racks(db, cloud, per_instance=False).grow_to(len(cloud.hosts))
    worker = scheduler_mod.build(gantt_env.make_conf(**{
        "database.connection": url,
        "scheduler.service_down_time": 10 ** 9,
        "group_scheduling.max_members": max(members, 1000)}), db)
    worker.stats.load_cache()
    return worker


def timed(worker, request, profiler=None):
    """One reservation, measured, then released."""
    full = gc.get_stats()[2]["collections"]
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    plan = worker.groups.reserve(request)
    if profiler:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    count = len(plan.slots)
    worker.groups.release(request.group_uuid)
    return {"members": count, "wall": wall, "cpu": cpu,
            "rate": count / wall, "method": plan.method,
            "full_gc": gc.get_stats()[2]["collections"] - full,
            "load": os.getloadavg()[0]}


def run(backend, members, runs, profile=None, freeze=True):
    cloud = fleet.build(10000)
    with dbs.ThrowawayDB(backend) as tdb:
        worker = worker_on(tdb.url, cloud, members)
        spec = gantt_env.request_spec(cloud, group=False)
        if freeze:
            service.settle_heap()
        return measure(worker, spec, members, runs, profile)


def measure(worker, spec, members, runs, profile):
    profiler = cProfile.Profile() if profile else None
    rows = []
    for number in range(1, runs + 1):
        rows.append(("%d: 200 at rack" % number,
                     timed(worker, _request(spec, 200, "rack"))))
        rows.append(("%d: %d at host" % (number, members),
                     timed(worker, _request(spec, members, "host"),
                           profiler)))
    if profiler:
        profiler.dump_stats(profile)
    return rows


def show(backend, rows):
    print("\nReserved end to end on %s (10,000 hosts, in-process worker)"
          "\n" % backend)
    print("| run: group | wall | CPU | members/s (wall) | answer | "
          "full GCs | load |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, r in rows:
        print("| %s | %.0f ms | %.0f ms | %.0f | %s | %d | %.1f |" % (
            name, r["wall"] * 1e3, r["cpu"] * 1e3, r["rate"], r["method"],
            r["full_gc"], r["load"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backend", choices=("mysql", "postgresql"))
    parser.add_argument("--members", type=int, default=2000,
                        help="members of the host-level group (2000)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--no-freeze", action="store_true",
                        help="do not settle the heap after the cache load")
    args = parser.parse_args(argv)
    show(args.backend, run(args.backend, args.members, args.runs,
                           args.profile, not args.no_freeze))
    return 0


if __name__ == "__main__":
    sys.exit(main())
