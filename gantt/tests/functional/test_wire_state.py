"""Forged messages over real RabbitMQ do no lasting damage (issue #18).

A real daemon on MariaDB, then PostgreSQL. The attacker is anyone on the
broker: it casts raw primitives through a plain oslo.messaging client, as
the agents' serializers send them.

* A report of a huge sequence does not lock the real agent out once it
  restarts (a new boot id), and the operator's reset lets in an agent that
  sends no boot id.
* A second provider reporting under a host's name is refused: forced
  placements still go to the real host, and the database is unchanged;
  the operator's delete lets a re-installed host take the name.
* A forged ``provider_usage_changed`` makes a host look full only until
  the next usage sync, after which the cache agrees with the database.
"""

import os
import subprocess
import sys

import pytest

from gantt import exception
from gantt import rpcapi
from gantt.db import host_load
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories as f
from gantt.tests import stored_hosts
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
FORGED = 2 ** 63 - 1
BOOT_A = "0a0a0a0a-0000-4000-8000-00000000000a"
BOOT_B = "0b0b0b0b-0000-4000-8000-00000000000b"
SMALL = f.flavor(vcpus=1, memory_mb=512, root_gb=1)
POOL = f.host_uuid("pool")



def _forge_report(daemon, node):
    conftest.raw_fanout(daemon, rpcapi.stats_topic(daemon.topic)).cast(
        {}, "update_resource_stats", compute_node=node.obj_to_primitive())


def _wait(what, predicate, daemon=None):
    waiting.until(what, predicate, log=daemon and daemon.log)


def _state(daemon, host="h1"):
    [state] = daemon.client.get_host_states(None, [host])
    return state


def _vcpus(state):
    return {r.resource_class: r for r in state.resources}["VCPU"]


def _counted(daemon):
    stats = daemon.client.get_statistics(None)
    return (stats.reports_applied + stats.reports_stale
            + stats.messages_rejected)


def _settled(daemon, before, count=1):
    """Wait until ``count`` more reports were counted (taken, stale or
    refused) since ``before``."""
    _wait("counted", lambda: _counted(daemon) >= before + count)


def test_a_forged_sequence_does_not_outlive_the_agent_s_restart(daemon):
    f.cast_report(daemon.client, "h1", sequence=100, boot_id=BOOT_A)
    _wait("known", lambda: daemon.client.get_host_states(None, ["h1"]))
    before = _counted(daemon)
    _forge_report(daemon, f.compute_node_obj("h1", sequence=FORGED,
                                             boot_id=BOOT_A, vcpus=1))
    _wait("forged", lambda: _vcpus(_state(daemon)).total == 1)
    # the agent, same boot: every report is stale now
    f.cast_report(daemon.client, "h1", sequence=101, boot_id=BOOT_A)
    _settled(daemon, before, 2)
    assert _state(daemon).report_sequence == FORGED
    # the agent restarts: a new boot id, its sequence starts again
    f.cast_report(daemon.client, "h1", sequence=1, boot_id=BOOT_B)
    _wait("taken", lambda: _state(daemon).report_sequence == 1)
    assert _vcpus(_state(daemon)).total == 16
    f.cast_report(daemon.client, "h1", sequence=2, boot_id=BOOT_B)
    _wait("taken", lambda: _state(daemon).report_sequence == 2)
    [stored] = stored_hosts.load_hosts(daemon.database)
    assert stored.inventories["VCPU"][0] == 16
    assert stored.report["report_sequence"] in (1, 2)


def _pool(sequence, boot_id, total):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=POOL, name="pool", inventories=[compute_node.Inventory(
                resource_class="DISK_GB", total=total)],
            traits=["MISC_SHARES_VIA_AGGREGATE"]),
        report_sequence=sequence, boot_id=boot_id)


def _pool_disk(daemon):
    """The pool's disk as the worker answering sees it (a volume that
    asks for all of it finds the pool, or nothing)."""
    for total in (1000, 10):
        found = daemon.client.get_allocation_candidates(None, f.request(
            f.flavor(vcpus=0, memory_mb=0, root_gb=total)))
        if found:
            return total
    return None


def test_a_forged_provider_sequence_does_not_outlive_a_restart(daemon):
    # ProviderReport 1.1: the boot id guards standalone providers too
    assert daemon.client.update_provider(None, _pool(100, BOOT_A,
                                                     1000)).applied
    # a forger on the broker: the same boot, a huge sequence, tiny disk
    assert daemon.client.update_provider(None, _pool(FORGED, BOOT_A,
                                                     10)).applied
    _wait("forged", lambda: _pool_disk(daemon) == 10)
    # the service, same boot: locked out
    assert not daemon.client.update_provider(
        None, _pool(101, BOOT_A, 1000)).applied
    # the service restarts: a new boot id, its sequence starts again
    assert daemon.client.update_provider(None, _pool(1, BOOT_B,
                                                     1000)).applied
    _wait("taken", lambda: _pool_disk(daemon) == 1000)
    [stored] = host_load.load_standalone_providers(daemon.database)
    assert (stored.report_sequence, stored.boot_id) == (1, BOOT_B)
    assert stored.inventories["DISK_GB"][0] == 1000


def test_the_operator_reset_lets_an_agent_without_boot_id_in(daemon):
    f.cast_report(daemon.client, "h1", sequence=100)
    _wait("known", lambda: daemon.client.get_host_states(None, ["h1"]))
    _forge_report(daemon, f.compute_node_obj("h1", sequence=FORGED,
                                             vcpus=1))
    _wait("forged", lambda: _vcpus(_state(daemon)).total == 1)
    reset = subprocess.run(
        [os.path.join(BIN, "gantt-manage"), "--config-file",
         daemon.conf_file, "host", "reset-sequence", "h1"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert reset.returncode == 0, reset.stderr
    assert f.host_uuid("h1") in reset.stdout
    f.cast_report(daemon.client, "h1", sequence=101)
    _wait("taken", lambda: _state(daemon).report_sequence == 101)
    assert _vcpus(_state(daemon)).total == 16
    [stored] = stored_hosts.load_hosts(daemon.database)
    assert (stored.report["report_sequence"],
            stored.inventories["VCPU"][0]) == (101, 16)
    missing = subprocess.run(
        [os.path.join(BIN, "gantt-manage"), "--config-file",
         daemon.conf_file, "host", "reset-sequence", "nowhere"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert missing.returncode == 1
    assert missing.stderr.startswith("Unknown host(s) nowhere: "), (
        missing.stderr)


def _impostor(sequence=FORGED):
    node = f.compute_node_obj("h1", sequence=sequence, vcpus=512)
    node.uuid = f.host_uuid("impostor")
    return node


def _forced_to_h1(daemon):
    spec = f.request(SMALL, force_hosts=["h1"])
    [[selection, *_]] = daemon.client.select_destinations(
        None, spec, f.uuids(1))
    return selection


def test_a_second_provider_cannot_take_a_host_s_name(daemon):
    f.cast_report(daemon.client, "h1", sequence=1)
    _wait("known", lambda: daemon.client.get_host_states(None, ["h1"]))
    stored = stored_hosts.load_hosts(daemon.database)
    before = _counted(daemon)
    _forge_report(daemon, _impostor())
    _settled(daemon, before)
    assert daemon.client.get_statistics(None).messages_rejected == 1
    assert [s.uuid for s in daemon.client.get_host_states(None)] == [
        f.host_uuid("h1")]
    assert _forced_to_h1(daemon).compute_node_uuid == f.host_uuid("h1")
    [after] = stored_hosts.load_hosts(daemon.database)
    assert dict(after.report, generation=None) == dict(
        stored[0].report, generation=None)
    assert after.inventories == stored[0].inventories
    # the refusal is typed for a caller that asks
    with pytest.raises(exception.HostNameTaken):
        daemon.client.report_resource_stats(None, _impostor(2))
    assert "Refused 1 report(s): Host h1 is compute node" in daemon.log()


def test_a_re_installed_host_takes_its_name_once_the_old_is_deleted(daemon):
    f.cast_report(daemon.client, "h1", sequence=1)
    _wait("known", lambda: daemon.client.get_host_states(None, ["h1"]))
    placed = _forced_to_h1(daemon)
    in_use = subprocess.run(
        [os.path.join(BIN, "gantt-manage"), "--config-file",
         daemon.conf_file, "host", "delete", "h1"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert in_use.returncode == 1
    assert "1 consumer(s) hold allocations" in in_use.stderr
    daemon.client.release(None, placed.consumer_uuid)
    deleted = subprocess.run(
        [os.path.join(BIN, "gantt-manage"), "--config-file",
         daemon.conf_file, "host", "delete", "h1"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert deleted.returncode == 0, deleted.stderr
    daemon.client.update_resource_stats(None, _impostor(1))
    _wait("re-installed", lambda: _state(daemon).uuid == f.host_uuid(
        "impostor"))
    assert _forced_to_h1(daemon).compute_node_uuid == f.host_uuid(
        "impostor")


SYNC_INTERVAL = 2


@pytest.fixture
def syncing_daemon(server_db, daemon_factory):
    d = daemon_factory(server_db.url,
                       extra="usage_sync_interval = %d" % SYNC_INTERVAL)
    d.database = server_db.db
    return d


def _forge_usage(daemon, uuid, generation, usages):
    primitive = {
        "gantt_object.name": "ProviderUsage",
        "gantt_object.namespace": "gantt",
        "gantt_object.version": "1.0",
        "gantt_object.data": {"resource_provider_uuid": uuid,
                              "generation": generation, "usages": usages}}
    conftest.raw_fanout(daemon, daemon.topic).cast(
        {}, "provider_usage_changed", usages=[primitive])


def _undone(daemon, uuid):
    return any("held a usage the database does not" in line and uuid in line
               for line in daemon.log().splitlines())


def _placeable(daemon):
    try:
        spec = f.request(SMALL)
        return daemon.client.select_destinations(None, spec, f.uuids(1))
    except exception.NoValidHost:
        return None


def test_a_forged_usage_cast_lasts_one_usage_sync_at_most(syncing_daemon):
    daemon = syncing_daemon
    f.cast_report(daemon.client, "h1", sequence=1, vcpus=4)
    _wait("known", lambda: daemon.client.get_host_states(None, ["h1"]))
    uuid = f.host_uuid("h1")
    _forge_usage(daemon, uuid, 2 ** 40, {"VCPU": 4})
    _wait("forged", lambda: _vcpus(_state(daemon)).used == 4)
    assert _placeable(daemon) is None
    # the first sync that reads the forged usage says so and undoes it:
    # placeable at once after it (however late a busy machine runs it)
    _wait("a usage sync undoing the forged usage of %s" % uuid,
          lambda: _undone(daemon, uuid), daemon)
    assert _placeable(daemon)
    assert _state(daemon).generation == (
        host_load.usages_by_uuid(daemon.database)[uuid][0])
    generation, usage = host_load.usages_by_uuid(daemon.database)[uuid]
    state = _state(daemon)
    assert state.generation == generation
    assert {r.resource_class: r.used for r in state.resources
            if r.used} == usage
    assert "held a usage the database does not" in daemon.log()
