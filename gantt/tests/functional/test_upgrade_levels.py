"""Rolling upgrades over RabbitMQ: a caller capped with ``[upgrade_levels]
scheduler`` keeps talking to workers of an older release.

The older worker is played by an oslo.messaging server on the real broker
that serves RPC API 1.2 and reads objects as a 1.2 worker does: it refuses
any object (nested ones included) newer than what 1.2 carries. The current
daemon is the real ``gantt-scheduler``.
"""

import os
import queue
import subprocess
import sys
import uuid

import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt import rpc
from gantt import rpcapi
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa
from gantt.objects import provider
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import versions
from gantt.tests import factories as f
from gantt.tests.functional import waiting


class OldWorker:
    """A worker of the release that served RPC API 1.2."""

    target = messaging.Target(version="1.2")

    def __init__(self):
        self.reports = queue.Queue()
        self.reads = versions.OBJECT_VERSIONS["1.2"]

    def _too_new(self, primitive):
        """The nested (name, version) pairs a 1.2 worker cannot read."""
        bad = []
        if isinstance(primitive, dict):
            name = primitive.get("gantt_object.name")
            if name is not None:
                known = self.reads.get(name)
                if known is None or (versions.parse(
                        primitive["gantt_object.version"])
                        > versions.parse(known)):
                    bad.append((name, primitive["gantt_object.version"]))
            for value in primitive.values():
                bad.extend(self._too_new(value))
        elif isinstance(primitive, list):
            for value in primitive:
                bad.extend(self._too_new(value))
        return bad

    def update_resource_stats(self, ctxt, compute_node):
        self.reports.put((compute_node, self._too_new(compute_node)))


@pytest.fixture
def old_worker(rabbit):
    transport = rpc.get_transport(_conf(), url=rabbit)
    topic = "gantt-old-" + uuid.uuid4().hex[:10]
    worker = OldWorker()
    server = messaging.get_rpc_server(
        transport, messaging.Target(exchange=rpcapi.EXCHANGE, topic=topic,
                                    server="old-worker"),
        [worker], executor="threading")
    server.start()
    worker.topic, worker.transport = topic, transport
    yield worker
    server.stop()
    server.wait()
    transport.cleanup()


def _conf():
    from oslo_config import cfg
    conf = cfg.ConfigOpts()
    conf([], project="gantt")
    return conf


def _upgrading_node():
    node = f.compute_node_obj("upgrading1", zone="az1")
    node.instance_uuids = []
    node.numa_cells = [numa.NUMACell(id=0, cpuset=[0, 1, 2, 3],
                                     memory_mb=32768,
                                     siblings=[[0, 2], [1, 3]])]
    node.child_providers = [provider.ResourceProvider(
        uuid=f.host_uuid("upgrading1_gpu0"), name="upgrading1_gpu0",
        parent_provider_uuid=node.uuid, inventories=[], traits=[])]
    return node


def _client(worker, cap):
    # an agent upgraded before the workers casts on the topic the old
    # workers listen on (see the upgrade guide's stats topic section)
    return rpc_client.SchedulerClient(worker.transport, worker.topic,
                                      timeout=waiting.CALL,
                                      stats_topic=worker.topic,
                                      version_cap=cap)


def _received(worker):
    try:
        return worker.reports.get(timeout=waiting.WAIT)
    except queue.Empty:
        raise AssertionError("the old worker received nothing") from None


def test_a_capped_agent_reports_what_an_old_worker_reads(old_worker):
    _client(old_worker, "1.2").update_resource_stats(None, _upgrading_node())
    primitive, too_new = _received(old_worker)
    assert too_new == []
    assert primitive["gantt_object.version"] == "1.2"
    data = primitive["gantt_object.data"]
    assert "child_providers" not in data           # a 1.3 field
    assert data["numa_cells"][0]["gantt_object.version"] == "1.0"
    assert "siblings" not in data["numa_cells"][0]["gantt_object.data"]
    assert data["host"] == "upgrading1"


def test_without_the_cap_the_old_worker_could_not_read_it(old_worker):
    _client(old_worker, None).update_resource_stats(None, _upgrading_node())
    _primitive, too_new = _received(old_worker)
    assert ("ComputeNode", cn_obj.ComputeNode.VERSION) in too_new
    assert ("NUMACell", "1.1") in too_new


def test_a_capped_caller_is_told_before_sending_a_newer_method(old_worker):
    client = _client(old_worker, "1.2")
    with pytest.raises(exception.VersionCapped) as err:
        client.report_resource_stats(None, _upgrading_node())
    assert err.value.kwargs["version"] == "1.3"
    assert old_worker.reports.empty()


def test_todays_daemon_serves_a_capped_caller(daemon):
    """Callers capped for an older worker still work against this one:
    a report backported to 1.2, a request backported to 1.0, a claim."""
    capped = rpc_client.SchedulerClient(daemon.transport, daemon.topic,
                                        timeout=waiting.CALL,
                                        version_cap="1.2")
    node = _upgrading_node()
    node.child_providers = []
    capped.update_resource_stats(None, node)
    [state] = [s for s in daemon.wait_for_hosts(1)
               if s.host == "upgrading1"]
    assert state.host == "upgrading1"
    spec = f.request(f.flavor(vcpus=2, memory_mb=4096, root_gb=20))
    [instance] = f.uuids(1)
    [[chosen, *_alternates]] = capped.select_destinations(None, spec,
                                                          [instance])
    assert chosen.service_host == "upgrading1"
    assert capped.release(None, instance) is True
    assert not daemon.client.get_statistics(None).messages_rejected
    with pytest.raises(exception.VersionCapped):
        capped.get_allocation_candidates(None, spec)


def test_the_operator_cli_honours_the_cap(daemon, tmp_path):
    daemon.client.update_resource_stats(None, f.compute_node_obj("cli1"))
    daemon.wait_for_hosts(1)
    conf = tmp_path / "capped.conf"
    conf.write_text(open(daemon.conf_file).read()
                    + "\n[upgrade_levels]\nscheduler = 1.0\n")

    def gantt(*args):
        return subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "gantt"),
             "--config-file", str(conf), *args],
            capture_output=True, text=True, timeout=waiting.CALL)

    listed = gantt("host-list")
    assert listed.returncode == 0, listed.stderr
    assert "cli1" in listed.stdout
    refused = gantt("aggregate-list")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "gantt: get_aggregates needs RPC API 1.2" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_worker_replies_at_the_versions_of_the_call(daemon):
    """An older caller (it sends get_statistics at 1.0 and reads only
    SchedulerStatistics 1.0) gets 1.0; today's caller gets 1.1."""
    target = messaging.Target(exchange=rpcapi.EXCHANGE, topic=daemon.topic,
                              version="1.0")
    old_caller = messaging.get_rpc_client(daemon.transport, target,
                                          timeout=waiting.CALL)
    primitive = old_caller.call({}, "get_statistics")
    assert primitive["gantt_object.version"] == "1.0"
    assert "peer_updates" not in primitive["gantt_object.data"]
    assert "worker" in primitive["gantt_object.data"]

    current = daemon.client.get_statistics(None)
    assert current.rpc_api_version == rpcapi.RPC_API_VERSION
    assert current.obj_attr_is_set("peer_updates")

    def capped_at(cap):
        return rpc_client.SchedulerClient(
            daemon.transport, daemon.topic, timeout=waiting.CALL,
            version_cap=cap).get_statistics(None)

    stats = capped_at("1.4")                              # came as 1.1
    assert stats.obj_attr_is_set("peer_updates")
    assert not stats.obj_attr_is_set("rpc_api_version")
    stats = capped_at("1.0")                              # came as 1.0
    assert stats.obj_attr_is_set("worker")
    assert not stats.obj_attr_is_set("peer_updates")
