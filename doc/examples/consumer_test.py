"""A calling service's test against Gantt, without RabbitMQ.

What a developer of a service that asks Gantt for hosts writes in that
service's test suite (see doc/source/user/testing.rst). ``Deployer`` stands
for the service's own code: it is given a ``SchedulerClient`` and places,
then gives back, a batch of servers. The test starts Gantt in-process with
``gantt.fixture.GanttFixture``, reports two hosts as their agents would,
and checks what the service does with Gantt's answers, including a typed
``NoValidHost``.

Gantt's unit suite runs this file as it is
(``gantt/tests/unit/test_fixture.py``).
"""

import unittest
import uuid

import fixtures

from gantt import exception
from gantt import fixture as gantt_fixture
from gantt.objects import compute_node
from gantt.objects import request_spec
from gantt.rpcapi import client as gantt_client


class Deployer:
    """The code under test: it knows Gantt only through its client."""

    def __init__(self, scheduler):
        self.scheduler = scheduler

    def deploy(self, vcpus, memory_mb, count):
        """{server uuid: host} for ``count`` servers, each claimed."""
        servers = [str(uuid.uuid4()) for _ in range(count)]
        flavor = request_spec.Flavor(vcpus=vcpus, memory_mb=memory_mb,
                                     root_gb=10)
        answer = self.scheduler.select_destinations(
            None, request_spec.RequestSpec(flavor=flavor), servers)
        # one list per server: the claimed host first, then alternates
        return {server: selections[0].service_host
                for server, selections in zip(servers, answer, strict=True)}

    def undeploy(self, servers):
        """Give every server's resources back; how many were freed."""
        return sum(self.scheduler.release(None, server)
                   for server in servers)


def host(name, vcpus, memory_mb):
    """A host's report, as its agent sends it."""
    def inventory(resource_class, total):
        return compute_node.Inventory(resource_class=resource_class,
                                      total=total)
    return compute_node.ComputeNode(
        uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), host=name,
        nodename=name, report_sequence=1,
        inventories=[inventory("VCPU", vcpus),
                     inventory("MEMORY_MB", memory_mb),
                     inventory("DISK_GB", 1000)])


class TestDeployer(fixtures.TestWithFixtures):

    def setUp(self):
        super().setUp()
        self.gantt = self.useFixture(gantt_fixture.GanttFixture())
        self.gantt.report_host(host("small", vcpus=4, memory_mb=8192))
        self.gantt.report_host(host("big", vcpus=64, memory_mb=262144))
        # the service builds its client as it does in production, on the
        # fixture's transport instead of its own
        self.deployer = Deployer(
            gantt_client.SchedulerClient(self.gantt.transport))

    def test_servers_are_claimed_and_given_back(self):
        placed = self.deployer.deploy(vcpus=8, memory_mb=16384, count=2)
        self.assertEqual(["big", "big"], list(placed.values()))
        [state] = self.gantt.client.get_host_states(None, hosts=["big"])
        used = {r.resource_class: r.used for r in state.resources}
        self.assertEqual(16, used["VCPU"])
        self.assertEqual(2, self.deployer.undeploy(placed))
        self.assertEqual(0, self.deployer.undeploy(placed))

    def test_no_host_is_big_enough(self):
        with self.assertRaises(exception.NoValidHost):
            self.deployer.deploy(vcpus=128, memory_mb=1024, count=1)


if __name__ == "__main__":
    unittest.main()
