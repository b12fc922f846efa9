"""Nova's Placement client against Gantt's Placement API (``gantt-api``)
and Nova's scheduler client against the daemon, on one database: the
conductor's re-claim of an alternate, and nova-compute's provider tree.
"""

import uuid

from nova import exception as nova_exception
from nova.scheduler import utils as nova_scheduler_utils
from nova.scheduler.client import report as nova_report
from oslo_serialization import jsonutils
import sqlalchemy as sa

from gantt.db.models import INV
from gantt.db.models import RP
from gantt.tests.functional import waiting
from gantt.tests.nova_e2e import nova_requests as nr
from gantt.tests.nova_e2e.conftest import HOSTS

FLAVOR_USAGE = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


def test_conductor_reclaims_an_alternate_through_gantt_api(gantt_and_api):
    gantt = gantt_and_api
    gantt.report(*HOSTS)
    spec = nr.spec()
    ctxt = nr.ctxt()
    [[claimed, alternate, _]] = gantt.query.select_destinations(
        ctxt, spec, [spec.instance_uuid], return_objects=True,
        return_alternates=True)
    report = nova_report.SchedulerReportClient()

    # the build on the claimed host failed: nova-compute deletes the
    # instance's allocations, then the conductor claims the first
    # alternate with the allocation request Gantt put in its Selection
    report.delete_allocation_for_instance(ctxt, spec.instance_uuid,
                                          force=True)
    assert gantt.allocations(spec.instance_uuid) == {}
    assert nova_scheduler_utils.claim_resources(
        ctxt, report, spec, spec.instance_uuid,
        jsonutils.loads(alternate.allocation_request),
        alternate.allocation_request_version)

    assert gantt.allocations(spec.instance_uuid) == {
        spec.instance_uuid: {alternate.compute_node_uuid: FLAVOR_USAGE}}
    # and Placement's view of it, through Nova's client, is the same
    held = report.get_allocs_for_consumer(ctxt, spec.instance_uuid)
    assert held["allocations"] == {alternate.compute_node_uuid: {
        "generation": held["allocations"][alternate.compute_node_uuid][
            "generation"], "resources": FLAVOR_USAGE}}


def test_a_reclaim_that_no_longer_fits_is_refused(gantt_and_api):
    gantt = gantt_and_api
    gantt.report(*HOSTS[:2], memory_mb=1024, vcpus=2)
    ctxt = nr.ctxt()
    spec = nr.spec(flavor=nr.flavor(memory_mb=1024))
    [[claimed, alternate]] = gantt.query.select_destinations(
        ctxt, spec, [spec.instance_uuid], return_objects=True,
        return_alternates=True)
    # another instance takes the alternate's room meanwhile
    other = nr.spec(flavor=nr.flavor(memory_mb=1024),
                    force_hosts=[alternate.service_host])
    gantt.query.select_destinations(ctxt, other, [other.instance_uuid],
                                    return_objects=True)
    report = nova_report.SchedulerReportClient()
    report.delete_allocation_for_instance(ctxt, spec.instance_uuid,
                                          force=True)

    assert not nova_scheduler_utils.claim_resources(
        ctxt, report, spec, spec.instance_uuid,
        jsonutils.loads(alternate.allocation_request),
        alternate.allocation_request_version)
    assert gantt.allocations(spec.instance_uuid) == {}


def test_nova_computes_provider_tree_is_a_host_to_gantt(gantt_and_api):
    """nova-compute's resource tracker reports its node through Nova's
    report client; Gantt's database holds the provider, its inventory and
    traits, and Nova's scheduler client lands on the node (no Gantt agent
    reports it: see "Compute nodes nova-compute makes through the
    Placement API" in doc/source/admin/nova.rst)."""
    gantt = gantt_and_api
    ctxt = nr.ctxt()
    node = str(uuid.uuid4())
    name = "nova-e2e-compute-%s" % node[:8]
    report = nova_report.SchedulerReportClient()

    tree = report.get_provider_tree_and_ensure_root(ctxt, node, name=name)
    tree.update_inventory(name, INVENTORY)
    # the resource tracker marks every node it reports COMPUTE_NODE
    tree.update_traits(name, ["HW_CPU_X86_AVX", "COMPUTE_IMAGE_TYPE_RAW",
                              "COMPUTE_NODE"])
    report.update_from_provider_tree(ctxt, tree)

    with gantt.database.db.begin() as conn:
        row = conn.execute(sa.select(RP.c.id, RP.c.name).where(
            RP.c.uuid == node)).one()
        stored = {r.resource_class: r.total for r in conn.execute(
            sa.select(INV.c.resource_class, INV.c.total).where(
                INV.c.resource_provider_id == row.id))}
    assert row.name == name
    assert stored == {rc: inv["total"] for rc, inv in INVENTORY.items()}
    # a new client (no cache) reads back what the compute wrote
    fresh = nova_report.SchedulerReportClient()
    again = fresh.get_provider_tree_and_ensure_root(ctxt, node)
    assert again.data(node).inventory == INVENTORY
    assert again.data(node).traits == {"HW_CPU_X86_AVX",
                                       "COMPUTE_IMAGE_TYPE_RAW",
                                       "COMPUTE_NODE"}

    # Nova's conductor asks Gantt, which knows the node from the API alone
    spec = nr.spec()
    [[selection]] = _eventually(lambda: gantt.query.select_destinations(
        ctxt, spec, [spec.instance_uuid], return_objects=True))
    assert (selection.compute_node_uuid, selection.service_host,
            selection.nodename) == (node, name, name)
    assert gantt.allocations(spec.instance_uuid) == {
        spec.instance_uuid: {node: FLAVOR_USAGE}}


def _eventually(call):
    """``call()`` once the workers learnt the node (the API's cast)."""
    return waiting.until("the API's cast applied", lambda: (call(),),
                         ignoring=nova_exception.NoValidHost,
                         interval=0.2)[0]


INVENTORY = {
    "VCPU": {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8,
             "step_size": 1, "allocation_ratio": 1.0},
    "MEMORY_MB": {"total": 8192, "reserved": 512, "min_unit": 1,
                  "max_unit": 8192, "step_size": 1, "allocation_ratio": 1.0},
    "DISK_GB": {"total": 100, "reserved": 0, "min_unit": 1, "max_unit": 100,
                "step_size": 1, "allocation_ratio": 1.0}}
