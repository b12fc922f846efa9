"""The compute flow: Nova's conductors and compute agents, at scale.

* compute agents cast full stats for every host (``--hosts``), and
  re-cast them;
* conductors (``--conductors`` threads) ask for ``--instances`` instances
  of mixed flavors, some in an anti-affinity server group, some in
  batches, one flavor too big for any host;
* a few builds "fail" (``--failure-rate``) and the conductor re-claims
  them on the alternates Gantt returned;

and the summary reads back the scheduler's statistics and the database.
The default profile places every request: the flow needs no config.

One story told top to bottom (the fleet, the agents, the conductors, the
summary), each part a small function.
"""

import collections
import concurrent.futures
import dataclasses
import random
import sys
import threading
import time
import uuid

import sqlalchemy as sa

from gantt import exception
from gantt.cmd import demo_flows
from gantt.db import audit
from gantt.db import models
from gantt.objects import compute_node
from gantt.objects import request_spec
from gantt.rpcapi import client as rpc_client

#: the default profile: nothing to add to the daemon's config
PROFILE = None


def config(topic):
    return {}


@dataclasses.dataclass(frozen=True)
class HostClass:
    name: str
    share: float
    vcpus: int
    memory_mb: int
    disk_gb: int
    traits: tuple = ()


HOST_CLASSES = (
    HostClass("general", 0.6, 32, 131072, 1000),
    HostClass("highmem", 0.3, 48, 524288, 2000),
    HostClass("gpu", 0.1, 64, 262144, 2000, ("CUSTOM_GPU_A100",)),
)

FLAVORS = (
    # name, vcpus, memory_mb, root_gb, extra_specs, weight
    ("m1.small", 1, 2048, 20, {}, 30),
    ("m1.medium", 2, 4096, 40, {}, 30),
    ("m1.large", 4, 8192, 80, {}, 20),
    ("r1.xlarge", 8, 65536, 100, {}, 12),
    ("g1.large", 8, 32768, 100, {"trait:CUSTOM_GPU_A100": "required"}, 8),
    # bigger than any host: every request of it must fail, with a reason
    ("x1.huge", 64, 786432, 500, {}, 1),
)

ZONES = ("az1", "az2", "az3")
CELLS = (str(uuid.UUID(int=1)), str(uuid.UUID(int=2)))



@dataclasses.dataclass
class Fleet:
    nodes: list
    classes: dict   # host name -> class name


def _build_fleet(count, rng):
    nodes, classes = [], {}
    weights = [c.share for c in HOST_CLASSES]
    for i in range(count):
        cls = rng.choices(HOST_CLASSES, weights)[0]
        name = "cmp-%04d" % i
        classes[name] = cls.name
        nodes.append(compute_node.ComputeNode(
            uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt-demo")),
            host=name, nodename=name, cell_uuid=CELLS[i % len(CELLS)],
            availability_zone=ZONES[i % len(ZONES)],
            inventories=[
                compute_node.Inventory(resource_class="VCPU",
                                       total=cls.vcpus, allocation_ratio=4.0),
                compute_node.Inventory(resource_class="MEMORY_MB",
                                       total=cls.memory_mb, reserved=4096,
                                       allocation_ratio=1.0),
                compute_node.Inventory(resource_class="DISK_GB",
                                       total=cls.disk_gb)],
            traits=["HW_CPU_X86_AVX2"] + list(cls.traits),
            capabilities={"hypervisor_type": "QEMU", "cpu_arch": "x86_64"},
            report_sequence=0))
    return Fleet(nodes, classes)


class Agents:
    """Every host's agent: cast full stats now, then every interval."""

    def __init__(self, client, fleet, interval=10.0):
        self.client, self.fleet, self.interval = client, fleet, interval
        self._stop = threading.Event()
        self.casts = 0

    def report_all(self):
        for node in self.fleet.nodes:
            node.report_sequence = time.time_ns()
            self.client.update_resource_stats(None, node)
            self.casts += 1

    def run(self):
        while not self._stop.wait(self.interval):
            self.report_all()

    def stop(self):
        self._stop.set()


@dataclasses.dataclass
class Tally:
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    placed: int = 0
    no_valid_host: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)
    invalid: int = 0
    builds_failed: int = 0
    reclaimed: int = 0
    reclaim_exhausted: int = 0
    latencies: list = dataclasses.field(default_factory=list)
    reclaim_latencies: list = dataclasses.field(default_factory=list)
    alternates_returned: int = 0
    instances: dict = dataclasses.field(default_factory=dict)
    done: int = 0


def _requests(total, rng):
    """(spec, instance uuids) for ``total`` instances, mixed and grouped."""
    flavors = [request_spec.Flavor(name=n, vcpus=v, memory_mb=m, root_gb=d,
                                   extra_specs=e)
               for n, v, m, d, e, _w in FLAVORS]
    weights = [f[-1] for f in FLAVORS]
    group = request_spec.InstanceGroup(uuid=str(uuid.uuid4()),
                                       name="web-tier",
                                       policy="anti-affinity")
    made = 0
    while made < total:
        roll = rng.random()
        if roll < 0.02:
            # members of one anti-affinity group, one at a time
            spec = request_spec.RequestSpec(
                flavor=flavors[1], instance_group=group, num_instances=1)
        elif roll < 0.08:
            count = min(5, total - made)
            spec = request_spec.RequestSpec(
                flavor=rng.choices(flavors, weights)[0],
                num_instances=count)
        else:
            spec = request_spec.RequestSpec(
                flavor=rng.choices(flavors, weights)[0], num_instances=1,
                availability_zone=rng.choice(ZONES + (None,) * 3))
        uuids = [str(uuid.uuid4()) for _ in range(spec.num_instances)]
        made += len(uuids)
        yield spec, uuids


def _conduct(client, spec, uuids, tally, rng, failure_rate):
    started = time.monotonic()
    try:
        lists = client.select_destinations(None, spec, uuids)
    except exception.NoValidHost as exc:
        with tally.lock:
            tally.no_valid_host[demo_flows.reason_key(str(exc))] += len(
                uuids)
            tally.done += len(uuids)
        return
    elapsed = time.monotonic() - started
    with tally.lock:
        tally.latencies.append(elapsed)
        tally.placed += len(lists)
        tally.done += len(lists)
        tally.alternates_returned += sum(len(s) - 1 for s in lists)
    for selections in lists:
        chosen = selections[0]
        if rng.random() < failure_rate:
            chosen = _rebuild(client, selections, tally)
        if chosen is not None:
            with tally.lock:
                tally.instances[chosen.consumer_uuid] = chosen.service_host


def _rebuild(client, selections, tally):
    """The build failed on the claimed host: re-claim on an alternate."""
    with tally.lock:
        tally.builds_failed += 1
    started = time.monotonic()
    try:
        chosen = client.reclaim(None, selections[0].consumer_uuid,
                                selections[0], selections[1:])
    except exception.MaxRetriesExceeded:
        with tally.lock:
            tally.reclaim_exhausted += 1
            tally.placed -= 1
        return None
    with tally.lock:
        tally.reclaimed += 1
        tally.reclaim_latencies.append(time.monotonic() - started)
    return chosen


def _progress(tally, total, started, stop):
    tty = sys.stdout.isatty()
    # a terminal gets one line redrawn every second; a log, a line every 5 s
    while not stop.wait(1.0 if tty else 5.0):
        with tally.lock:
            done, placed = tally.done, tally.placed
            nvh = sum(tally.no_valid_host.values())
            p50 = demo_flows.percentile(tally.latencies[-500:], 50) * 1000
        rate = done / max(time.monotonic() - started, 1e-6)
        bar = "#" * int(30 * done / total)
        print("%s  [%-30s] %5d/%d  placed %5d  no-valid-host %4d  "
              "%6.0f inst/s  p50 %5.1f ms" % ("\r" if tty else "", bar, done,
                                              total, placed, nvh, rate, p50),
              end="" if tty else "\n", flush=True)
    if tty:
        print()


def _wait_for_hosts(client, agents, expected, timeout=60, recast=3.0):
    """Until the scheduler knows every host; the agents report again every
    ``recast`` seconds meanwhile: casts sent before a worker has bound its
    stats queue are lost (a cast has no reply to wait for), as they would
    be for real agents, which also just report again."""
    deadline = time.monotonic() + timeout
    next_cast = time.monotonic() + recast
    while time.monotonic() < deadline:
        if time.monotonic() >= next_cast:
            agents.report_all()
            next_cast = time.monotonic() + recast
        try:
            states = client.get_host_states(None)
        except Exception:
            time.sleep(0.5)
            continue
        if len(states) >= expected:
            return states
        time.sleep(0.3)
    raise RuntimeError("the scheduler saw only part of the fleet after "
                       "%ds" % timeout)


def _summary(args, fleet, tally, states, stats, db_url, timings):
    by_class = collections.defaultdict(lambda: collections.Counter())
    for state in states:
        cls = fleet.classes.get(state.host)
        for res in state.resources:
            capacity = int((res.total - res.reserved) * res.allocation_ratio)
            by_class[cls][res.resource_class + ".used"] += res.used
            by_class[cls][res.resource_class + ".cap"] += capacity
        by_class[cls]["hosts"] += 1
    engine = sa.create_engine(db_url)
    alloc = models.ALLOC
    with engine.connect() as conn:
        consumers = conn.execute(sa.select(
            sa.func.count(sa.distinct(alloc.c.consumer_uuid)))).scalar()
        over = len(audit.overcommitted(conn))
    engine.dispose()
    lat = tally.latencies
    print("\n=== Gantt demo summary " + "=" * 45)
    print("fleet          %d hosts (%s), %d cells, %d zones; %d stats casts"
          % (len(fleet.nodes), ", ".join(
              "%d %s" % (by_class[c.name]["hosts"], c.name)
              for c in HOST_CLASSES), len(CELLS), len(ZONES),
             timings["casts"]))
    print("requested      %d instances in %.1f s (%.0f instances/s) by %d "
          "conductors" % (args.instances, timings["run"],
                          args.instances / timings["run"], args.conductors))
    print("placed         %d   no valid host %d" % (
        tally.placed, sum(tally.no_valid_host.values())))
    print("builds failed  %d -> re-claimed on an alternate %d, "
          "alternates exhausted %d" % (tally.builds_failed, tally.reclaimed,
                                       tally.reclaim_exhausted))
    print("alternates     %d returned with the selections (%.2f per "
          "instance)" % (tally.alternates_returned,
                         tally.alternates_returned / max(tally.placed, 1)))
    print("latency        select_destinations p50 %.1f ms  p95 %.1f ms  "
          "p99 %.1f ms  (%d calls)" % (
              demo_flows.percentile(lat, 50) * 1000,
              demo_flows.percentile(lat, 95) * 1000,
              demo_flows.percentile(lat, 99) * 1000, len(lat)))
    print("               reclaim p50 %.1f ms" % (
        demo_flows.percentile(tally.reclaim_latencies, 50) * 1000))
    print("\nutilisation by host class (allocated / capacity)")
    print("  %-8s %6s %10s %10s %10s" % ("class", "hosts", "VCPU",
                                         "MEMORY_MB", "DISK_GB"))
    for cls in HOST_CLASSES:
        row = by_class[cls.name]
        cells = ["%9.1f%%" % (100.0 * row[rc + ".used"] /
                              max(row[rc + ".cap"], 1))
                 for rc in ("VCPU", "MEMORY_MB", "DISK_GB")]
        print("  %-8s %6d %s" % (cls.name, row["hosts"], " ".join(cells)))
    print("\nNoValidHost reasons (instances)")
    if not tally.no_valid_host:
        print("  none")
    for reason, count in tally.no_valid_host.most_common(6):
        print("  %5d  %s" % (count, reason[:110]))
    print("\nfilter eliminations over all failed requests (from "
          "get_statistics)")
    total_elims = collections.Counter()
    for s in stats:
        total_elims.update(s.filter_eliminations)
    for label, count in total_elims.most_common(6):
        print("  %7d  %s" % (count, label))
    print("\ndatabase check  %d consumers hold allocations (expected %d); "
          "%d overcommitted provider classes" % (
              consumers, len(tally.instances), over))
    print("scheduler       claim conflicts retried %d; messages rejected %d"
          % (sum(s.claim_conflicts for s in stats),
             sum(s.messages_rejected for s in stats)))
    ok = consumers == len(tally.instances) and over == 0
    print("result          %s" % ("OK" if ok else "INCONSISTENT"))
    return ok


def run(ctx):
    args, rng, client = ctx.args, ctx.rng, ctx.client
    fleet = _build_fleet(args.hosts, rng)
    agents = Agents(client, fleet)
    started = time.monotonic()
    agents.report_all()
    # a short timeout while waiting: a call sent before the workers have
    # bound their queues is dropped by the broker, and with the usual
    # timeout that one lost call would use up the whole wait (a slow
    # machine takes more than the second above to start a worker)
    _wait_for_hosts(rpc_client.SchedulerClient(ctx.transport, ctx.topic,
                                               timeout=3),
                    agents, args.hosts)
    print("  %d agents reported in %.1f s" % (args.hosts,
                                              time.monotonic() - started))
    threading.Thread(target=agents.run, daemon=True).start()
    tally = Tally()
    stop = threading.Event()
    run_started = time.monotonic()
    progress = threading.Thread(target=_progress, args=(
        tally, args.instances, run_started, stop))
    progress.start()
    with concurrent.futures.ThreadPoolExecutor(args.conductors) as pool:
        futures = [pool.submit(_conduct, client, spec, uuids, tally,
                               random.Random(rng.random()),
                               args.failure_rate)
                   for spec, uuids in _requests(args.instances, rng)]
        for future in futures:
            future.result()
    run_time = time.monotonic() - run_started
    stop.set()
    progress.join()
    agents.stop()
    states = client.get_host_states(None)
    stats = [client.get_statistics(None) for _ in range(args.workers * 2)]
    return _summary(args, fleet, tally, states, _unique(stats), ctx.db_url,
                    {"run": run_time, "casts": agents.casts})


def _unique(stats):
    seen = {}
    for s in stats:
        seen[s.worker] = s
    return list(seen.values())
