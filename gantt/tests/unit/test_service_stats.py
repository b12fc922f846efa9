"""SchedulerWorker's servers: which topics, in which order, and stopping.

oslo.messaging is replaced by recorders here; the real wiring runs in
gantt/tests/functional/test_stats_ingest.py.
"""

import pytest

from gantt import rpc
from gantt import service
from gantt.rpcapi import client as rpc_client
from gantt.scheduler.intake import batching
from gantt.tests import factories


class _Server:
    def __init__(self, log, transport, target, endpoints, **kwargs):
        self.log = log
        self.transport = transport
        self.target = target
        self.endpoints = endpoints
        self.kwargs = kwargs

    def start(self, override_pool_size=None):
        self.log.append(("start", self.transport, self.target.topic))

    def stop(self):
        self.log.append(("stop", self.transport, self.target.topic))

    def wait(self):
        pass


@pytest.fixture
def worker(conf, sqlite_db, monkeypatch):
    log = []
    conf.set_override("connection", sqlite_db.url, "database")
    conf.set_override("topic", "sched", "scheduler")
    conf.set_override("usage_sync_interval", 0, "scheduler")
    monkeypatch.setattr(rpc, "get_transport",
                        lambda conf, url=None: url or "top")
    monkeypatch.setattr(rpc, "get_server",
                        lambda *a, **kw: _Server(log, *a, **kw))
    monkeypatch.setattr(rpc_client.SchedulerClient, "from_conf",
                        classmethod(lambda cls, conf, transport: None))
    w = service.SchedulerWorker(conf)
    w.log = log
    yield w
    w.stop()


def _started(worker):
    return [(bus, topic) for what, bus, topic in worker.log
            if what == "start"]


def test_stats_have_their_own_servers_started_before_the_calls(worker):
    worker.conf.set_override("stats_transport_urls", ["cell1"], "cells")
    worker.start()
    # every stats server first: answering a call means stats are bound
    assert _started(worker) == [("top", "sched-stats"),
                                ("cell1", "sched-stats"),
                                ("top", "sched"), ("cell1", "sched")]
    stats, call = worker.servers[0][0], worker.servers[2][0]
    assert stats.kwargs["inline"] == {
        batching.METHOD: worker.intake.take}
    assert stats.kwargs["after_batch"] == worker.intake.drain
    assert stats.kwargs["batch"][0] > 1
    # older agents' casts on the scheduler topic go to the same intake
    assert call.kwargs["inline"] == {
        batching.METHOD: worker.intake.offer}
    assert call.kwargs.get("batch", (1, None)) == (1, None)


def test_a_stats_topic_equal_to_the_topic_shares_the_call_server(worker):
    worker.conf.set_override("stats_topic", "sched", "scheduler")
    worker.start()
    assert _started(worker) == [("top", "sched")]


def test_an_operator_chosen_stats_topic(worker):
    worker.conf.set_override("stats_topic", "reports", "scheduler")
    worker.start()
    assert _started(worker) == [("top", "reports"), ("top", "sched")]


def test_stopping_applies_what_was_taken(worker):
    worker.start()
    worker.intake.take(factories.compute_node_obj(
        "host1", sequence=5).obj_to_primitive())
    assert len(worker.scheduler.stats.cache) == 0
    worker.stop()
    states = worker.scheduler.operator.get_host_states()
    assert [s.report_sequence for s in states] == [5]
    assert [what for what, _bus, _topic in worker.log].count("stop") == 2
