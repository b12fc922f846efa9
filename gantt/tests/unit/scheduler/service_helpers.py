"""Helpers of the services' end-to-end tests (SQLite): reports, specs,
the database's allocations."""

import collections
import uuid as uuidlib

import sqlalchemy as sa

from gantt.db import models
from gantt.objects import compute_node
from gantt.objects import request_spec
from gantt.tests import factories

AGG = str(uuidlib.UUID(int=0xA66))


ALLOC = models.Allocation.__table__


RP = models.ResourceProvider.__table__


INV = models.Inventory.__table__


CONSUMERS = models.Consumer.__table__


CELL_A = "aaaaaaaa-0000-4000-8000-000000000001"


CELL_B = "bbbbbbbb-0000-4000-8000-000000000002"


GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


SMALL = {"vcpus": 1, "memory_mb": 1024, "root_gb": 10}


def report(scheduler, name, **fields):
    return scheduler.stats.update_resource_stats(
        factories.compute_node_obj(name, **fields))


def sized(scheduler, name, size, **fields):
    """A host whose VCPU, RAM and disk all grow with ``size`` (so that the
    default spreading weighers rank bigger hosts first)."""
    return report(scheduler, name, vcpus=4 * size, memory_mb=4096 * size,
                   disk_gb=100 * size, **fields)


def make_spec(flavor=None, **fields):
    return factories.request(flavor or factories.flavor(**SMALL), **fields)


def select(scheduler, count=1, spec=None, **kwargs):
    return scheduler.placer.select_destinations(spec or make_spec(),
                                       factories.uuids(count), **kwargs)


def allocations(db, consumer=None):
    """``[(host, consumer, class, used)]`` straight from SQL."""
    query = (sa.select(RP.c.name, ALLOC.c.consumer_uuid,
                       ALLOC.c.resource_class, ALLOC.c.used)
             .join(RP, RP.c.id == ALLOC.c.resource_provider_id))
    if consumer is not None:
        query = query.where(ALLOC.c.consumer_uuid == consumer)
    with db.begin() as conn:
        return sorted(tuple(r) for r in conn.execute(query))


def used(db):
    """``{host: {class: total used}}`` from SQL."""
    used = collections.defaultdict(collections.Counter)
    for host, _consumer, rc, amount in allocations(db):
        used[host][rc] += amount
    return {h: dict(c) for h, c in used.items()}


def hosts_of(db, consumer):
    return {host for host, *_ in allocations(db, consumer)}


def inventory(db, host):
    with db.begin() as conn:
        return {r.resource_class: r.total for r in conn.execute(
            sa.select(INV.c.resource_class, INV.c.total)
            .join(RP, RP.c.id == INV.c.resource_provider_id)
            .where(RP.c.name == host))}


def cache_used(scheduler, host):
    [state] = scheduler.operator.get_host_states([host])
    return {r.resource_class: r.used for r in state.resources if r.used}


def cache_total(scheduler, host):
    [state] = scheduler.operator.get_host_states([host])
    return {r.resource_class: r.total for r in state.resources}


def group_spec(policy, rules=None, **fields):
    return make_spec(instance_group=request_spec.InstanceGroup(
        uuid=GROUP, policy=policy, rules=dict(rules or {})), **fields)


def ram_only(conf):
    conf.set_override("cpu_weight_multiplier", 0.0, "filter_scheduler")
    conf.set_override("disk_weight_multiplier", 0.0, "filter_scheduler")


def fill(scheduler, host):
    """Take every VCPU of ``host`` with a consumer of its own."""
    [state] = scheduler.operator.get_host_states([host])
    free = {r.resource_class: r.free for r in state.resources}
    scheduler.claims.claimer.claim(factories.uuids(1)[0], {
        factories.host_uuid(host): {"VCPU": free["VCPU"]}})


def db_snapshot(db):
    with db.begin() as conn:
        return {table.name: sorted(tuple(r) for r in conn.execute(
            sa.select(table)))
            for table in models.Base.metadata.sorted_tables}


def inv(rc, total, **kwargs):
    return compute_node.Inventory(resource_class=rc, total=total, **kwargs)


def bad_node(problem):
    node = factories.compute_node_obj("h1", vcpus=32)
    if problem == "reserved > total":
        node.inventories[0].reserved = 33
    elif problem == "unknown class":
        node.inventories.append(inv("FOO_BAR", 1))
    elif problem == "duplicate class":
        node.inventories.append(inv("VCPU", 8))
    elif problem == "bad trait":
        node.traits = ["HW_CPU_X86_AVX2", "NOT_A_TRAIT"]
    elif problem == "min_unit 0":
        node.inventories[0].min_unit = 0
    elif problem == "max_unit < min_unit":
        node.inventories[0].min_unit = 4
        node.inventories[0].max_unit = 2
    elif problem == "step_size 0":
        node.inventories[0].step_size = 0
    elif problem == "allocation_ratio 0":
        node.inventories[0].allocation_ratio = 0.0
    elif problem == "no report_sequence":
        node.obj_reset_changes()
        delattr(node, "report_sequence")
    return node


def transactions(scheduler):
    """Count the claim transactions a scheduler commits."""
    counted = []
    original = scheduler.claims.claimer._retrying

    def retrying(*args, **kwargs):
        counted.append(args[0])
        return original(*args, **kwargs)

    scheduler.claims.claimer._retrying = retrying
    return counted
