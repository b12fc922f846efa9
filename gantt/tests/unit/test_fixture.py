"""gantt.fixture.GanttFixture, used as a calling service would use it.

Every test here talks to the fixture's scheduler through a
``SchedulerClient`` only, as code outside Gantt does; the last one runs the
documented example (doc/examples/consumer_test.py) as it is.
"""

import importlib.util
import os
import time
import unittest

import fixtures
import pytest

from gantt import exception
from gantt import fixture as gantt_fixture
from gantt.rpcapi import client as rpc_client
from gantt.tests import factories

EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                       os.pardir, "doc", "examples", "consumer_test.py")


@pytest.fixture
def gantt():
    fx = gantt_fixture.GanttFixture()
    fx.setUp()
    yield fx
    fx.cleanUp()


def _used(client, host):
    [state] = client.get_host_states(None, hosts=[host])
    return {r.resource_class: r.used for r in state.resources}


def test_reported_hosts_are_placed_on_claimed_and_released(gantt):
    for name, vcpus in (("h1", 4), ("h2", 32)):
        result = gantt.report_host(factories.compute_node_obj(name,
                                                              vcpus=vcpus))
        assert not result.refused
    flavor = factories.flavor(vcpus=8, memory_mb=1024, root_gb=10)
    [instance] = factories.uuids(1)

    [[claimed, *alternates]] = gantt.client.select_destinations(
        None, factories.request(flavor), [instance])

    assert claimed.claimed and claimed.service_host == "h2"
    assert claimed.consumer_uuid == instance
    assert alternates == []             # h1 is too small to be one
    assert _used(gantt.client, "h2")["VCPU"] == 8
    assert gantt.client.release(None, instance) is True
    assert _used(gantt.client, "h2")["VCPU"] == 0
    assert gantt.client.release(None, instance) is False


def test_a_bad_call_gets_the_typed_error(gantt):
    gantt.report_host(factories.compute_node_obj("h1", vcpus=4))
    with pytest.raises(exception.InvalidRequest):
        gantt.client.select_destinations(None, factories.request(),
                                         ["not-a-uuid"])
    with pytest.raises(exception.NoValidHost):
        gantt.client.select_destinations(
            None, factories.request(factories.flavor(vcpus=64)),
            factories.uuids(1))
    with pytest.raises(exception.InvalidRequest):
        # a report the wire refuses is refused to the reporter too
        gantt.report_host(factories.compute_node_obj("h2",
                                                     traits=["bad trait"]))


def test_a_client_the_caller_builds_on_the_transport_reaches_it(gantt):
    client = rpc_client.SchedulerClient(gantt.transport)
    assert client.get_aggregates(None) == []
    # an agent's cast (not waited for) is applied soon after
    client.update_resource_stats(None, factories.compute_node_obj("cast"))
    deadline = time.monotonic() + 10
    while not client.get_host_states(None, hosts=["cast"]):
        assert time.monotonic() < deadline, "the cast was never applied"
        time.sleep(0.02)


def test_options_reach_the_worker_and_fixtures_do_not_share_a_bus():
    filters = ["ComputeFilter", "ResourceFilter"]     # no zone filter
    with gantt_fixture.GanttFixture(
            options={"scheduler.topic": "cinder-scheduler",
                     "filter_scheduler.enabled_filters": filters}) as first, \
            gantt_fixture.GanttFixture() as second:
        assert first.conf.scheduler.topic == "cinder-scheduler"
        first.report_host(factories.compute_node_obj("h1", zone="az1"))
        second.report_host(factories.compute_node_obj("h1", zone="az1"))
        elsewhere = factories.request(availability_zone="az2")
        [[selection]] = first.client.select_destinations(
            None, elsewhere, factories.uuids(1), return_alternates=False)
        assert selection.service_host == "h1"
        with pytest.raises(exception.NoValidHost):
            second.client.select_destinations(None, elsewhere,
                                              factories.uuids(1))
        # each has its own bus and database
        assert _used(second.client, "h1")["VCPU"] == 0


def test_the_documented_example_passes():
    spec = importlib.util.spec_from_file_location("consumer_test", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(
        module.TestDeployer)
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun == 2
    assert result.wasSuccessful(), result.errors + result.failures
    assert issubclass(module.TestDeployer, fixtures.TestWithFixtures)
