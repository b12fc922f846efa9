"""5. Stats ingest: how fast a worker absorbs agents' casts, and at what cost.

(a) Absorption. The worker is paused (SIGSTOP) while N casts of
``update_resource_stats`` (fanout, a full ComputeNode report each, made by
Gantt's own serializer) are queued, then resumed (SIGCONT); the rate is N
over the time until the worker has counted all of them (polled with
``get_statistics``). The no-op server of ``ref_rpc.py`` gets the very same
messages, the same way, and counts them: that is the ceiling.

Agents cast on the stats topic (``[scheduler] stats_topic``), as
``SchedulerClient`` does; ``--legacy-topic`` casts on the scheduler topic
instead, as agents of older releases do (and the only way for code that
predates the stats topic). The worker runs with a
``report_persist_interval`` longer than the run (``--persist-interval``),
so that no report is due for a database write: otherwise whether the
casts of (a) are also database writes depends on how long ago the
population stored the hosts.

(b) Under load. A real ``gantt-scheduler`` (one worker) with the shared
cloud's 5 000 hosts in MariaDB: ``select_destinations`` latency from one
caller, first with no agents, then while 5 000 simulated agents each cast
their report every 10 s (500 casts/s) plus a burst of 2 000 casts/s. The
agents are separate processes sending pre-serialized reports at a paced
rate; the backlog (casts sent minus casts the worker has counted) is
sampled twice a second.

    python benchmarks/ingest.py [--hosts 5000] [--absorb-casts 4000]
        [--legacy-topic] [--persist-interval 3600]
"""

import argparse
import heapq
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid

import fleet
import harness

STATS_METHOD = "update_resource_stats"


# -- casting reports ----------------------------------------------------------


def _primitives(cloud, count=None):
    """Each host's ComputeNode as Gantt's serializer puts it on the wire."""
    import gantt_env
    hosts = cloud.hosts[:count] if count else cloud.hosts
    return [gantt_env.compute_node(cloud, h, 1).obj_to_primitive()
            for h in hosts]


def _raw_caster(topic, exchange=None):
    """A fanout ``cast`` that sends already serialized reports."""
    import oslo_messaging as messaging
    import ref_rpc

    from gantt import context as gantt_context
    transport = ref_rpc.transport()
    target = messaging.Target(topic=topic, exchange=exchange,
                              version="1.0")
    client = messaging.get_rpc_client(transport, target).prepare(fanout=True)
    ctxt = gantt_context.get_admin_context().to_dict()
    sequence = [time.time_ns()]

    def cast(primitive):
        sequence[0] += 1
        primitive["gantt_object.data"]["report_sequence"] = sequence[0]
        client.cast(ctxt, STATS_METHOD, compute_node=primitive)

    return cast, transport


def _agent_process(topic, exchange, cloud_size, share, nshares, schedule,
                   sent, ready, go, stop):
    """One sender process: its share of the hosts, paced by ``schedule``.

    :param schedule: list of (start offset s, duration s, casts/s in total)
    """
    cloud = fleet.build(cloud_size)
    prims = _primitives(cloud)[share::nshares]
    cast, transport = _raw_caster(topic, exchange)
    ready.release()
    go.wait()
    started = time.monotonic()
    k = 0
    for due in heapq.merge(*[_times(offset, duration, rate / nshares)
                             for offset, duration, rate in schedule]):
        if stop.is_set():
            break
        delay = started + due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        cast(prims[k % len(prims)])
        k += 1
        with sent.get_lock():
            sent.value += 1
    transport.cleanup()


def _times(offset, duration, rate):
    """Evenly paced send times (s from the start) of one schedule item."""
    return (offset + j / rate for j in range(int(duration * rate)))


class Agents:
    """Sender processes casting on a schedule, counting what they sent."""

    def __init__(self, topic, exchange, cloud_size, schedule, processes=2):
        ctx = multiprocessing.get_context("fork")
        self.sent = ctx.Value("q", 0)
        self.stop_event = ctx.Event()
        self.ready = ctx.Semaphore(0)
        self.go = ctx.Event()
        self.procs = [ctx.Process(target=_agent_process, args=(
            topic, exchange, cloud_size, i, processes, schedule, self.sent,
            self.ready, self.go, self.stop_event), daemon=True)
            for i in range(processes)]

    def start(self):
        """Start the senders; returns once all of them are casting."""
        for p in self.procs:
            p.start()
        for _ in self.procs:
            if not self.ready.acquire(timeout=120):
                raise RuntimeError("an agent process did not start")
        self.go.set()
        return self

    def stop(self):
        self.stop_event.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


# -- (a) absorption ----------------------------------------------------------


def _absorb(pid, cast, prims, count, counted, timeout=120, profile=None):
    """Queue ``count`` casts while ``pid`` is stopped; drain rate (1/s).

    :param profile: a ``gantt_env.Profile`` to run while the queue drains
    """
    before = counted()
    os.kill(pid, signal.SIGSTOP)
    try:
        send_started = time.perf_counter()
        for k in range(count):
            cast(prims[k % len(prims)])
        send_s = time.perf_counter() - send_started
        time.sleep(0.5)  # let the broker take the last ones
    finally:
        os.kill(pid, signal.SIGCONT)
    resumed = time.perf_counter()
    if profile is not None:
        profile.start()
    deadline = resumed + timeout
    done = counted() - before
    while done < count and time.perf_counter() < deadline:
        time.sleep(0.02)
        done = counted() - before
    elapsed = time.perf_counter() - resumed
    if profile is not None:
        profile.stop()
    return {"casts": count, "counted": done, "drain_s": elapsed,
            "rate": done / elapsed, "send_rate": count / send_s}


def noop_side(args):
    import ref_rpc

    harness.require_services("rabbit")
    cloud = fleet.build(args.hosts)
    prims = _primitives(cloud)
    topic = "gantt-bench-noop-" + uuid.uuid4().hex[:8]
    with ref_rpc.NoopServer(topic) as server:
        client, transport = server.client()
        cast, cast_transport = _raw_caster(topic)
        result = _absorb(server.pid, cast, prims, args.absorb_casts,
                         lambda: client.call({}, "cast_count"))
        cast_transport.cleanup()
        transport.cleanup()
    harness.log("no-op: absorbed %d casts at %.0f/s", result["counted"],
                result["rate"])
    return {"side": "noop", "absorb": result, "digest": fleet.digest(cloud)}


def gantt_side(args):
    import dbs
    import gantt_env

    from gantt import rpcapi

    harness.require_services("rabbit", args.db)
    cloud = fleet.build(args.hosts)
    prims = _primitives(cloud)
    spec = gantt_env.request_spec(cloud, group=False)
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, cloud).grow_to(args.hosts)
        db.dispose()
        # [scheduler] section again: oslo.config merges repeated sections
        with gantt_env.Daemon(tdb.url, extra=(
                "[scheduler]\nreport_persist_interval = %d"
                % args.persist_interval)) as daemon:
            client, transport = daemon.client()
            daemon.wait_ready()
            pid = daemon.worker_pids()[0]

            def counted():
                s = client.get_statistics(None)
                return s.reports_applied + s.reports_stale

            cast, cast_transport = _raw_caster(_stats_topic(args, daemon),
                                               rpcapi.EXCHANGE)
            prof = gantt_env.Profile(pid, args.profile)
            absorb = _absorb(pid, cast, prims, args.absorb_casts, counted,
                             profile=prof)
            absorb["profile"] = prof.result
            cast_transport.cleanup()
            harness.log("gantt: absorbed %d casts at %.0f/s",
                        absorb["counted"], absorb["rate"])
            load = _under_load(args, daemon, client, spec, counted)
            stats = client.get_statistics(None)
            transport.cleanup()
        log = daemon.log()
    return {"side": "gantt", "db": args.db, "hosts": args.hosts,
            "topic": "scheduler" if args.legacy_topic else "stats",
            "persist_interval": args.persist_interval,
            "absorb": absorb, "load": load,
            "reports_applied": stats.reports_applied,
            "reports_stale": stats.reports_stale,
            "rejected": stats.messages_rejected,
            "tracebacks": log.count("Traceback"),
            "digest": fleet.digest(cloud),
            "versions": gantt_env.gantt_versions()}


def _stats_topic(args, daemon):
    """Where the agents cast: the stats topic, or the scheduler topic as
    agents of older releases do (``--legacy-topic``)."""
    from gantt import rpcapi

    if args.legacy_topic:
        return daemon.topic
    return rpcapi.stats_topic(daemon.topic)


# -- (b) under load ---------------------------------------------------------


def _select_loop(client, spec, seconds):
    lat = []

    def call():
        client.select_destinations(None, spec, [str(uuid.uuid4())])

    harness.call_loop(call, seconds, lat)
    return lat


def _under_load(args, daemon, client, spec, counted):
    from gantt import rpcapi

    _select_loop(client, spec, 1.0)  # warm-up
    quiet = _select_loop(client, spec, args.seconds)
    harness.log("gantt: select p50 %.2f ms p99 %.2f ms without agents",
                harness.percentile(quiet, 50) * 1e3,
                harness.percentile(quiet, 99) * 1e3)
    steady = args.hosts / args.report_interval
    total = args.warmup + args.seconds
    schedule = [(0.0, total, steady),
                (args.warmup + args.burst_at, args.burst_seconds,
                 args.burst_rate)]
    agents = Agents(_stats_topic(args, daemon), rpcapi.EXCHANGE, args.hosts,
                    schedule).start()
    samples = []
    stop = threading.Event()
    base = counted()
    started = time.monotonic()

    def monitor():
        while not stop.wait(0.5):
            sent = agents.sent.value
            samples.append((time.monotonic() - started, sent,
                            counted() - base))

    mon = threading.Thread(target=monitor, daemon=True)
    mon.start()
    time.sleep(args.warmup)
    loaded = _select_loop(client, spec, args.seconds)
    load_end = time.monotonic() - started
    agents.stop()
    sent = agents.sent.value
    drain_deadline = time.monotonic() + args.drain_cap
    while counted() - base < sent and time.monotonic() < drain_deadline:
        time.sleep(0.2)
    drained = time.monotonic() - started - load_end
    stop.set()
    mon.join()
    harness.log("gantt: select p50 %.2f ms p99 %.2f ms with agents (%d "
                "casts sent)", harness.percentile(loaded, 50) * 1e3,
                harness.percentile(loaded, 99) * 1e3, sent)
    return {"quiet": harness.summary_ms(quiet),
            "loaded": harness.summary_ms(loaded),
            "offered_steady": steady, "burst_rate": args.burst_rate,
            "burst_seconds": args.burst_seconds, "sent": sent,
            "send_rate": sent / load_end, "samples": samples,
            "max_backlog": max((max(0, s - c) for _t, s, c in samples),
                           default=0),
            "end_backlog": (max(0, samples[-1][1] - samples[-1][2])
                            if samples else None),
            "drain_s": drained, "load_s": load_end}


# -- output -----------------------------------------------------------------


def table(results):
    g, ref = results["gantt"], results["noop"]
    share = g["absorb"]["rate"] / ref["absorb"]["rate"]
    load = g["load"]
    worse = load["loaded"]["p99"] / load["quiet"]["p99"] - 1
    return [
        {"label": "stats casts absorbed by one worker",
         "gantt": "%.0f/s" % g["absorb"]["rate"],
         "reference": "%.0f/s no-op" % ref["absorb"]["rate"],
         "ratio": share, "ratio_text": "%.0f%% of no-op" % (100 * share),
         "target": ">= 90% of no-op", "met": share >= 0.9},
        {"label": "select p99 under %d agents + %d/s burst" % (
            g["hosts"], load["burst_rate"]),
         "gantt": _ms(load["loaded"]["p99"]),
         "reference": "%s no agents" % _ms(load["quiet"]["p99"]),
         "ratio": 1 + worse, "ratio_text": "%+.0f%%" % (100 * worse),
         "target": "<= +20%", "met": worse <= 0.2,
         "note": ("only %d call(s) completed in the %.0f s under load"
                  % (load["loaded"]["n"], load["load_s"])
                  if load["loaded"]["n"] < 20 else None)},
        {"label": "cast backlog under that load",
         "gantt": "max %d, %d at end" % (load["max_backlog"],
                                         load["end_backlog"] or 0),
         "reference": "drained %.1fs after" % load["drain_s"],
         "ratio": None, "ratio_text": "sent %.0f/s" % load["send_rate"],
         "target": "no growth",
         "met": _backlog_flat(load)},
    ]


def _ms(value):
    return "%.1f s" % (value / 1e3) if value >= 1000 else "%.2f ms" % value


def _backlog_flat(load):
    """True when the backlog did not keep growing: it was back near zero
    within a few seconds of the load's end."""
    return load["drain_s"] <= 5.0


def show(results):
    g, ref = results["gantt"], results["noop"]
    print("\nStats ingest (casts on the %s topic)"
          % g.get("topic", "scheduler"))
    print("  absorption: Gantt %.0f casts/s (%d counted in %.2fs), no-op "
          "%.0f casts/s (%d in %.2fs)" % (
              g["absorb"]["rate"], g["absorb"]["counted"],
              g["absorb"]["drain_s"], ref["absorb"]["rate"],
              ref["absorb"]["counted"], ref["absorb"]["drain_s"]))
    load = g["load"]
    print("  select_destinations without agents: p50 %.2f ms p99 %.2f ms"
          % (load["quiet"]["p50"], load["quiet"]["p99"]))
    print("  with %d agents every 10 s + %d/s for %ds: p50 %.2f ms p99 "
          "%.2f ms" % (g["hosts"], load["burst_rate"],
                       load["burst_seconds"], load["loaded"]["p50"],
                       load["loaded"]["p99"]))
    print("  casts sent %d (%.0f/s); backlog max %d, at load end %s; "
          "drained %.1fs after; %d rejected, %d tracebacks" % (
              load["sent"], load["send_rate"], load["max_backlog"],
              load["end_backlog"], load["drain_s"], g["rejected"],
              g["tracebacks"]))


def add_arguments(parser):
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--absorb-casts", type=int, default=4000)
    parser.add_argument("--report-interval", type=float, default=10.0)
    parser.add_argument("--burst-rate", type=float, default=2000.0)
    parser.add_argument("--burst-seconds", type=float, default=4.0)
    parser.add_argument("--burst-at", type=float, default=3.0,
                        help="seconds into the measured load phase")
    parser.add_argument("--warmup", type=float, default=2.0,
                        help="agents' head start before measuring")
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--drain-cap", type=float, default=20.0,
                        help="how long to wait for a backlog to drain")
    parser.add_argument("--legacy-topic", action="store_true",
                        help="agents cast on the scheduler topic, as "
                             "agents of older releases do, instead of the "
                             "stats topic")
    parser.add_argument("--persist-interval", type=int, default=3600,
                        help="the worker's [scheduler] "
                             "report_persist_interval: by default longer "
                             "than the run, so that what is measured is "
                             "the taking of casts, not how long ago the "
                             "hosts were stored (0: every report is also a "
                             "database write)")
    parser.add_argument("--db", default="mysql")
    parser.add_argument("--profile", action="store_true",
                        help="sample the worker with py-spy while it "
                             "drains the queued casts")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "noop": noop_side}, show)


if __name__ == "__main__":
    sys.exit(main())
