"""3. End to end over RabbitMQ: select_destinations vs a no-op call.

Gantt side: a real ``gantt-scheduler`` (one worker, defaults) on a
throw-away MariaDB database holding the shared cloud, called through
``SchedulerClient.select_destinations`` for one m1.medium instance per call
(claim in MariaDB, alternates returned): latency with 1 caller, then calls/s
with 4 caller threads sharing one client.

Reference side: the no-op oslo.messaging server of ``ref_rpc.py`` on the
same broker, called the same way (1 caller, then 4 threads).

    python benchmarks/rpc_e2e.py [--hosts 1000] [--seconds 8]
"""

import argparse
import sys
import uuid

import fleet
import harness


def _measure(call, args):
    warm = harness.call_loop(call, 1.0)
    lat = []
    count = harness.call_loop(call, args.seconds, lat)
    rate4, lat4 = harness.threaded_rate(call, args.threads, args.seconds)
    return {"warmup_calls": warm, "calls_1": count,
            "latency_1": harness.summary_ms(lat),
            "rate_1": count / sum(lat),
            "threads": args.threads, "rate_n": rate4,
            "latency_n": harness.summary_ms(lat4)}


def noop_side(args):
    import ref_rpc

    harness.require_services("rabbit")
    topic = "gantt-bench-noop-" + uuid.uuid4().hex[:8]
    with ref_rpc.NoopServer(topic) as server:
        client, transport = server.client()
        result = _measure(lambda: client.call({}, "noop"), args)
        transport.cleanup()
    harness.log("no-op: p50 %.3f ms, %.0f calls/s with %d threads",
                result["latency_1"]["p50"], result["rate_n"], args.threads)
    result.update(side="noop", versions=harness.versions(
        "oslo.messaging", "kombu"))
    return result


def gantt_side(args):
    import dbs
    import gantt_env

    harness.require_services("rabbit", args.db)
    cloud = fleet.build(args.hosts)
    spec = gantt_env.request_spec(cloud, group=False)
    extra = ""
    if args.notifications:
        # a listener drains them, as a consumer in a cloud would
        topic = "gantt-bench-notifications-" + uuid.uuid4().hex[:8]
        extra = ("[oslo_messaging_notifications]\ndriver = messagingv2\n"
                 "topics = %s\n" % topic)
    with dbs.ThrowawayDB(args.db) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, cloud).grow_to(args.hosts)
        db.dispose()
        with gantt_env.Daemon(tdb.url, extra=extra) as daemon, \
                _NotificationDrain(args.notifications and topic) as drain:
            client, transport = daemon.client()
            ready = daemon.wait_ready()
            harness.log("gantt-scheduler ready in %.1fs with %d hosts",
                        ready, args.hosts)

            def call():
                placed = client.select_destinations(
                    None, spec, [str(uuid.uuid4())])
                assert placed[0][0].claimed

            with gantt_env.Profile(daemon.worker_pids()[0], args.profile,
                                   within="select_destinations") as prof:
                result = _measure(call, args)
            stats = client.get_statistics(None)
            transport.cleanup()
        log = daemon.log()
    harness.log("gantt: p50 %.3f ms, %.0f calls/s with %d threads",
                result["latency_1"]["p50"], result["rate_n"], args.threads)
    result.update(side="gantt", db=args.db, hosts=args.hosts,
                  notifications=drain.count,
                  digest=fleet.digest(cloud), tracebacks=log.count(
                      "Traceback"), placements=stats.placements,
                  claim_conflicts=stats.claim_conflicts,
                  server_ms=harness.summary_ms([x / 1e3 for x in (
                      daemon.server_times_ms()[result["warmup_calls"]:][
                          :result["calls_1"]])]),
                  profile=prof.result,
                  versions=gantt_env.gantt_versions())
    return result


class _NotificationDrain:
    """Consumes the notifications of ``topic`` (and counts them); a no-op
    without a topic."""

    def __init__(self, topic):
        self.topic = topic
        self.count = None
        self._listener = self._transport = None

    def __enter__(self):
        if not self.topic:
            return self
        import oslo_messaging as messaging

        drain = self

        class Endpoint:
            def info(self, ctxt, publisher_id, event_type, payload,
                     metadata):
                drain.count += 1

            error = info

        self.count = 0
        self._transport = messaging.get_notification_transport(
            _rabbit_conf(), url=harness.RABBIT_URL)
        self._listener = messaging.get_notification_listener(
            self._transport, [messaging.Target(topic=self.topic)],
            [Endpoint()], executor="threading")
        self._listener.start()
        return self

    def __exit__(self, *exc):
        if self._listener is not None:
            self._listener.stop()
            self._listener.wait()
            self._transport.cleanup()
            # notification queues outlive their listener
            import kombu
            with kombu.Connection(harness.RABBIT_URL.replace(
                    "rabbit://", "amqp://", 1)) as conn:
                channel = conn.channel()
                for priority in ("info", "error"):
                    channel.queue_delete("%s.%s" % (self.topic, priority))


def _rabbit_conf():
    from oslo_config import cfg
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    return conf


def table(results):
    g, ref = results["gantt"], results["noop"]
    gp, rp = g["latency_1"]["p50"], ref["latency_1"]["p50"]
    share = g["rate_n"] / ref["rate_n"]
    return [
        {"label": "select_destinations p50, 1 caller (%s)"
                  % harness.DB_LABELS[g["db"]],
         "gantt": "%.2f ms" % gp, "reference": "%.2f ms no-op" % rp,
         "ratio": gp / rp, "ratio_text": "%.2fx no-op" % (gp / rp),
         "target": "<= 3 ms", "met": gp <= 3.0},
        {"label": "select_destinations p99, 1 caller",
         "gantt": "%.2f ms" % g["latency_1"]["p99"],
         "reference": "%.2f ms no-op" % ref["latency_1"]["p99"],
         "ratio": g["latency_1"]["p99"] / ref["latency_1"]["p99"],
         "ratio_text": "%.2fx no-op" % (g["latency_1"]["p99"]
                                         / ref["latency_1"]["p99"]),
         "target": None, "met": None},
        {"label": "calls/s, %d callers" % g["threads"],
         "gantt": "%.0f/s" % g["rate_n"],
         "reference": "%.0f/s no-op" % ref["rate_n"],
         "ratio": share, "ratio_text": "%.0f%% of no-op" % (100 * share),
         "target": ">= 90% of no-op", "met": share >= 0.9},
    ]


def show(results):
    print("\nEnd to end over RabbitMQ (ms; calls/s)")
    print("%-34s %14s %14s" % ("", "Gantt", "no-op"))
    g, ref = results["gantt"], results["noop"]
    for label, key in (("p50, 1 caller", "p50"), ("p90, 1 caller", "p90"),
                       ("p99, 1 caller", "p99")):
        print("%-34s %14.3f %14.3f" % (label, g["latency_1"][key],
                                      ref["latency_1"][key]))
    print("%-34s %14.0f %14.0f" % ("calls/s, 1 caller", g["rate_1"],
                                  ref["rate_1"]))
    print("%-34s %14.0f %14.0f" % ("calls/s, %d callers" % g["threads"],
                                  g["rate_n"], ref["rate_n"]))
    print("Gantt: %d placements, %d claim conflicts, %d tracebacks in the "
          "log; the worker's own time per call (1 caller) p50 %.2f ms" % (
              g["placements"], g["claim_conflicts"], g["tracebacks"],
              g.get("server_ms", {}).get("p50", float("nan"))))
    if g.get("notifications") is not None:
        print("Notifications on: %d received by the listener"
              % g["notifications"])


def add_arguments(parser):
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--db", default="mysql")
    parser.add_argument("--notifications", action="store_true",
                        help="the daemon emits select_destinations "
                             "notifications (messagingv2), drained by a "
                             "listener in this process")
    parser.add_argument("--profile", action="store_true",
                        help="sample the worker's request threads with "
                             "py-spy (--idle: waits count)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "noop": noop_side}, show)


if __name__ == "__main__":
    sys.exit(main())
