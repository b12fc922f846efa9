"""Volumes, routers and containers through the daemon: the real
gantt-scheduler on RabbitMQ, once with MariaDB and once with PostgreSQL,
configured with the profiles of ``doc/examples/services.conf``.

The example clients of ``doc/examples`` (which import nothing of Gantt)
report pools, L3 agents and container hosts as providers of their kinds
(ProviderReport 1.2) and place, claim and release volumes, routers and
containers with flavorless RequestSpecs naming their profile; the
transcripts and the database show each step did what the guides say.
The tests below them pin what the clients cannot see: a compute node is
never a container host or an agent, whatever room it has. Just over 400
lines: the stories share one daemon fixture and the clients' runner.
"""

import ast
import os
import re
import subprocess
import sys
import time
import uuid

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt import rpc
from gantt import rpcapi
from gantt.db import allocations
from gantt.db import audit
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.objects import request_spec
from gantt.objects import selection
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.functional import test_notifications as notifications
from gantt.tests.functional import waiting
from gantt.tests.functional.test_notifications import _delete_queues

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
EXAMPLES = os.path.join(ROOT, "doc", "examples")
CLIENTS = ("volume_client.py", "services_client.py", "kinds_client.py")
with open(os.path.join(EXAMPLES, "services.conf")) as _conf:
    PROFILES = _conf.read()


def _imports(path):
    with open(path) as source:
        tree = ast.parse(source.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module.split(".")[0]


@pytest.mark.parametrize("name", CLIENTS)
def test_the_example_clients_import_no_gantt(name):
    assert set(_imports(os.path.join(EXAMPLES, name))) <= {
        "argparse", "queue", "sys", "time", "uuid", "external_client",
        "kinds_client", "oslo_messaging"}


@pytest.fixture
def services(server_db, daemon_factory):
    """A daemon with the three profiles, notifying on a topic of its own."""
    topic = "gantt-test-services-" + uuid.uuid4().hex[:8]
    daemon = daemon_factory(server_db.url, extra=PROFILES + (
        "\n[oslo_messaging_notifications]\ndriver = messagingv2\n"
        "topics = %s\n" % topic))
    daemon.database = server_db.db
    daemon.notification_topic = topic
    yield daemon
    _delete_queues(daemon, topic)


def _run(daemon, rabbit, script, *args):
    # from / so that nothing of the checkout is on sys.path (the import
    # check above proves the scripts need no gantt)
    result = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, script), "--transport-url",
         rabbit, "--topic", daemon.topic, "--prefix", "svc", "--zone", "az1",
         "--timeout", "30", *args],
        capture_output=True, text=True, timeout=waiting.CALL, cwd="/")
    assert result.returncode == 0, (
        "exit %d\n--- stdout\n%s\n--- stderr\n%s\n--- daemon log\n%s" % (
            result.returncode, result.stdout, result.stderr, daemon.log()))
    assert result.stdout.rstrip().endswith("OK"), result.stdout
    return result.stdout


def test_volumes_from_a_client_without_gantt(services, rabbit):
    transcript = _run(services, rabbit, "volume_client.py")
    assert transcript.count("kind=volume") == 3, transcript
    thin = provider_uuid("svc-thin-1")
    assert ("-> placed on svc-thin-1, claimed {'%s': {'DISK_GB': 100}}"
            % thin) in transcript, transcript
    assert transcript.count("-> placed on svc-thin-1") == 2, transcript
    assert "RemoteError exc_type=NoValidHost" in transcript, transcript
    assert "svc-thin-1: DISK_GB used 0" in transcript, transcript
    assert invariants.allocations(services.database) == {}
    kinds = {s.host: s.kind for s in services.client.get_host_states(None)}
    assert kinds == {"svc-thin-1": "volume", "svc-thin-2": "volume",
                     "svc-thick": "volume"}


def test_routers_and_containers_from_a_client_without_gantt(services,
                                                            rabbit):
    transcript = _run(services, rabbit, "services_client.py",
                      "--notification-topic", services.notification_topic)
    placed = [line.split("-> placed on ")[1] for line in
              transcript.splitlines() if line.lstrip().startswith("router ")]
    assert sorted(placed[:3]) == ["svc-agent-1", "svc-agent-2",
                                  "svc-agent-3"], transcript
    assert "HA router bindings -> placed on" in transcript, transcript
    assert "RemoteError exc_type=ProvidersFull" in transcript, transcript
    assert transcript.count("-> placed on svc-ctr-1") == 2, transcript
    assert "the waiting container -> placed on svc-ctr-2" in transcript
    assert "provider.vacant: svc-ctr-2 (kind container" in transcript
    assert "retire_provider svc-ctr-2 at generation" in transcript
    # everything released, the retired container host gone
    assert invariants.allocations(services.database) == {}
    left = {s.host: s.kind for s in services.client.get_host_states(None)}
    assert left == {"svc-agent-1": "network", "svc-agent-2": "network",
                    "svc-agent-3": "network", "svc-ctr-1": "container"}


# -- what a client cannot see: kinds keep requests apart ------------------


def provider_uuid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt.example"))


def _report(daemon, name, kind, inventories, **fields):
    report = provider.ProviderReport(
        provider=provider.ResourceProvider(
            uuid=provider_uuid(name), name=name, inventories=[
                compute_node.Inventory(resource_class=rc, total=total)
                for rc, total in inventories.items()]),
        report_sequence=1, kind=kind, service="svc", **fields)
    assert daemon.client.update_provider(None, report).applied


def _spec(resources, profile, count=1, **fields):
    return request_spec.RequestSpec(
        flavor=None, num_instances=count, profile=profile,
        request_groups=[request_spec.RequestGroup(resources=resources)],
        **fields)


def _place(daemon, spec, count=1):
    lists = daemon.client.select_destinations(None, spec, f.uuids(count))
    return [sels[0].service_host for sels in lists]


def test_a_compute_node_is_never_a_container_host(services):
    """A huge compute node beside a full container host: the container
    request (its profile's kind alone makes it one: no fill, no
    instance named) gets ProvidersFull, and the compute node nothing."""
    services.client.update_resource_stats(None, f.compute_node_obj(
        "nova-1", vcpus=64, memory_mb=262144))
    _report(services, "ctr-1", "container", {"VCPU": 1, "MEMORY_MB": 2048},
            instance_uuid=str(uuid.uuid4()))
    services.wait_for_hosts(2)
    container = _spec({"VCPU": 1, "MEMORY_MB": 1024}, "container")
    assert _place(services, container) == ["ctr-1"]
    with pytest.raises(exception.ProvidersFull) as full:
        _place(services, container)
    assert full.value.kwargs["hosts"] == 1
    # the same resources without the profile: an instance, on nova-1
    assert _place(services, _spec({"VCPU": 1, "MEMORY_MB": 1024},
                                  None)) == ["nova-1"]


def test_ha_router_with_more_bindings_than_agents_is_refused(services):
    for name in ("net-1", "net-2"):
        _report(services, name, "network", {"CUSTOM_L3_ROUTER": 100})
    # a compute node offering the class is no agent
    node = f.compute_node_obj("nova-1")
    node.inventories = [compute_node.Inventory(
        resource_class="CUSTOM_L3_ROUTER", total=100)]
    services.client.update_resource_stats(None, node)
    services.wait_for_hosts(3)
    group = request_spec.InstanceGroup(uuid=str(uuid.uuid4()),
                                       policy="anti-affinity")
    with pytest.raises(exception.NoValidHost) as refused:
        _place(services, _spec({"CUSTOM_L3_ROUTER": 1}, "network", 3,
                               instance_group=group), 3)
    assert not isinstance(refused.value, exception.ProvidersFull)
    assert invariants.allocations(services.database) == {}
    assert sorted(_place(services, _spec(
        {"CUSTOM_L3_ROUTER": 1}, "network", 2, instance_group=group),
        2)) == ["net-1", "net-2"]


def test_an_ha_router_over_zones_and_a_binding_added_later(services):
    """Four agents of kind network in two zones: an HA router of two
    bindings hinted at both zones takes the least loaded agent of each;
    a third binding of the same group, asked for later, finds both
    agents taken and goes to a third; then the third's zone has no agent
    left for the group, and the other zone one, the fourth."""
    zones = {"net-a1": "az1", "net-a2": "az1", "net-b1": "az2",
             "net-b2": "az2"}
    for name, zone in zones.items():
        _report(services, name, "network", {"CUSTOM_L3_ROUTER": 100},
                availability_zone=zone)
    services.wait_for_hosts(4)
    # net-a1 and net-b2 host one router each: the least loaded are the
    # others, and without the spread both bindings could go to az1
    for name in ("net-a1", "net-b2"):
        assert services.client.claim_allocations(
            None, str(uuid.uuid4()), selection.AllocationRequest(
                allocations=[selection.AllocationItem(
                    resource_provider_uuid=provider_uuid(name),
                    resources={"CUSTOM_L3_ROUTER": 1})]))
    group = request_spec.InstanceGroup(uuid=str(uuid.uuid4()),
                                       policy="anti-affinity")

    def binding(count, **fields):
        return _place(services, _spec(
            {"CUSTOM_L3_ROUTER": 1}, "network", count,
            instance_group=group, **fields), count)

    pair = binding(2, scheduler_hints={
        "availability_zone_hints": ["az1", "az2"]})
    assert sorted(pair) == ["net-a2", "net-b1"]
    third = binding(1, scheduler_hints={
        "availability_zone_hints": ["az1", "az2"]})
    assert third[0] in ("net-a1", "net-b2")
    [left] = {"net-a1", "net-b2"} - set(third)
    with pytest.raises(exception.NoValidHost):
        binding(1, availability_zone=zones[third[0]])
    assert binding(1, availability_zone=zones[left]) == [left]
    with pytest.raises(exception.NoValidHost):
        binding(1)
    with services.database.begin() as conn:
        hosts = allocations.group_hosts(conn, group.uuid)
    assert hosts == dict.fromkeys(zones, 1)


def test_router_bindings_and_volumes_by_rack(services):
    """L3 agents and volume backends report their racks. The example
    profiles have no ServerGroupTopologyFilter: the claim alone keeps
    the policies, refusing a second member in a rack (the worker tries
    the next candidate). An HA router's bindings under anti-affinity at
    rack take one agent per rack; the fourth fails to claim on every
    agent. A volume group under max-per 2 at rack takes two volumes in
    rack a01 and two in b01 (on its one backend), then none. The audit
    finds no breach."""
    racks = {"net-1": "a01", "net-2": "a01", "net-3": "a02", "net-4": "b01",
             "vol-1": "a01", "vol-2": "a01", "vol-3": "b01"}
    for name, rack in racks.items():
        kind, rc = (("network", "CUSTOM_L3_ROUTER") if name[:3] == "net"
                    else ("volume", "DISK_GB"))
        _report(services, name, kind, {rc: 1000}, location="rack=" + rack)
    services.wait_for_hosts(len(racks))

    def group(rule, limit=1):
        return request_spec.InstanceGroup(
            uuid=str(uuid.uuid4()), policy="soft-affinity", level_policies=[
                request_spec.GroupLevelPolicy(level="rack", rule=rule,
                                              limit=limit)])

    router = group("anti-affinity")
    bindings = [_place(services, _spec({"CUSTOM_L3_ROUTER": 1}, "network",
                                       instance_group=router))[0]
                for _ in range(3)]
    assert sorted(racks[b] for b in bindings) == ["a01", "a02", "b01"]
    with pytest.raises(exception.NoValidHost) as refused:
        _place(services, _spec({"CUSTOM_L3_ROUTER": 1}, "network",
                               instance_group=router))
    # every agent failed to claim, every other provider is of another kind:
    # 7 rows for 7 providers (a re-read of the providers racing a report
    # once left an 8th, see gantt/tests/unit/scheduler/test_provider_reloads)
    total, others = re.search(r"0 of (\d+) hosts available: (\d+) not of "
                              r"kind network, 4 failed to claim",
                              str(refused.value)).groups()
    assert (int(total), int(others)) == (len(racks), len(racks) - 4)
    with services.database.begin() as conn:
        assert allocations.group_hosts(conn, router.uuid) == dict.fromkeys(
            bindings, 1)

    volumes = group("max-per", 2)

    def volume():
        return _place(services, _spec({"DISK_GB": 100}, "volume",
                                      instance_group=volumes))[0]

    placed = [volume() for _ in range(4)]
    assert sorted(racks[v] for v in placed) == ["a01", "a01", "b01", "b01"]
    with pytest.raises(exception.NoValidHost) as refused:
        volume()
    assert "3 failed to claim" in str(refused.value), refused.value
    with services.database.begin() as conn:
        assert audit.level_breaches(conn) == []


def test_a_named_instance_full_and_a_bad_one(services):
    """on_instance pins a container to one host: when that host is full
    the answer is ProvidersFull for one host (a new instance will not
    help), and a name that is not an instance uuid is InvalidRequest;
    neither claims anything."""
    instance = str(uuid.uuid4())
    for name, link in (("ctr-a", str(uuid.uuid4())), ("ctr-b", instance)):
        _report(services, name, "container", {"VCPU": 4, "MEMORY_MB": 8192},
                instance_uuid=link)
    services.wait_for_hosts(2)

    def container(on_instance):
        return _spec({"VCPU": 3, "MEMORY_MB": 1024}, "container",
                     scheduler_hints={"on_instance": [on_instance]})

    assert _place(services, container(instance)) == ["ctr-b"]
    before = invariants.allocations(services.database)
    with pytest.raises(exception.ProvidersFull) as full:
        _place(services, container(instance))
    assert full.value.kwargs["hosts"] == 1
    with pytest.raises(exception.InvalidRequest):
        _place(services, container("ctr-b"))
    assert invariants.allocations(services.database) == before


# -- a retirement reaches every worker ------------------------------------


def _raw_call(rabbit, topic, method, **kwargs):
    """A call by plain oslo.messaging, casting nothing after it (as a
    service that does not know of ``providers_changed`` would)."""
    conf = cfg.ConfigOpts()
    rpc.register_opts(conf)
    conf([])
    transport = messaging.get_rpc_transport(conf, url=rabbit)
    try:
        client = messaging.get_rpc_client(transport, messaging.Target(
            exchange=rpcapi.EXCHANGE, topic=topic), timeout=waiting.CALL)
        return client.prepare(version="1.9").call({}, method, **kwargs)
    finally:
        transport.cleanup()


def _every_worker_lists(daemon, name, listed, answers=12):
    """Until ``answers`` answers in a row (from whichever worker takes
    each call) agree that ``name`` is ``listed`` (no worker's statistics
    count standalone providers: the run of answers stands for them)."""
    waiting.agreeing("%s %s" % (name, "listed" if listed else "unlisted"),
                     lambda: (name in {s.host for s in daemon.client
                                       .get_host_states(None)}) == listed,
                     answers, log=daemon.log)
    return True


@pytest.fixture
def two_workers(server_db, daemon_factory):
    """A daemon of two workers with the three profiles and no periodic
    re-read (a worker learns of a change by a cast, or not at all)."""
    daemon = daemon_factory(server_db.url, workers=2, extra=PROFILES.replace(
        "[scheduler]\n", "[scheduler]\nusage_sync_interval = 0\n", 1))
    daemon.database = server_db.db
    return daemon


def test_a_retirement_reaches_every_worker(two_workers, rabbit):
    """Retired by a caller that casts nothing after it: the worker that
    retired the host tells the others, so that no worker lists it nor
    places on it, though none re-reads the database on its own."""
    _report(two_workers, "ctr-old", "container", {"VCPU": 4,
                                                  "MEMORY_MB": 4096},
            instance_uuid=str(uuid.uuid4()))
    assert _every_worker_lists(two_workers, "ctr-old", True)
    [state] = two_workers.client.get_host_states(None)
    assert _raw_call(rabbit, two_workers.topic, "retire_provider",
                     provider_uuid=provider_uuid("ctr-old"),
                     generation=state.generation) is True
    assert _every_worker_lists(two_workers, "ctr-old", False)
    for _ in range(4):
        with pytest.raises(exception.NoValidHost):
            _place(two_workers, _spec({"VCPU": 1, "MEMORY_MB": 512},
                                      "container"))


def test_a_vacancy_never_announced_is_announced_at_a_sync(server_db,
                                                          daemon_factory):
    """A container host nothing was ever placed on had no last release
    to announce it (as if the worker that released its last container
    died before announcing): the periodic sync announces it, once, with
    the generation that retires it."""
    topic = "gantt-test-vacancy-" + uuid.uuid4().hex[:8]
    daemon = daemon_factory(server_db.url, extra=PROFILES.replace(
        "[scheduler]\n", "[scheduler]\nusage_sync_interval = 1\n", 1) + (
        "\n[oslo_messaging_notifications]\ndriver = messagingv2\n"
        "topics = %s\n" % topic))
    transport = messaging.get_notification_transport(daemon.conf)
    heard = notifications._Listener()
    listener = messaging.get_notification_listener(
        transport, [messaging.Target(topic=topic)], [heard],
        executor="threading", serializer=rpc.Serializer())
    listener.start()
    try:
        _report(daemon, "ctr-idle", "container", {"VCPU": 2},
                instance_uuid=str(uuid.uuid4()))
        _priority, _publisher, event, payload = heard.next()
        assert (event, payload.name) == ("provider.vacant", "ctr-idle")
        assert daemon.client.retire_provider(
            None, provider_uuid("ctr-idle"), payload.generation) is True
        time.sleep(3)       # three syncs: nothing more of a retired host
        assert heard.received.empty()
    finally:
        listener.stop()
        listener.wait()
        transport.cleanup()
        _delete_queues(daemon, topic)
