"""Host reports in SQL: idempotent upserts guarded by report_sequence."""

import dataclasses
import json

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt.db import models

RP = models.ResourceProvider.__table__
INV = models.Inventory.__table__
ALLOC = models.Allocation.__table__
TRAITS = models.ProviderTrait.__table__
AGGS = models.ProviderAggregate.__table__
REPORTS = models.HostReport.__table__


@dataclasses.dataclass(frozen=True)
class SaveResult:
    """What happened to one report in the database."""

    applied: bool          # False: an equal or newer report was there first
    generation: int | None
    # classes whose new inventory was refused because usage exceeds it
    refused: dict = dataclasses.field(default_factory=dict)
    # what the database holds when it differs from the report (refused
    # classes, or a race lost to a newer report): class -> inventory tuple
    stored_inventories: dict | None = None


def _inventory_row(inv):
    return {"resource_class": inv.resource_class, "total": inv.total,
            "reserved": inv.reserved, "min_unit": inv.min_unit,
            "max_unit": inv.max_unit, "step_size": inv.step_size,
            "allocation_ratio": inv.allocation_ratio}


def _report_row(node, received_at):
    return {
        "host": node.host, "nodename": node.nodename,
        "cell_uuid": node.cell_uuid,
        "availability_zone": node.availability_zone,
        "disabled": node.disabled, "report_sequence": node.report_sequence,
        "num_instances": node.num_instances, "num_io_ops": node.num_io_ops,
        # NUMA cells and PCI pools travel as object primitives: a worker
        # that starts rebuilds them exactly as the agent sent them
        "details": json.dumps({
            "capabilities": node.capabilities, "stats": node.stats,
            "metrics": node.metrics,
            "numa_cells": [c.obj_to_primitive() for c in node.numa_cells],
            "pci_pools": [p.obj_to_primitive() for p in node.pci_pools]}),
        "agent_updated_at": (node.updated_at.replace(tzinfo=None)
                             if node.updated_at else None),
        "instance_uuids": (None if node.instance_uuids is None
                           else json.dumps(sorted(node.instance_uuids))),
        "received_at": received_at,
    }


def save_report(db, node, received_at=None):
    """Persist ``node`` unless an equal or newer report is already stored.

    Every worker receives every report (fanout), so several workers race
    to store the same one: the conditional UPDATE on ``report_sequence``
    lets exactly one of them write, and the others return ``applied=False``.

    :returns: :class:`SaveResult`
    """
    received_at = received_at or timeutils.utcnow()
    try:
        with db.begin() as conn:
            row = conn.execute(
                sa.select(RP.c.id, RP.c.generation).where(
                    RP.c.uuid == node.uuid)).first()
            if row is None:
                return _insert(conn, node, received_at)
            won = conn.execute(
                REPORTS.update()
                .where(REPORTS.c.resource_provider_id == row.id)
                .where(REPORTS.c.report_sequence < node.report_sequence)
                .values(**_report_row(node, received_at))).rowcount
            if not won:
                return SaveResult(applied=False, generation=row.generation,
                                  stored_inventories=_stored(conn, row.id))
            refused = _replace_inventory(conn, row.id, node.inventories)
            changed = _replace_set(conn, TRAITS, "trait", row.id, node.traits)
            changed |= _replace_set(conn, AGGS, "aggregate_uuid", row.id,
                                    node.aggregates)
            generation = row.generation
            # bump when the inventory (refused is not None) or a set changed
            if refused is not None or changed:
                generation += 1
                conn.execute(RP.update().where(RP.c.id == row.id).values(
                    generation=RP.c.generation + 1,
                    updated_at=received_at))
            return SaveResult(
                applied=True, generation=generation, refused=refused or {},
                stored_inventories=_stored(conn, row.id) if refused else None)
    except db_exc.DBDuplicateEntry:
        pass
    # another worker inserted this new host at the same moment
    with db.begin() as conn:
        rp_id = conn.execute(sa.select(RP.c.id).where(
            RP.c.uuid == node.uuid)).scalar_one()
        return SaveResult(applied=False, generation=None,
                          stored_inventories=_stored(conn, rp_id))


def _stored(conn, rp_id):
    """The provider's inventory as committed now (a locking read, so that
    MariaDB's repeatable-read snapshot cannot hide a concurrent winner)."""
    rows = conn.execute(sa.select(INV).where(
        INV.c.resource_provider_id == rp_id).with_for_update(read=True))
    return {r.resource_class: (r.total, r.reserved, r.min_unit, r.max_unit,
                               r.step_size, r.allocation_ratio)
            for r in rows}


def _insert(conn, node, received_at):
    rp_id = conn.execute(RP.insert().values(
        uuid=node.uuid, name=node.nodename, generation=0,
        created_at=received_at)).inserted_primary_key[0]
    conn.execute(RP.update().where(RP.c.id == rp_id).values(
        root_provider_id=rp_id))
    conn.execute(REPORTS.insert().values(
        resource_provider_id=rp_id, **_report_row(node, received_at)))
    if node.inventories:
        conn.execute(INV.insert(), [
            dict(_inventory_row(inv), resource_provider_id=rp_id)
            for inv in node.inventories])
    if node.traits:
        conn.execute(TRAITS.insert(), [
            {"resource_provider_id": rp_id, "trait": t}
            for t in set(node.traits)])
    if node.aggregates:
        conn.execute(AGGS.insert(), [
            {"resource_provider_id": rp_id, "aggregate_uuid": a}
            for a in set(node.aggregates)])
    return SaveResult(applied=True, generation=0)


def provider_usage(conn, rp_ids):
    """``{rp_id: {class: used}}`` summed over all consumers."""
    usage = {rp: {} for rp in rp_ids}
    rows = conn.execute(
        sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                  sa.func.sum(ALLOC.c.used))
        .where(ALLOC.c.resource_provider_id.in_(list(rp_ids)))
        .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class))
    for rp_id, rc, used in rows:
        usage[rp_id][rc] = int(used)
    return usage


def _replace_inventory(conn, rp_id, inventories):
    """Make the stored inventory equal to ``inventories``.

    A class whose new capacity would be below what is already allocated
    keeps its old inventory (Placement answers 409 "inventory in use"
    there); those classes are returned as ``{class: reason}``.

    :returns: None when nothing changed, else the refusals (maybe empty)
    """
    current = {r.resource_class: r for r in conn.execute(
        sa.select(INV).where(INV.c.resource_provider_id == rp_id))}
    wanted = {inv.resource_class: _inventory_row(inv) for inv in inventories}
    changed = {rc for rc, row in wanted.items()
               if rc not in current or any(
                   getattr(current[rc], k) != v for k, v in row.items())}
    removed = set(current) - set(wanted)
    if not changed and not removed:
        return None
    used = provider_usage(conn, [rp_id])[rp_id]
    refused = {}
    for rc in sorted(changed | removed):
        row = wanted.get(rc)
        capacity = 0 if row is None else (
            (row["total"] - row["reserved"]) * row["allocation_ratio"])
        if used.get(rc, 0) > capacity:
            refused[rc] = ("%d in use exceeds the new capacity %g"
                           % (used[rc], capacity))
            continue
        if rc in current:
            conn.execute(INV.delete().where(
                INV.c.resource_provider_id == rp_id).where(
                INV.c.resource_class == rc))
        if row is not None:
            conn.execute(INV.insert().values(resource_provider_id=rp_id,
                                             **row))
    return refused


def _replace_set(conn, table, column, rp_id, values):
    col = table.c[column]
    current = {r[0] for r in conn.execute(
        sa.select(col).where(table.c.resource_provider_id == rp_id))}
    wanted = set(values)
    if current == wanted:
        return False
    if current - wanted:
        conn.execute(table.delete().where(
            table.c.resource_provider_id == rp_id).where(
            col.in_(list(current - wanted))))
    if wanted - current:
        conn.execute(table.insert(), [
            {"resource_provider_id": rp_id, column: v}
            for v in sorted(wanted - current)])
    return True


@dataclasses.dataclass
class StoredHost:
    """One host as read back from the database at worker start."""

    uuid: str
    generation: int
    report: dict
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: set = dataclasses.field(default_factory=set)
    aggregates: set = dataclasses.field(default_factory=set)
    usage: dict = dataclasses.field(default_factory=dict)


def load_hosts(db):
    """Every reported host with inventory, traits, aggregates and usage.

    Five set-wise queries, whatever the number of hosts, so that a worker
    starts in seconds at 100k hosts.
    """
    hosts = {}
    with db.begin() as conn:
        for row in conn.execute(
                sa.select(RP.c.id, RP.c.uuid, RP.c.generation, REPORTS)
                .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)):
            hosts[row.id] = StoredHost(uuid=row.uuid,
                                       generation=row.generation,
                                       report=row._asdict())
        for row in conn.execute(sa.select(INV)):
            host = hosts.get(row.resource_provider_id)
            if host is not None:
                host.inventories[row.resource_class] = (
                    row.total, row.reserved, row.min_unit, row.max_unit,
                    row.step_size, row.allocation_ratio)
        for rp_id, trait in conn.execute(sa.select(TRAITS)):
            if rp_id in hosts:
                hosts[rp_id].traits.add(trait)
        for rp_id, agg in conn.execute(sa.select(AGGS)):
            if rp_id in hosts:
                hosts[rp_id].aggregates.add(agg)
        for rp_id, rc, used in conn.execute(
                sa.select(ALLOC.c.resource_provider_id,
                          ALLOC.c.resource_class, sa.func.sum(ALLOC.c.used))
                .group_by(ALLOC.c.resource_provider_id,
                          ALLOC.c.resource_class)):
            if rp_id in hosts:
                hosts[rp_id].usage[rc] = int(used)
    return list(hosts.values())


def usages_by_uuid(db, uuids=None):
    """``{provider uuid: (generation, {class: used})}`` for a usage sync."""
    with db.begin() as conn:
        query = sa.select(RP.c.id, RP.c.uuid, RP.c.generation)
        if uuids is not None:
            query = query.where(RP.c.uuid.in_(list(uuids)))
        providers = {r.id: (r.uuid, r.generation)
                     for r in conn.execute(query)}
        usage = provider_usage(conn, providers) if providers else {}
    return {uuid: (gen, usage.get(rp_id, {}))
            for rp_id, (uuid, gen) in providers.items()}
