"""Members taking their reserved slots over, end to end over RabbitMQ,
against plain placements on the same daemon.

A real ``gantt-scheduler`` (one worker, the benchmark's filters and
weighers) on a throw-away database holding the shared cloud, each host
with its rack as its location (racks of 40); this process calls it
through ``SchedulerClient`` on the machine's RabbitMQ:

1. ``reserve_group``: one group of ``--members`` members with
   anti-affinity at rack (the shared m1.medium request as the member);
2. then, in blocks of ``--block`` calls, alternately: plain one-instance
   ``select_destinations`` (the reference: a normal placement, claimed,
   with alternates) and members built one by one into their slots
   (``select_destinations`` naming ``group_slot``; each answer checked:
   claimed on the slot's reserved host).

Per kind: the client-side latency (p50, p95), and the daemon's process
CPU per call (``/proc/<pid>/stat``, the worker's user + system time over
that kind's blocks) next to this process's (the client's) CPU per call.
Alternating blocks spread the machine's changing load over both kinds.

    python benchmarks/groups_rpc.py [--db mysql postgresql] \\
        [--hosts 10000] [--members 200] [--block 10]
"""

import argparse
import os
import platform
import sys
import time
import uuid

import dbs
import fleet
import gantt_env
import groups_reserve
import harness

from gantt.objects import group as group_obj

_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """User + system CPU seconds of process ``pid`` so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


class Series:
    """The latencies and CPU times of one kind of call."""

    def __init__(self, pid):
        self.pid = pid
        self.latency = []
        self.server_cpu = 0.0
        self.client_cpu = 0.0

    def run(self, calls):
        """Time each of ``calls`` (no-argument functions) in turn."""
        server, client = process_cpu(self.pid), time.process_time()
        for call in calls:
            started = time.perf_counter()
            call()
            self.latency.append(time.perf_counter() - started)
        self.server_cpu += process_cpu(self.pid) - server
        self.client_cpu += time.process_time() - client

    def summary(self):
        n = len(self.latency)
        ms = harness.summary_ms(self.latency)
        return {"n": n, "p50": ms["p50"],
                "p95": harness.percentile([x * 1e3 for x in self.latency],
                                          95),
                "server_cpu_ms": self.server_cpu / n * 1e3,
                "client_cpu_ms": self.client_cpu / n * 1e3}


def _plain(client, spec):
    def call():
        [[claimed, *_]] = client.select_destinations(
            None, spec, [str(uuid.uuid4())])
        assert claimed.claimed
    return call


def _member(client, spec, group_uuid, slot):
    named = spec.obj_clone()
    named.group_slot = group_obj.GroupSlotRef(group_uuid=group_uuid,
                                              slot=slot.slot)
    reserved_on = slot.selections[0].service_host

    def call():
        [[claimed, *_]] = client.select_destinations(
            None, named, [str(uuid.uuid4())])
        assert claimed.claimed and claimed.service_host == reserved_on, (
            "member of slot %d placed on %s, reserved on %s"
            % (slot.slot, claimed.service_host, reserved_on))
    return call


def _store(backend, cloud, hosts):
    tdb = dbs.ThrowawayDB(backend)
    db = gantt_env.gantt_database(tdb.url)
    harness.log("storing %d hosts on %s", hosts, backend)
    groups_reserve.Located(db, cloud, per_instance=False).grow_to(hosts)
    db.dispose()
    return tdb


def _warm(client, spec, count=20):
    for _ in range(count):
        _plain(client, spec)()


def measure(client, pid, spec, plan, block):
    """Alternating blocks of plain placements and take-overs."""
    plain, member = Series(pid), Series(pid)
    slots = list(plan.slots)
    for i in range(0, len(slots), block):
        chunk = slots[i:i + block]
        plain.run([_plain(client, spec) for _ in chunk])
        member.run([_member(client, spec, plan.group_uuid, s)
                    for s in chunk])
    return plain.summary(), member.summary()


def run(backend, hosts, members, block):
    harness.require_services("rabbit", backend)
    cloud = fleet.build(hosts)
    spec = gantt_env.request_spec(cloud, group=False)
    tdb = _store(backend, cloud, hosts)
    try:
        extra = "[group_scheduling]\nmax_members = %d\n" % max(members, 1000)
        with gantt_env.Daemon(tdb.url, extra=extra) as daemon:
            client, transport = daemon.client()
            harness.log("gantt-scheduler ready in %.1fs",
                        daemon.wait_ready())
            pid = daemon.worker_pids()[0]
            _warm(client, spec)
            started = time.perf_counter()
            plan = client.reserve_group(None, groups_reserve.group(
                spec, members, "rack"))
            reserve_s = time.perf_counter() - started
            harness.log("%d members reserved in %.0f ms", members,
                        reserve_s * 1e3)
            plain, member = measure(client, pid, spec, plan, block)
            transport.cleanup()
        tracebacks = daemon.log().count("Traceback")
    finally:
        tdb.drop()
    return {"backend": backend, "hosts": hosts, "members": members,
            "reserve_ms": reserve_s * 1e3, "plain": plain,
            "member": member, "tracebacks": tracebacks}


def show(results):
    print("\nA member's take-over vs a plain select_destinations, over "
          "RabbitMQ to a real gantt-scheduler (%s; load average %s)\n"
          % (platform.node(), " ".join("%.2f" % x for x in os.getloadavg())))
    print("| database | call | n | p50 | p95 | daemon CPU/call | "
          "client CPU/call |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        for label, key in (("plain select_destinations", "plain"),
                           ("member takes its slot over", "member")):
            s = r[key]
            print("| %s | %s | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms |"
                  % (harness.DB_LABELS[r["backend"]], label, s["n"],
                     s["p50"], s["p95"], s["server_cpu_ms"],
                     s["client_cpu_ms"]))
    for r in results:
        print("%s: %d hosts, %d members reserved in %.0f ms; take-over / "
              "plain: p50 %.2f, p95 %.2f, daemon CPU %.2f; %d tracebacks "
              "in the daemon's log" % (
                  harness.DB_LABELS[r["backend"]], r["hosts"], r["members"],
                  r["reserve_ms"], r["member"]["p50"] / r["plain"]["p50"],
                  r["member"]["p95"] / r["plain"]["p95"],
                  r["member"]["server_cpu_ms"]
                  / r["plain"]["server_cpu_ms"], r["tracebacks"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", nargs="+", default=["mysql", "postgresql"],
                        choices=("mysql", "postgresql"))
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--members", type=int, default=200,
                        help="members reserved, then built (at most one "
                             "per rack of 40 hosts)")
    parser.add_argument("--block", type=int, default=10,
                        help="calls of one kind in a row")
    args = parser.parse_args(argv)
    show([run(db, args.hosts, args.members, args.block) for db in args.db])
    return 0


if __name__ == "__main__":
    sys.exit(main())
