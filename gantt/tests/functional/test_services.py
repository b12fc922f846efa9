"""Routers and containers through the daemon: the real gantt-scheduler on
RabbitMQ, once with MariaDB and once with PostgreSQL.

Agents and container hosts report like compute hosts; routers, DHCP
bindings and containers are consumers claimed, answered and released
over the wire, and "every instance is full" reaches a caller that
imports nothing of Gantt as a RemoteError named ProvidersFull.
"""

import ast
import os
import subprocess
import sys
import uuid

import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt.tests import factories as f
from gantt.tests.functional import invariants
from gantt.tests.unit.scheduler import agents

NETWORK = ("[filter_scheduler]\nenabled_filters = %s\nenabled_weighers = %s\n"
           % (",".join(agents.NETWORK_FILTERS),
              ",".join(agents.NETWORK_WEIGHERS)))


def _hosts_of(lists):
    return [sels[0].service_host for sels in lists]


def _routers_by_agent(database):
    counts = {}
    for allocs in invariants.allocations(database).values():
        for (rp, rc), used in allocs.items():
            if rc == agents.ROUTER:
                counts[rp] = counts.get(rp, 0) + used
    return counts


def test_routers_and_an_ha_router_on_agents(server_db, daemon_factory):
    daemon = daemon_factory(server_db.url, extra=NETWORK)
    names = ["net%d" % i for i in range(4)]
    for name in names:
        daemon.client.update_resource_stats(None, agents.agent(name))
    daemon.wait_for_hosts(len(names))

    # eight routers: each on the agent with the fewest, so two each
    routers = f.uuids(8)
    for router in routers:
        daemon.client.select_destinations(
            None, agents.unit_spec(agents.ROUTER), [router])
    assert sorted(_routers_by_agent(server_db.db).values()) == [2, 2, 2, 2]

    # an HA router: three bindings on three distinct agents, the three
    # least loaded
    daemon.client.release(None, routers[0])
    daemon.client.release(None, routers[1])
    before = _routers_by_agent(server_db.db)
    load = {name: before.get(f.host_uuid(name), 0) for name in names}
    bindings = f.uuids(3)
    lists = daemon.client.select_destinations(
        None, agents.unit_spec(agents.ROUTER, group=str(uuid.uuid4()),
                               num_instances=3), bindings)
    hosts = _hosts_of(lists)
    assert len(set(hosts)) == 3
    assert sorted(load[h] for h in hosts) == sorted(load.values())[:3]
    # released, the agents' counts drop back
    for binding in bindings:
        assert daemon.client.release(None, binding) is True
    assert _routers_by_agent(server_db.db) == before


def test_ha_router_with_more_bindings_than_agents_is_refused(
        server_db, daemon_factory):
    daemon = daemon_factory(server_db.url, extra=NETWORK)
    for name in ("net0", "net1"):
        daemon.client.update_resource_stats(None, agents.agent(name))
    daemon.wait_for_hosts(2)
    with pytest.raises(exception.NoValidHost):
        daemon.client.select_destinations(
            None, agents.unit_spec(agents.ROUTER, group=str(uuid.uuid4()),
                                   num_instances=3), f.uuids(3))
    assert invariants.allocations(server_db.db) == {}


def _container_hosts(daemon, names, vcpus=2):
    for name in names:
        daemon.client.update_resource_stats(None, agents.container_host(
            name, f.host_uuid("instance/" + name), vcpus=vcpus))
    return daemon.wait_for_hosts(len(names))


SEQ = {"fill": ["sequential"]}


def test_containers_fill_instances_then_ask_for_one_more(daemon):
    _container_hosts(daemon, ["ctr-b", "ctr-a"])
    placed = [_hosts_of(daemon.client.select_destinations(
        None, agents.container_spec(hints=SEQ), f.uuids(1)))[0]
        for _ in range(4)]
    assert placed == ["ctr-a", "ctr-a", "ctr-b", "ctr-b"]

    # every instance full: a typed answer, and nothing claimed for it
    waiting = f.uuids(1)
    with pytest.raises(exception.ProvidersFull) as err:
        daemon.client.select_destinations(
            None, agents.container_spec(hints=SEQ), waiting)
    assert isinstance(err.value, exception.NoValidHost)
    assert err.value.kwargs["hosts"] == 2
    assert waiting[0] not in invariants.allocations(daemon.database)

    # the service creates another instance; the same container now fits
    _container_hosts(daemon, ["ctr-a", "ctr-b", "ctr-c"])
    lists = daemon.client.select_destinations(
        None, agents.container_spec(hints=SEQ), waiting)
    assert _hosts_of(lists) == ["ctr-c"]


def test_a_container_on_a_named_instance(daemon):
    _container_hosts(daemon, ["ctr-a", "ctr-b"], vcpus=4)
    hints = {"on_instance": [f.host_uuid("instance/ctr-b")]}
    lists = daemon.client.select_destinations(
        None, agents.container_spec(vcpus=3, hints=hints), f.uuids(1))
    assert _hosts_of(lists) == ["ctr-b"]
    with pytest.raises(exception.ProvidersFull):
        daemon.client.select_destinations(
            None, agents.container_spec(vcpus=3, hints=hints), f.uuids(1))
    with pytest.raises(exception.InvalidRequest):
        daemon.client.select_destinations(
            None, agents.container_spec(hints={"on_instance": ["ctr-b"]}),
            f.uuids(1))


def test_a_caller_without_gantt_reads_providers_full(daemon):
    """The wire contract: a plain oslo.messaging client (no Gantt
    exception module allowed) gets RemoteError exc_type ProvidersFull."""
    _container_hosts(daemon, ["ctr-a"], vcpus=1)
    daemon.client.select_destinations(
        None, agents.container_spec(hints=SEQ), f.uuids(1))
    # a transport of its own: no allowed_remote_exmods
    transport = messaging.get_rpc_transport(daemon.conf)
    try:
        plain = messaging.get_rpc_client(
            transport, messaging.Target(exchange="gantt", topic=daemon.topic,
                                        version="1.0"), timeout=30)
        with pytest.raises(messaging.RemoteError) as err:
            plain.call({}, "select_destinations",
                       request_spec=f.primitive(agents.container_spec(
                           hints=SEQ)),
                       instance_uuids=f.uuids(1), return_alternates=False)
    finally:
        transport.cleanup()
    assert err.value.exc_type == "ProvidersFull"


# -- a client that imports nothing of Gantt -------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
EXAMPLE = os.path.join(ROOT, "doc", "examples", "services_client.py")


def _imports(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module.split(".")[0]


def test_the_services_client_imports_no_gantt():
    assert set(_imports(EXAMPLE)) <= {
        "argparse", "sys", "time", "uuid", "external_client",
        "oslo_messaging"}


def test_a_router_and_containers_from_a_client_without_gantt(
        server_db, daemon_factory, rabbit):
    daemon = daemon_factory(server_db.url, extra=NETWORK)
    result = subprocess.run(
        [sys.executable, EXAMPLE, "--transport-url", rabbit, "--topic",
         daemon.topic, "--prefix", "svc", "--timeout", "30"],
        capture_output=True, text=True, timeout=240, cwd="/")
    transcript = result.stdout
    assert result.returncode == 0, (
        "exit %d\n--- stdout\n%s\n--- stderr\n%s\n--- daemon log\n%s" % (
            result.returncode, transcript, result.stderr, daemon.log()))
    assert "RemoteError exc_type=ProvidersFull" in transcript, transcript
    assert transcript.count("container on svc-ctr-1") == 2, transcript
    assert "the waiting container -> placed on svc-ctr-2" in transcript
    # everything was released
    assert invariants.allocations(server_db.db) == {}
