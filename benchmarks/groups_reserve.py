"""``groups.py --reserve BACKEND``: a group decided and reserved end to
end, and members taking their slots over, on a real database.

10,000 hosts (the shared synthetic cloud, racks of 40: 250 racks) stored
in a throw-away database, each with its rack as its location; an
in-process worker (``gantt.scheduler.build``, no RabbitMQ) then

* reserves a 200-member group with anti-affinity at rack
  (``GroupService.reserve``: the filters once per shape, the joint
  model, one claim transaction of 200 slots);
* reserves a 1,000-member group with anti-affinity at host;
* builds 50 members of the first group into their slots
  (``select_destinations`` naming ``group_slot``), against 50 plain
  one-instance ``select_destinations`` on the same worker (the
  reference: a normal placement's latency).
"""

import statistics
import time
import uuid

import dbs
import fleet
import gantt_env
import harness

from gantt import scheduler as scheduler_mod
from gantt.objects import group as group_obj
from gantt.objects import request_spec as rs_obj


class Located(gantt_env.Populator):
    """The cloud with each host's rack as its location."""

    def _host_rows(self, host, rows):
        super()._host_rows(host, rows)
        rows["host_reports"][-1]["location"] = "rack=rack-%d" % host["rack"]


def group(spec, count, level):
    member = spec.obj_clone()
    return group_obj.GroupRequest(
        group_uuid=str(uuid.uuid4()), project_id="bench", user_id="bench",
        policies=[rs_obj.GroupLevelPolicy(level=level,
                                          rule="anti-affinity")],
        members=[group_obj.GroupMember(name="m", count=count,
                                       request_spec=member)],
        time_budget=1.0)


def _timed(fn, cpu=None):
    """(fn's value, its wall time); its process CPU time is added to
    ``cpu[0]`` when given."""
    started, used = time.perf_counter(), time.process_time()
    value = fn()
    if cpu is not None:
        cpu[0] += time.process_time() - used
    return value, time.perf_counter() - started


def run(backend, hosts=10000):
    cloud = fleet.build(hosts)
    tdb = dbs.ThrowawayDB(backend)
    harness.on_exit(tdb.drop)
    db = gantt_env.gantt_database(tdb.url)
    harness.log("storing %d hosts on %s", hosts, backend)
    Located(db, cloud, per_instance=False).grow_to(hosts)
    conf = gantt_env.make_conf(**{
        "database.connection": tdb.url,
        "scheduler.service_down_time": 10 ** 9,
        "group_scheduling.max_members": 2000})
    worker = scheduler_mod.build(conf, db)
    worker.stats.load_cache()
    spec = gantt_env.request_spec(cloud, group=False)
    racks, rack_s = _timed(lambda: worker.groups.reserve(
        group(spec, 200, "rack")))
    _, host_s = _timed(lambda: worker.groups.reserve(
        group(spec, 1000, "host")))
    member, plain, member_cpu, plain_cpu = [], [], [0.0], [0.0]
    for slot in racks.slots[:50]:
        named = spec.obj_clone()
        named.group_slot = group_obj.GroupSlotRef(
            group_uuid=racks.group_uuid, slot=slot.slot)
        member.append(_timed(lambda s=named: worker.placer
                             .select_destinations(s, [str(uuid.uuid4())]),
                             member_cpu)[1])
        plain.append(_timed(lambda: worker.placer.select_destinations(
            spec, [str(uuid.uuid4())]), plain_cpu)[1])
    return {"backend": backend, "rack_s": rack_s, "host_s": host_s,
            "rack_method": racks.method,
            "member_ms": statistics.median(member) * 1e3,
            "plain_ms": statistics.median(plain) * 1e3,
            "member_cpu_ms": member_cpu[0] / len(member) * 1e3,
            "plain_cpu_ms": plain_cpu[0] / len(plain) * 1e3}


def show(r):
    print("\nDecided and reserved end to end on %s (10,000 hosts, "
          "in-process worker)\n" % r["backend"])
    print("| what | time | members/s |")
    print("|---|---:|---:|")
    print("| reserve 200 members, anti-affinity at rack (%s) | %.0f ms | "
          "%.0f |" % (r["rack_method"], r["rack_s"] * 1e3,
                      200 / r["rack_s"]))
    print("| reserve 1000 members, anti-affinity at host | %.0f ms | %.0f |"
          % (r["host_s"] * 1e3, 1000 / r["host_s"]))
    print("| a member takes its slot over (median of 50) | %.1f ms | "
          "(CPU %.1f ms per call) |" % (r["member_ms"], r["member_cpu_ms"]))
    print("| reference: a plain select_destinations (median of 50) | "
          "%.1f ms | (CPU %.1f ms per call) |" % (r["plain_ms"],
                                                 r["plain_cpu_ms"]))
