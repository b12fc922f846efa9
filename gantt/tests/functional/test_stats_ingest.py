"""A flood of stats casts against the real daemon and RabbitMQ.

The worker is paused (SIGSTOP) while thousands of reports are cast, as a
burst of agents would leave them queued, then resumed. Calls must not wait
for that backlog (stats have their own topic, connection and listener),
and once it is worked off every host's newest report is in the cache.
Nothing here is timed: "promptly" is "before the backlog was worked off",
read from the worker's own counters.
"""

import os
import signal
import subprocess

from gantt import rpcapi
from gantt.tests import factories as f
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

HOSTS = 100
ROUNDS = 40            # reports per host in the backlog
LEGACY_HOSTS = 10      # hosts whose newest report comes the old way


def _worker_pid(daemon):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid",
                          str(daemon.proc.pid)],
                         capture_output=True, text=True).stdout.split()
    assert len(out) == 1, out
    return int(out[0])



def _at(primitive, sequence):
    data = dict(primitive["gantt_object.data"], report_sequence=sequence)
    return dict(primitive, **{"gantt_object.data": data})


def _counted(stats):
    return (stats.reports_applied + stats.reports_stale
            + stats.messages_rejected)


def _wait_counted(client, count):
    return waiting.until("%d reports counted" % count, lambda: waiting.when(
        client.get_statistics(None), lambda s: _counted(s) >= count))


def test_calls_do_not_wait_behind_a_backlog_of_reports(daemon):
    client = daemon.client
    names = ["flood%03d" % i for i in range(HOSTS)]
    for name in names:
        client.update_resource_stats(None, f.compute_node_obj(
            name, sequence=1))
    daemon.wait_for_hosts(HOSTS)
    before = _counted(_wait_counted(client, HOSTS))
    primitives = {n: f.compute_node_obj(n, sequence=1).obj_to_primitive()
                  for n in names}
    stats_topic = conftest.raw_fanout(daemon, rpcapi.stats_topic(daemon.topic))
    legacy_topic = conftest.raw_fanout(daemon, daemon.topic)
    legacy = set(names[:LEGACY_HOSTS])
    newest = {}
    sent = 0
    pid = _worker_pid(daemon)
    os.kill(pid, signal.SIGSTOP)
    try:
        # rounds of every host, sequences growing; the last round of the
        # legacy hosts goes to the scheduler topic, as older agents cast
        for r in range(ROUNDS):
            for name in names:
                sequence = 100 + r
                last = r == ROUNDS - 1
                caster = (legacy_topic if last and name in legacy
                          else stats_topic)
                caster.cast({}, "update_resource_stats",
                            compute_node=_at(primitives[name], sequence))
                newest[name] = sequence
                sent += 1
        # an out-of-order older report, as a slow agent's retry would be
        stats_topic.cast({}, "update_resource_stats",
                         compute_node=_at(primitives[names[-1]], 50))
        sent += 1
    finally:
        os.kill(pid, signal.SIGCONT)

    # a call sent after the backlog is answered before it is worked off
    selections = client.select_destinations(None, f.request(), f.uuids(1))
    answered = _counted(client.get_statistics(None)) - before
    assert selections and selections[0][0].claimed
    assert answered < sent, (
        "the call was answered only after all %d reports were taken"
        % sent)

    stats = _wait_counted(client, before + sent)
    assert _counted(stats) - before == sent
    assert stats.messages_rejected == 0
    # every host holds its newest report, whichever topic brought it
    held = {s.host: s.report_sequence
            for s in client.get_host_states(None) if s.host in newest}
    assert held == newest
    # most of the backlog was never applied: older than what was queued
    assert stats.reports_stale > 0
    assert "Traceback" not in daemon.log()
