"""Providers of any kind over RabbitMQ, with a real daemon on MariaDB and
PostgreSQL: a container host reported by its service is never an
instance's destination, is listed by kind, is announced vacant when its
last container leaves, and is retired only at the generation it was
vacant at, with claims racing the retirement never landing on it."""

import threading
import uuid

import pytest

from gantt import exception
from gantt.objects import compute_node
from gantt.objects import notification
from gantt.objects import provider
from gantt.objects import selection
from gantt.tests import factories as f
from gantt.tests.functional.test_cli import as_json
from gantt.tests.functional.test_cli import gantt
from gantt.tests.functional.test_cli import ok
from gantt.tests.functional.test_cli import one_error_line
from gantt.tests.functional.test_notifications import notified  # noqa: F401

INSTANCE = "33333333-3333-4333-8333-333333333333"


def _container_report(name, sequence=1):
    return provider.ProviderReport(
        provider=provider.ResourceProvider(
            uuid=f.host_uuid("ctr/" + name), name=name,
            inventories=[
                compute_node.Inventory(resource_class="VCPU", total=64),
                compute_node.Inventory(resource_class="MEMORY_MB",
                                       total=262144)]),
        report_sequence=sequence, kind="container", service="zun-compute",
        availability_zone="az1", instance_uuid=INSTANCE,
        capabilities={"runtime": "runc", "cpu_shares": 1024,
                      "privileged": False})


def _claim(daemon, consumer, provider_uuid, vcpus=1):
    return daemon.client.claim_allocations(
        None, consumer, selection.AllocationRequest(allocations=[
            selection.AllocationItem(resource_provider_uuid=provider_uuid,
                                     resources={"VCPU": vcpus})]))


def _state(daemon, provider_uuid):
    found = daemon.client.get_host_states(None, hosts=[provider_uuid])
    return found[0] if found else None


def test_a_container_host_lives_vacates_and_retires(notified):  # noqa: F811
    daemon, listener = notified
    daemon.client.update_resource_stats(None, f.compute_node_obj(
        "kinds-c1", vcpus=2))
    daemon.wait_for_hosts(1)
    report = _container_report("ctr-1")
    ctr = report.provider.uuid
    assert daemon.client.update_provider(None, report).applied

    # far more room than the compute node, yet never an instance's host
    lists = daemon.client.select_destinations(None, f.request(
        f.flavor(vcpus=1, memory_mb=512, root_gb=10), num_instances=2),
        f.uuids(2))
    assert {sels[0].service_host for sels in lists} == {"kinds-c1"}
    assert listener.next()[2].endswith(".start")
    assert listener.next()[2].endswith(".end")

    # operators see it as what it is
    shown = _state(daemon, ctr)
    assert (shown.kind, shown.service, shown.availability_zone,
            shown.instance_uuid, shown.vacant) == (
        "container", "zun-compute", "az1", INSTANCE, True)
    assert shown.capabilities == {"runtime": "runc", "cpu_shares": 1024,
                                  "privileged": False}
    listed = as_json(daemon, "host", "list", "--kind", "container",
                     "--long")
    assert [(h["Host"], h["Kind"], h["Vacant"]) for h in listed] == [
        ("ctr-1", "container", True)]
    assert [h["Host"] for h in as_json(
        daemon, "host", "list", "--kind", "compute")] == ["kinds-c1"]
    card = as_json(daemon, "host", "show", ctr)
    assert (card["kind"], card["service"], card["instance_uuid"],
            card["capabilities"]["cpu_shares"]) == (
        "container", "zun-compute", INSTANCE, 1024)

    # a container comes and goes: the last to leave makes it vacant
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    _claim(daemon, first, ctr)
    _claim(daemon, second, ctr)
    assert not _state(daemon, ctr).vacant
    assert as_json(daemon, "host", "list", "--vacant") == []
    daemon.client.release(None, first)
    daemon.client.release(None, second)
    priority, _publisher, event, payload = listener.next()
    assert (priority, event) == ("INFO", "provider.vacant")
    assert isinstance(payload, notification.ProviderVacantPayload)
    assert (payload.provider_uuid, payload.kind, payload.instance_uuid,
            payload.name) == (ctr, "container", INSTANCE, "ctr-1")
    assert payload.generation == _state(daemon, ctr).generation
    assert [h["Host"] for h in as_json(
        daemon, "host", "list", "--vacant")] == ["ctr-1"]

    # retired only at the generation it was vacant at
    with pytest.raises(exception.ProviderConflict):
        daemon.client.retire_provider(None, ctr, payload.generation - 1)
    refused = gantt(daemon, "host", "retire", ctr, "--generation",
                    str(payload.generation + 1))
    assert "not retired" in one_error_line(refused, 1)
    with pytest.raises(exception.InvalidRequest):
        daemon.client.retire_provider(
            None, f.host_uuid("kinds-c1"), _state(
                daemon, f.host_uuid("kinds-c1")).generation)
    ok(daemon, "host", "retire", ctr, "--generation",
       str(payload.generation))
    assert _state(daemon, ctr) is None
    with pytest.raises(exception.ProviderNotFound):
        _claim(daemon, str(uuid.uuid4()), ctr)
    with pytest.raises(exception.ProviderNotFound):
        daemon.client.retire_provider(None, ctr, payload.generation)


def test_claims_racing_retirements_never_land_on_a_retired_host(daemon):
    """Each round, a container claim and the retirement of its vacant
    host start together: exactly one of the two wins, whichever it is."""
    outcomes = []
    for round_ in range(8):
        report = _container_report("race-%d" % round_)
        ctr = report.provider.uuid
        daemon.client.update_provider(None, report)
        vacant_at = _state(daemon, ctr).generation
        start = threading.Barrier(2)
        result = {}

        def claim(ctr=ctr, start=start, result=result):
            start.wait(10)
            try:
                result["claim"] = _claim(daemon, str(uuid.uuid4()), ctr)
            except exception.GanttException as exc:
                result["claim"] = exc

        def retire(ctr=ctr, at=vacant_at, start=start, result=result):
            start.wait(10)
            try:
                result["retire"] = daemon.client.retire_provider(
                    None, ctr, at)
            except exception.GanttException as exc:
                result["retire"] = exc

        threads = [threading.Thread(target=claim),
                   threading.Thread(target=retire)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        claimed = result["claim"] is True
        retired = result["retire"] is True
        assert claimed != retired, result
        if retired:
            assert isinstance(result["claim"], (exception.ProviderNotFound,
                                                exception.ClaimConflict))
            assert _state(daemon, ctr) is None
        else:
            assert isinstance(result["retire"], exception.ProviderConflict)
            assert not _state(daemon, ctr).vacant
        outcomes.append("retired" if retired else "claimed")
    print("race outcomes:", outcomes)
