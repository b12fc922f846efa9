"""Nova's filters, aggregates and explanations on the real daemon.

Over the real RabbitMQ, on MariaDB then PostgreSQL: aggregates are set over
RPC and reach every worker, NoValidHost says why each host was refused,
the summary is logged once at INFO and counted in the statistics, and
``explain`` (the RPC and ``gantt explain``) shows the same without
claiming anything.
"""

import os
import subprocess
import sys
import uuid

import pytest

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.tests import factories as f
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
WEST = str(uuid.UUID(int=0x3E57))
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
SUMMARY = ("0 of 10 hosts available: 2 were disabled, 2 lacked MEMORY_MB, "
           "2 AvailabilityZoneFilter, 4 ServerGroupAntiAffinityFilter")


def _fleet(daemon):
    """h00-h01 small, h02-h03 disabled, h04-h05 moved to zone west by an
    aggregate, h06-h09 fine; all report zone az1."""
    nodes = []
    for i in range(10):
        fields = {"zone": "az1"}
        if i < 2:
            fields["memory_mb"] = 2048
        elif i < 4:
            fields["disabled"] = True
        nodes.append(f.compute_node_obj("h%02d" % i, **fields))
    for node in nodes:
        daemon.client.update_resource_stats(None, node)
    daemon.wait_for_hosts(10)
    daemon.client.set_aggregate(None, aggregate_obj.Aggregate(
        uuid=WEST, name="west", hosts=["h04", "h05"],
        metadata={"availability_zone": "west"}))


def _spec(**fields):
    fields.setdefault("availability_zone", "az1")
    return f.request(f.flavor(memory_mb=4096), project_id="p1", **fields)


def _group():
    return request_spec.InstanceGroup(uuid=GROUP, policy="anti-affinity")


def test_no_valid_host_explains_every_cause(daemon):
    _fleet(daemon)
    placed = daemon.client.select_destinations(
        None, _spec(instance_group=_group(), num_instances=4), f.uuids(4))
    assert sorted(s[0].service_host for s in placed) == [
        "h06", "h07", "h08", "h09"]

    with pytest.raises(exception.NoValidHost) as err:
        daemon.client.select_destinations(
            None, _spec(instance_group=_group()), f.uuids(1))
    assert SUMMARY in str(err.value)

    stats = daemon.client.get_statistics(None)
    assert stats.no_valid_host == 1
    for label, count in [("were disabled", 2), ("lacked MEMORY_MB", 2),
                         ("AvailabilityZoneFilter", 2),
                         ("ServerGroupAntiAffinityFilter", 4)]:
        assert stats.filter_eliminations[label] == count
    # logged once, at INFO, with the same summary
    waiting.until("the summary logged", lambda: SUMMARY in daemon.log())
    lines = [line for line in daemon.log().splitlines() if SUMMARY in line]
    assert len(lines) == 1 and " INFO " in lines[0], lines


def test_explain_shows_the_same_without_claiming(daemon, tmp_path):
    _fleet(daemon)
    result = daemon.client.explain(None, _spec(), limit=3)
    assert result.summary == ("4 of 10 hosts available: 2 were disabled, "
                              "2 lacked MEMORY_MB, 2 AvailabilityZoneFilter")
    assert [(s.name, s.hosts) for s in result.steps] == [
        ("ComputeFilter", ["h02", "h03"]),
        ("ResourceFilter", ["h00", "h01"]),
        ("AvailabilityZoneFilter", ["h04", "h05"])]
    assert len(result.weighed) == 3
    assert {h.host for h in result.weighed} <= {"h06", "h07", "h08", "h09"}
    assert all(abs(h.weight - sum(h.weights.values())) < 1e-9
               for h in result.weighed)
    assert daemon.client.get_statistics(None).placements == 0

    spec = tmp_path / "spec.yaml"
    spec.write_text("flavor: {name: m1.small, vcpus: 1, memory_mb: 4096, "
                    "root_gb: 20}\navailability_zone: az1\n")
    out = subprocess.run(
        [os.path.join(BIN, "gantt"), "--config-file", daemon.conf_file,
         "explain", str(spec), "--limit", "2"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert out.returncode == 0, out.stderr
    assert result.summary in out.stdout
    assert "ComputeFilter" in out.stdout and "h02, h03" in out.stdout
    assert "RANK" in out.stdout


def test_aggregates_reach_every_worker(server_db, daemon_factory):
    # (server_db first: it is dropped after the daemons stop)
    daemon = daemon_factory(server_db.url, workers=2)
    _fleet(daemon)
    assert [a.name for a in daemon.client.get_aggregates(None)] == ["west"]
    # every worker (each call goes to one of them) sees the aggregate
    for _attempt in range(8):
        result = daemon.client.explain(None, _spec(availability_zone="west"))
        assert sorted(h.host for h in result.weighed) == ["h04", "h05"]
    assert daemon.client.delete_aggregate(None, WEST) is True
    waiting.agreeing("no host in the deleted aggregate west",
                     lambda: daemon.client.explain(
                         None, _spec(availability_zone="west")).passed == 0,
                     6, log=daemon.log)
    assert daemon.client.delete_aggregate(None, WEST) is False
