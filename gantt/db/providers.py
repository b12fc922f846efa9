"""Provider trees in SQL: idempotent upserts guarded by report_sequence.

A compute node is the root of a provider tree; its children (NUMA cells,
physical functions, GPUs…) arrive in the same report and are stored with
``root_provider_id`` set to the node's row. A standalone provider (a
shared storage pool, for example) is its own root, reported on its own
(``save_provider``) and marked by a ``provider_reports`` row instead of a
``host_reports`` one.

Locking: a report is stored in two transactions. The first only reads:
whether another compute node holds the host name (refused), and the root
(and it inserts a new tree whole). The second starts with writes and
locks: the sequence guard's UPDATE, then ``SELECT … FOR UPDATE`` of every
provider row of the tree, and only then reads inventories and usage. A
claim compares-and-swaps a provider's generation before it writes
allocations, so a claim that has not swapped yet waits on that lock (and
then fails if the save bumped the generation), and one that has swapped
has committed before the save reads. On MariaDB, whose repeatable-read
snapshot is taken at a transaction's first plain read, no plain read may
come before those locks, or the save could miss a claim committed in
between and cut an inventory below its usage.
"""

import collections
from concurrent import futures
import contextlib
import dataclasses
import datetime
import functools
import json
import threading

import numpy as np
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from gantt import exception
from gantt.db import models

RP = models.ResourceProvider.__table__
INV = models.Inventory.__table__
ALLOC = models.Allocation.__table__
TRAITS = models.ProviderTrait.__table__
AGGS = models.ProviderAggregate.__table__
REPORTS = models.HostReport.__table__
PROVIDER_REPORTS = models.ProviderReport.__table__

#: the reason given for a provider that left its report but stays
HAS_ALLOCATIONS = "provider has allocations"

_INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit",
                     "step_size", "allocation_ratio")


@dataclasses.dataclass(frozen=True)
class SaveResult:
    """What happened to one report in the database."""

    applied: bool          # False: an equal or newer report was there first
    # every provider of the tree after the save: uuid -> generation
    generations: dict = dataclasses.field(default_factory=dict)
    # what was not taken: provider uuid -> {class or "provider": reason}
    refused: dict = dataclasses.field(default_factory=dict)
    # what the database holds when it differs from the report (refused
    # classes or providers, or a race lost to a newer report):
    # provider uuid -> {class: inventory tuple}
    stored_inventories: dict | None = None
    root_uuid: str | None = None

    @property
    def generation(self):
        """The root provider's generation (None if unknown)."""
        return self.generations.get(self.root_uuid)


@dataclasses.dataclass
class StoredProvider:
    """A child or standalone provider as read back from the database."""

    uuid: str
    name: str
    parent_uuid: str | None
    generation: int
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: set = dataclasses.field(default_factory=set)
    aggregates: set = dataclasses.field(default_factory=set)
    usage: dict = dataclasses.field(default_factory=dict)
    # standalone providers only: the sequence and boot of their stored
    # report
    report_sequence: int | None = None
    boot_id: str | None = None


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
    # the rest of its provider tree, parents before children
    children: list = dataclasses.field(default_factory=list)


def _inventory_row(inv):
    return {"resource_class": inv.resource_class, "total": inv.total,
            "reserved": inv.reserved, "min_unit": inv.min_unit,
            "max_unit": inv.max_unit, "step_size": inv.step_size,
            "allocation_ratio": inv.allocation_ratio}


def _inventory_tuple(row):
    """An inventory as a tuple, from a table row or an _inventory_row."""
    if isinstance(row, dict):
        return tuple(row[k] for k in _INVENTORY_FIELDS)
    return (row.total, row.reserved, row.min_unit, row.max_unit,
            row.step_size, row.allocation_ratio)


#: the most a TEXT column holds on MariaDB/MySQL, in bytes (the JSON
#: written is ASCII: one byte a character)
TEXT_MAX = 65535


def _report_row(node, received_at):
    """The host_reports row of a report.

    :raises: InvalidRequest for JSON detail longer than a TEXT column holds
        (MariaDB would refuse the statement; PostgreSQL would take it, and
        a report must mean the same on both)
    """
    row = _report_values(node, received_at)
    for column in ("details", "instance_uuids"):
        if row[column] is not None and len(row[column]) > TEXT_MAX:
            raise _invalid("report of %s: %s take %d bytes as JSON, more "
                           "than the %d the database stores" % (
                               node.host, "capabilities, stats, metrics, "
                               "NUMA cells and PCI pools" if column ==
                               "details" else "instance_uuids",
                               len(row[column]), TEXT_MAX))
    return row


def _report_values(node, received_at):
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
        "boot_id": node.boot_id,
    }


# -- validation (before any SQL) ----------------------------------------------


def _invalid(reason):
    return exception.InvalidRequest(reason=reason)


def _validate_provider(provider, what):
    """What the tables cannot store, or would store ambiguously."""
    name = getattr(provider, "name", None)
    if name is not None and not 0 < len(name) <= 200:
        raise _invalid("%s: name must be 1 to 200 characters" % what)
    seen = set()
    for inv in provider.inventories:
        rc = inv.resource_class
        if not 0 < len(rc) <= 255:
            raise _invalid("%s: bad resource class %r" % (what, rc))
        if rc in seen:
            raise _invalid("%s: resource class %s reported twice"
                           % (what, rc))
        seen.add(rc)
    for trait in provider.traits:
        if not 0 < len(trait) <= 255:
            raise _invalid("%s: bad trait %r" % (what, trait))
    for agg in provider.aggregates:
        if not uuidutils.is_uuid_like(agg):
            raise _invalid("%s: aggregate %r is not a uuid" % (what, agg))


def tree_order(root_uuid, children):
    """``children`` ordered parents first; InvalidRequest for a bad tree.

    Each child's ``parent_provider_uuid`` must be ``root_uuid`` or the uuid
    of another child of the same report; uuids must be unique and the
    parent links must not form a cycle.
    """
    by_uuid = {}
    for child in children:
        if child.uuid == root_uuid or child.uuid in by_uuid:
            raise _invalid("resource provider %s appears twice in the tree "
                           "of %s" % (child.uuid, root_uuid))
        by_uuid[child.uuid] = child
    kids = collections.defaultdict(list)
    for child in children:
        parent = child.parent_provider_uuid
        if parent != root_uuid and parent not in by_uuid:
            raise _invalid("resource provider %s: parent %s is not in the "
                           "tree of %s" % (child.uuid, parent, root_uuid))
        kids[parent].append(child)
    ordered = []
    queue = collections.deque([root_uuid])
    while queue:
        for child in kids.pop(queue.popleft(), ()):
            ordered.append(child)
            queue.append(child.uuid)
    if len(ordered) != len(children):
        loop = sorted(set(by_uuid) - {c.uuid for c in ordered})
        raise _invalid("resource providers %s of the tree of %s form a "
                       "cycle" % (", ".join(loop), root_uuid))
    for child in ordered:
        _validate_provider(child, "resource provider %s" % child.uuid)
    return ordered


# -- compute node reports -----------------------------------------------------


def save_report(db, node, received_at=None, force=False):
    """Persist ``node`` and its provider tree unless an equal or newer
    report is already stored.

    Every worker receives every report (fanout), so several workers race
    to store the same one: the conditional UPDATE on ``report_sequence``
    lets exactly one of them write, and the others return ``applied=False``.

    :param force: take inventory cuts below what is allocated (otherwise
        such a class keeps its stored inventory and is listed as refused)
    :returns: :class:`SaveResult`
    :raises: InvalidRequest (nothing stored) for a malformed tree, or a
        provider uuid that already belongs elsewhere
    """
    received_at = received_at or timeutils.utcnow()
    children = tree_order(node.uuid, node.child_providers)
    try:
        return _save_tree(db, node, children, received_at, force)
    except db_exc.DBDuplicateEntry:
        # another worker inserted this new host (or one of its providers)
        # at the same moment: once more, now that its rows are committed
        return _save_tree(db, node, children, received_at, force)


def _save_tree(db, node, children, received_at, force):
    with db.begin() as conn:
        _check_host_name(conn, node)
        row = _lookup(conn, node.uuid)
        if row is None:
            return _insert_tree(conn, node, children, received_at)
    if row.host_report is None:
        raise _invalid("resource provider %s is not a compute node but %s"
                       % (node.uuid, _role(row)))
    with db.begin() as conn:
        # writes and locks first: see the module's docstring
        won = conn.execute(
            REPORTS.update()
            .where(REPORTS.c.resource_provider_id == row.id)
            .where(_supersedes_stored(node))
            .values(**_report_row(node, received_at))).rowcount
        writer = _TreeWriter(conn, row.id, node.uuid, received_at, force)
        if not won:
            return writer.lost()
        writer.lock()
        writer.check_owners(children)
        writer.upsert(node, None, node.nodename)
        for child in children:
            writer.upsert(child, child.parent_provider_uuid, child.name)
        writer.remove_others()
        return writer.apply()


def _supersedes_stored(node, reports=REPORTS):
    """``report_rules.supersedes`` of ``node`` (a ComputeNode or a
    ProviderReport) over the report stored in ``reports``, as the
    sequence guard's condition."""
    newer = reports.c.report_sequence < node.report_sequence
    if node.boot_id is None:
        return newer
    return sa.or_(newer, reports.c.boot_id.is_(None),
                  reports.c.boot_id != node.boot_id)


def _check_host_name(conn, node):
    """One host name, one compute node: HostNameTaken when another
    provider reports as ``node.host`` (the unique key on the host name
    stops a concurrent insert; save_report then comes here again)."""
    holder = conn.execute(
        sa.select(RP.c.uuid)
        .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        .where(REPORTS.c.host == node.host)).scalar()
    if holder is not None and holder != node.uuid:
        raise exception.HostNameTaken(host=node.host, holder=holder,
                                      uuid=node.uuid)


def _lookup(conn, uuid):
    """The provider ``uuid`` and what kind of provider it is, or None."""
    return conn.execute(
        sa.select(RP.c.id, RP.c.root_provider_id,
                  REPORTS.c.resource_provider_id.label("host_report"),
                  PROVIDER_REPORTS.c.resource_provider_id.label("report"))
        .outerjoin(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        .outerjoin(PROVIDER_REPORTS,
                   PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
        .where(RP.c.uuid == uuid)).first()


def _role(row):
    if row.root_provider_id != row.id:
        return "a child in another provider tree"
    if row.host_report is not None:
        return "a compute node"
    return "a standalone provider"


def _insert_tree(conn, node, children, received_at):
    # the root first: if another worker stored this host meanwhile, its
    # unique key stops this insert (and save_report tries again) before
    # its children could look like another tree's
    root_id = _insert_provider(conn, node.uuid, node.nodename, None,
                               received_at)
    known = conn.execute(sa.select(RP.c.uuid).where(
        RP.c.uuid.in_([c.uuid for c in children]))).scalars().all()
    if known:
        raise _invalid("resource provider %s already belongs to another "
                       "provider tree" % sorted(known)[0])
    conn.execute(REPORTS.insert().values(
        resource_provider_id=root_id, **_report_row(node, received_at)))
    ids = {node.uuid: root_id}
    entries = [(root_id, node)]
    for child in children:
        ids[child.uuid] = _insert_provider(
            conn, child.uuid, child.name, (root_id,
                                           ids[child.parent_provider_uuid]),
            received_at)
        entries.append((ids[child.uuid], child))
    _insert_contents(conn, entries)
    return SaveResult(applied=True, generations=dict.fromkeys(ids, 0),
                      root_uuid=node.uuid)


def _insert_provider(conn, uuid, name, parentage, received_at):
    """Insert one provider row; ``parentage``: (root id, parent id), or
    None for a root (which then points at itself)."""
    root_id, parent_id = parentage or (None, None)
    rp_id = conn.execute(RP.insert().values(
        uuid=uuid, name=name, generation=0, root_provider_id=root_id,
        parent_provider_id=parent_id,
        created_at=received_at)).inserted_primary_key[0]
    if parentage is None:
        conn.execute(RP.update().where(RP.c.id == rp_id).values(
            root_provider_id=rp_id))
    return rp_id


def _insert_contents(conn, entries):
    """Inventories, traits and aggregates of new providers, set-wise."""
    inventories = [dict(_inventory_row(inv), resource_provider_id=rp_id)
                   for rp_id, p in entries for inv in p.inventories]
    traits = [{"resource_provider_id": rp_id, "trait": t}
              for rp_id, p in entries for t in sorted(set(p.traits))]
    aggs = [{"resource_provider_id": rp_id, "aggregate_uuid": a}
            for rp_id, p in entries for a in sorted(set(p.aggregates))]
    for table, rows in ((INV, inventories), (TRAITS, traits),
                        (AGGS, aggs)):
        if rows:
            conn.execute(table.insert(), rows)


class _TreeWriter:
    """Brings the stored rows of one provider tree to a report's state.

    ``lock`` reads (and locks) the providers of the tree, ``upsert`` each
    reported provider (the root first, then parents before children), then
    ``remove_others`` and ``apply`` write the inventories, traits and
    aggregates and bump the generation of every provider that changed.
    """

    def __init__(self, conn, root_id, root_uuid, received_at, force):
        self.conn = conn
        self.root_id = root_id
        self.root_uuid = root_uuid
        self.received_at = received_at
        self.force = force
        self.rows = {}          # uuid -> locked row of this tree
        self.ids = {}           # uuid -> id, for the providers reported
        self.wanted = {}        # id -> the reported provider (or node)
        self.new = set()        # ids inserted by this save
        self.changed = set()    # ids whose generation must move
        self.refused = collections.defaultdict(dict)

    def lock(self, locking=True):
        """Read (and lock) the rows of the tree's providers."""
        query = (sa.select(RP.c.id, RP.c.uuid, RP.c.generation, RP.c.name,
                           RP.c.root_provider_id, RP.c.parent_provider_id)
                 .where(RP.c.root_provider_id == self.root_id)
                 .order_by(RP.c.id))
        if locking:
            query = query.with_for_update()
        self.rows = {row.uuid: row for row in self.conn.execute(query)}

    def lost(self):
        """The result of a report that lost to an equal or newer one: what
        the winner stored (which committed before the sequence guard's
        UPDATE could read its row, so plain reads see it)."""
        self.lock(locking=False)
        by_id = {r.id: r.uuid for r in self.rows.values()}
        return SaveResult(
            applied=False,
            generations={r.uuid: r.generation for r in self.rows.values()},
            stored_inventories=_stored(self.conn, by_id),
            root_uuid=self.root_uuid)

    def check_owners(self, children):
        """Refuse children that are providers of another tree (or roots).

        A plain read: one committed later makes this save's insert fail on
        the unique uuid, and the retry of save_report finds it here.
        """
        uuids = [c.uuid for c in children if c.uuid not in self.rows]
        if not uuids:
            return
        for row in self.conn.execute(
                sa.select(RP.c.uuid, RP.c.id, RP.c.root_provider_id,
                          REPORTS.c.resource_provider_id.label(
                              "host_report"))
                .outerjoin(REPORTS,
                           REPORTS.c.resource_provider_id == RP.c.id)
                .where(RP.c.uuid.in_(sorted(uuids)))
                .order_by(RP.c.uuid)):
            raise _invalid("resource provider %s is already %s"
                           % (row.uuid, _role(row)))

    def upsert(self, provider, parent_uuid, name):
        row = self.rows.get(provider.uuid)
        parent_id = None if parent_uuid is None else self.ids[parent_uuid]
        if row is None:
            rp_id = _insert_provider(self.conn, provider.uuid, name,
                                     (self.root_id, parent_id),
                                     self.received_at)
            self.new.add(rp_id)
        else:
            rp_id = row.id
            if parent_uuid is not None and row.parent_provider_id != (
                    parent_id):
                self.changed.add(rp_id)
            if row.name != name or rp_id in self.changed:
                self.conn.execute(RP.update().where(RP.c.id == rp_id).values(
                    name=name, parent_provider_id=(
                        parent_id if parent_uuid else None)))
        self.ids[provider.uuid] = rp_id
        self.wanted[rp_id] = provider

    def remove_others(self):
        """Delete the providers the report no longer names, but those that
        hold allocations (and their ancestors): they stay, refused."""
        gone = {r.id: r for uuid, r in self.rows.items()
                if uuid not in self.ids}
        if not gone:
            return
        holders = {rp for rp, used in provider_usage(self.conn, gone).items()
                   if used}
        keep = set()
        for rp_id in holders:
            self.refused[gone[rp_id].uuid]["provider"] = HAS_ALLOCATIONS
            parent = gone[rp_id].parent_provider_id
            while parent in gone and parent not in keep | holders:
                keep.add(parent)
                self.refused[gone[parent].uuid]["provider"] = (
                    "child provider %s has allocations" % gone[rp_id].uuid)
                parent = gone[parent].parent_provider_id
        doomed = sorted(set(gone) - holders - keep)
        if doomed:
            self.conn.execute(RP.delete().where(RP.c.id.in_(doomed)))
            for rp_id in doomed:
                del self.rows[gone[rp_id].uuid]

    def apply(self):
        existing = {rp_id: p for rp_id, p in self.wanted.items()
                    if rp_id not in self.new}
        _insert_contents(self.conn, [
            (rp_id, p) for rp_id, p in self.wanted.items()
            if rp_id in self.new])
        uuids = {rp_id: p.uuid for rp_id, p in existing.items()}
        for rp_id, (written, refused) in _replace_inventories(
                self.conn, existing, self.force).items():
            if written:
                self.changed.add(rp_id)
            if refused:
                self.refused[uuids[rp_id]].update(refused)
        for table, column, attr in ((TRAITS, "trait", "traits"),
                                    (AGGS, "aggregate_uuid", "aggregates")):
            self.changed |= _replace_sets(self.conn, table, column, {
                rp_id: getattr(p, attr) for rp_id, p in existing.items()})
        if self.changed:
            self.conn.execute(
                RP.update().where(RP.c.id.in_(sorted(self.changed)))
                .values(generation=RP.c.generation + 1,
                        updated_at=self.received_at))
        return self._result()

    def _result(self):
        generations = {r.uuid: r.generation + (r.id in self.changed)
                       for r in self.rows.values()}
        generations.update({p.uuid: 0 for rp_id, p in self.wanted.items()
                            if rp_id in self.new})
        stored = None
        if self.refused:
            by_id = {r.id: r.uuid for r in self.rows.values()
                     if r.uuid in self.refused}
            stored = _stored(self.conn, by_id)
        return SaveResult(applied=True, generations=generations,
                          refused={u: dict(r)
                                   for u, r in self.refused.items()},
                          stored_inventories=stored,
                          root_uuid=self.root_uuid)


def _stored(conn, uuids_by_id):
    """``{uuid: {class: inventory tuple}}`` for the providers of
    ``uuids_by_id``."""
    stored = {uuid: {} for uuid in uuids_by_id.values()}
    if uuids_by_id:
        for r in conn.execute(sa.select(INV).where(
                INV.c.resource_provider_id.in_(sorted(uuids_by_id)))):
            stored[uuids_by_id[r.resource_provider_id]][
                r.resource_class] = _inventory_tuple(r)
    return stored


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


def _replace_inventories(conn, providers, force):
    """Make each provider's stored inventory equal to its report's.

    A class whose new capacity would be below what is already allocated
    keeps its old inventory (Placement answers 409 "inventory in use"
    there) unless ``force``; those classes are returned as reasons. A
    class no longer reported while some of it is allocated is kept even
    when forced: its allocations would count against nothing (Placement
    refuses that delete whatever the caller says).

    :param providers: ``{rp_id: provider (anything with inventories)}``
    :returns: ``{rp_id: (anything written?, {class: reason refused})}``
    """
    current = collections.defaultdict(dict)
    if providers:
        for r in conn.execute(sa.select(INV).where(
                INV.c.resource_provider_id.in_(sorted(providers)))):
            current[r.resource_provider_id][r.resource_class] = r
    diffs = {}
    for rp_id, provider in providers.items():
        wanted = {inv.resource_class: _inventory_row(inv)
                  for inv in provider.inventories}
        have = current[rp_id]
        touched = {rc for rc in set(wanted) | set(have)
                   if rc not in have or rc not in wanted
                   or _inventory_tuple(have[rc]) != _inventory_tuple(
                       wanted[rc])}
        if touched:
            diffs[rp_id] = (wanted, have, touched)
    result = {rp_id: (False, {}) for rp_id in providers}
    if force:
        # only removals are checked: read usage where there are some
        checked = {rp_id: d for rp_id, d in diffs.items()
                      if set(d[1]) - set(d[0])}
    else:
        checked = diffs
    usage = provider_usage(conn, checked) if checked else {}
    for rp_id, (wanted, have, touched) in diffs.items():
        result[rp_id] = _write_inventory(conn, rp_id, wanted, have, touched,
                                         usage.get(rp_id, {}), force)
    return result


def _write_inventory(conn, rp_id, wanted, have, touched, used, force):
    refused = {}
    deletes, inserts = [], []
    for rc in sorted(touched):
        row = wanted.get(rc)
        in_use = used.get(rc, 0)
        if row is None and in_use:
            refused[rc] = ("%d in use; a class cannot be removed while "
                           "allocated" % in_use)
            continue
        capacity = 0 if row is None else (
            (row["total"] - row["reserved"]) * row["allocation_ratio"])
        if in_use > capacity and not force:
            refused[rc] = ("%d in use exceeds the new capacity %g"
                           % (in_use, capacity))
            continue
        if rc in have:
            deletes.append(rc)
        if row is not None:
            inserts.append(dict(row, resource_provider_id=rp_id))
    if deletes:
        conn.execute(INV.delete().where(
            INV.c.resource_provider_id == rp_id).where(
            INV.c.resource_class.in_(deletes)))
    if inserts:
        conn.execute(INV.insert(), inserts)
    return bool(deletes or inserts), refused


def _replace_sets(conn, table, column, wanted_by_id):
    """Make each provider's set of ``column`` values equal to the wanted
    one; returns the ids whose set changed."""
    col = table.c[column]
    current = collections.defaultdict(set)
    if wanted_by_id:
        for rp_id, value in conn.execute(
                sa.select(table.c.resource_provider_id, col).where(
                    table.c.resource_provider_id.in_(sorted(wanted_by_id)))):
            current[rp_id].add(value)
    changed = set()
    inserts = []
    for rp_id, values in wanted_by_id.items():
        wanted, have = set(values), current[rp_id]
        if wanted == have:
            continue
        changed.add(rp_id)
        if have - wanted:
            conn.execute(table.delete().where(
                table.c.resource_provider_id == rp_id).where(
                col.in_(sorted(have - wanted))))
        inserts.extend({"resource_provider_id": rp_id, column: v}
                       for v in sorted(wanted - have))
    if inserts:
        conn.execute(table.insert(), inserts)
    return changed


# -- standalone providers -----------------------------------------------------


def save_provider(db, report, received_at=None):
    """Persist a standalone provider's report (``ProviderReport``) unless
    an equal or newer one is already stored.

    The provider is its own tree root. The same rules as for a compute
    node's report apply: the sequence guard, and inventory cuts below what
    is allocated refused unless ``report.force``.

    :returns: :class:`SaveResult`
    :raises: InvalidRequest when the uuid is a compute node or a child of
        one, or the provider names a parent
    """
    provider = report.provider
    if provider.parent_provider_uuid is not None:
        raise _invalid("standalone resource provider %s cannot have a "
                       "parent (%s)" % (provider.uuid,
                                        provider.parent_provider_uuid))
    _validate_provider(provider, "resource provider %s" % provider.uuid)
    received_at = received_at or timeutils.utcnow()
    try:
        return _save_standalone(db, report, received_at)
    except db_exc.DBDuplicateEntry:
        # another worker inserted it at the same moment
        return _save_standalone(db, report, received_at)


def _save_standalone(db, report, received_at):
    provider = report.provider
    with db.begin() as conn:
        row = _lookup(conn, provider.uuid)
        if row is None:
            rp_id = _insert_provider(conn, provider.uuid, provider.name,
                                     None, received_at)
            conn.execute(PROVIDER_REPORTS.insert().values(
                resource_provider_id=rp_id,
                report_sequence=report.report_sequence,
                received_at=received_at, boot_id=report.boot_id))
            _insert_contents(conn, [(rp_id, provider)])
            return SaveResult(applied=True, generations={provider.uuid: 0},
                              root_uuid=provider.uuid)
    if row.report is None:
        raise _invalid("resource provider %s is %s, not a standalone "
                       "provider" % (provider.uuid, _role(row)))
    with db.begin() as conn:
        # writes and locks first: see the module's docstring
        won = conn.execute(
            PROVIDER_REPORTS.update()
            .where(PROVIDER_REPORTS.c.resource_provider_id == row.id)
            .where(_supersedes_stored(report, PROVIDER_REPORTS))
            .values(report_sequence=report.report_sequence,
                    received_at=received_at,
                    boot_id=report.boot_id)).rowcount
        writer = _TreeWriter(conn, row.id, provider.uuid, received_at,
                             report.force)
        if not won:
            return writer.lost()
        writer.lock()
        writer.upsert(provider, None, provider.name)
        return writer.apply()


def delete_provider(db, uuid):
    """Delete a standalone provider; a no-op when it does not exist.

    :returns: True if it was deleted, False if there was none
    :raises: ProviderInUse when consumers hold allocations on it;
        InvalidRequest when ``uuid`` is a compute node or a child of one
    """
    with db.begin() as conn:
        row = conn.execute(
            sa.select(RP.c.id, RP.c.root_provider_id).where(
                RP.c.uuid == uuid).with_for_update()).first()
        if row is None:
            return False
        standalone = conn.execute(
            sa.select(PROVIDER_REPORTS.c.resource_provider_id).where(
                PROVIDER_REPORTS.c.resource_provider_id == row.id)).first()
        if standalone is None:
            raise _invalid("resource provider %s is not a standalone "
                           "provider" % uuid)
        consumers = conn.execute(
            sa.select(sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
            .where(ALLOC.c.resource_provider_id == row.id)).scalar_one()
        if consumers:
            raise exception.ProviderInUse(uuid=uuid,
                                          consumers=int(consumers))
        conn.execute(RP.delete().where(RP.c.id == row.id))
    return True


# -- loading ------------------------------------------------------------------


#: A worker's start reads every table as a few long texts, one per range of
#: ids, instead of one row per value: a pure-Python driver (PyMySQL) spends
#: microseconds on every row and field, which at 100k hosts and 2.4
#: million rows was most of the start. Fields and records are joined with
#: an ASCII unit separator that no value read this way holds (uuids,
#: resource classes and traits are validated; details are JSON, which
#: escapes control characters). A free-form name (host, node, zone) could
#: hold one: then its range does not split into as many fields as it
#: should, and that range is read again as plain rows.
#:
#: NOTE: each range is one ungrouped aggregate: MariaDB's GROUP_CONCAT in a
#: grouped query (``GROUP BY id DIV n``) is several times slower.
_SEP = "\x1f"
#: the separators of the items of a list, and of the fields of an item
_SEP_LIST, _SEP_ITEM = "\x1e", "\x1d"
#: providers per range of the host, trait and aggregate queries (a
#: host's record is half a kilobyte to a few: NUMA cells, instances)
_BATCH = 1000
#: rows per range of the inventory and allocation queries
_ROW_BATCH = 10000
#: the longest text MySQL may join (None: its max_allowed_packet, less a
#: margin); a longer one is cut, and its range read as plain rows
_CONCAT_LIMIT = None
#: fields of a host record, in order
_HOST_FIELDS = ("ids", "uuids", "generation", "hosts", "nodenames",
                "cell_uuids", "zones", "disabled", "report_sequence",
                "num_instances", "num_io_ops", "received_at",
                "agent_updated_at", "details", "instance_uuids")
_OPTIONAL = ("cell_uuids", "zones", "agent_updated_at", "instance_uuids")
_INT_FIELDS = ("ids", "generation", "disabled", "report_sequence",
               "num_instances", "num_io_ops")


@dataclasses.dataclass
class StoredHosts:
    """Every reported host as columns: entry ``i`` of each is host ``i``,
    hosts in provider id order (what :func:`load_host_columns` returns).

    Contents many hosts share are held once: ``inventory_sets[c]`` is the
    inventory of every host ``i`` with ``inventory_codes[i] == c`` (code 0
    the empty one); likewise traits, aggregates and details.
    """

    ids: np.ndarray             # provider ids, ascending
    uuids: list
    generation: np.ndarray      # int64
    hosts: list
    nodenames: list
    cell_uuids: list            # str or None
    zones: list                 # str or None
    disabled: np.ndarray        # bool
    report_sequence: np.ndarray  # int64
    num_instances: np.ndarray   # int64
    num_io_ops: np.ndarray      # int64
    received_at: np.ndarray     # float64 seconds since the epoch (UTC)
    received_texts: list        # the same as stored, for received()
    agent_updated_at: list      # naive datetimes or None
    instance_uuids: list        # JSON text or None
    detail_codes: np.ndarray
    detail_texts: list          # JSON text
    # {class: (total, reserved, min_unit, max_unit, step, ratio)}
    inventory_codes: np.ndarray
    inventory_sets: list
    trait_codes: np.ndarray
    trait_sets: list            # frozensets
    aggregate_codes: np.ndarray
    aggregate_sets: list        # frozensets
    # usage: one entry per (host, class) used, by host index: the host
    # index, the class (index into usage_classes) and the amount
    usage_rows: np.ndarray
    usage_codes: np.ndarray
    usage_amounts: np.ndarray
    usage_classes: list
    # host index -> its other providers (StoredProvider), parents first
    children: dict

    def __len__(self):
        return len(self.uuids)

    def inventories(self, i):
        return self.inventory_sets[self.inventory_codes[i]]

    def traits(self, i):
        return self.trait_sets[self.trait_codes[i]]

    def aggregates(self, i):
        return self.aggregate_sets[self.aggregate_codes[i]]

    def details(self, i):
        return self.detail_texts[self.detail_codes[i]]

    def received(self, i):
        """When host ``i``'s report was received (a naive datetime)."""
        return datetime.datetime.fromisoformat(self.received_texts[i])

    def usage_of(self, i):
        """``{class: used}`` of host ``i``."""
        lo, hi = np.searchsorted(self.usage_rows, (i, i + 1))
        return {self.usage_classes[c]: a for c, a in zip(
            self.usage_codes[lo:hi].tolist(),
            self.usage_amounts[lo:hi].tolist(), strict=True)}

    def stored_host(self, i):
        """Host ``i`` as a :class:`StoredHost`."""
        rp_id, generation = int(self.ids[i]), int(self.generation[i])
        report = {
            "id": rp_id, "uuid": self.uuids[i], "generation": generation,
            "resource_provider_id": rp_id, "host": self.hosts[i],
            "nodename": self.nodenames[i], "cell_uuid": self.cell_uuids[i],
            "availability_zone": self.zones[i],
            "disabled": bool(self.disabled[i]),
            "report_sequence": int(self.report_sequence[i]),
            "num_instances": int(self.num_instances[i]),
            "num_io_ops": int(self.num_io_ops[i]),
            "details": self.details(i),
            "instance_uuids": self.instance_uuids[i],
            "agent_updated_at": self.agent_updated_at[i],
            "received_at": self.received(i)}
        return StoredHost(
            uuid=self.uuids[i], generation=generation, report=report,
            inventories=dict(self.inventories(i)),
            traits=set(self.traits(i)), aggregates=set(self.aggregates(i)),
            usage=self.usage_of(i), children=list(self.children.get(i, ())))


def load_hosts(db):
    """Every reported host with its provider tree: inventory, traits,
    aggregates and usage of each provider, as :class:`StoredHost`."""
    stored = load_host_columns(db)
    return [stored.stored_host(i) for i in range(len(stored))]


def load_host_columns(db):
    """Every reported host with its provider tree, as :class:`StoredHosts`.

    Each table is read in ranges of ids, one result row per range: about
    a hundred short queries per table at 100k hosts. Two connections
    read at once (on MySQL and PostgreSQL), each in a repeatable-read
    transaction: the reports, generations, inventories and usage on the
    first; the traits and aggregates on the second, whose snapshot is
    taken after the first's, so that a host's contents are never older
    than its report says. The queries run on threads of their own while
    this one parses what they returned: the database's work and this
    process's overlap.
    """
    threaded = db.backend != "sqlite"
    with contextlib.ExitStack() as stack:
        first = _Reader(stack.enter_context(_snapshot(db)))
        second = first
        if threaded:
            first.conn.execute(sa.select(RP.c.id).limit(1)).all()
            second = _Reader(stack.enter_context(_snapshot(db)))
        for reader in {first, second}:
            stack.enter_context(reader.long_concatenation())
        # sqlite3 connections stay in the thread that made them
        fetch = stack.enter_context(_Fetcher([
            ("hosts", first.host_texts),
            ("children", first.child_rows),
            ("inventories", first.inventory_texts),
            ("usage", first.usage_texts)], threaded))
        other = stack.enter_context(_Fetcher([
            ("traits", functools.partial(
                second.joined_texts, TRAITS, TRAITS.c.trait)),
            ("aggregates", functools.partial(
                second.member_texts, AGGS, AGGS.c.aggregate_uuid))],
            threaded))
        # in the order they come
        columns = _host_columns(fetch.tokens("hosts"))
        children = _children(fetch.get("children"), columns["ids"],
                             columns["uuids"])
        traits = _joined_sets(other.tokens("traits"))
        inventories = _sets(fetch.tokens("inventories"))
        inventories = inventories[:2] + (
            [_inventory_dict(items) for items in inventories[2]],)
        aggregates = _sets(other.tokens("aggregates"))
        usage = _usage(fetch.tokens("usage"))
    return _assemble(columns, children, inventories, traits, aggregates,
                     usage)


@contextlib.contextmanager
def _snapshot(db):
    """A connection in a repeatable-read transaction (SQLite's are)."""
    if db.backend == "sqlite":
        with db.begin() as conn:
            yield conn
        return
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


class _Fetcher:
    """Runs the named jobs in turn, on a thread of its own when
    ``threaded``; :meth:`get` waits for one's result (or raises its
    error)."""

    def __init__(self, jobs, threaded=True):
        self._jobs = jobs
        self._results = {name: futures.Future() for name, _job in jobs}
        self._stop = False
        self._thread = threading.Thread(
            target=self._run, daemon=True,
            name="load-hosts") if threaded else None

    def __enter__(self):
        if self._thread is None:
            self._run()
        else:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        # NOTE: the connection is not released before its last query
        self._stop = True
        if self._thread is not None:
            self._thread.join()

    def _run(self):
        for k, (name, job) in enumerate(self._jobs):
            if self._stop:
                break
            try:
                value = job()
            except BaseException as exc:
                for later, _job in self._jobs[k:]:
                    self._results[later].set_exception(exc)
                return
            self._results[name].set_result(value)

    def get(self, name):
        return self._results[name].result()

    def tokens(self, name):
        """The fields of a ranged job's rows, all in one list."""
        tokens = []
        for chunk in self.get(name):
            tokens.extend(chunk.split(_SEP) if isinstance(chunk, str)
                          else chunk)
        return tokens


_LO = sa.bindparam("lo", type_=sa.Integer)
_HI = sa.bindparam("hi", type_=sa.Integer)


def _in_range(column):
    return sa.and_(column >= _LO, column < _HI)


class _Reader:
    """The ranged queries of a load, on one connection."""

    def __init__(self, conn):
        self.conn = conn
        self.dialect = conn.dialect.name

    @contextlib.contextmanager
    def long_concatenation(self):
        """MySQL cuts ``GROUP_CONCAT`` at 1 KiB by default (MariaDB at 1
        MiB): lift that, up to what a result row may hold, on this
        connection while loading."""
        if self.dialect != "mysql":
            yield
            return
        old = int(self.conn.exec_driver_sql(
            "SELECT @@SESSION.group_concat_max_len").scalar())
        # NOTE: a result row longer than max_allowed_packet would fail
        self.conn.exec_driver_sql(
            "SET SESSION group_concat_max_len = %s" % (
                _CONCAT_LIMIT or "@@SESSION.max_allowed_packet - 4096"))
        try:
            yield
        finally:
            self.conn.exec_driver_sql(
                "SET SESSION group_concat_max_len = %d" % old)

    # -- expressions -------------------------------------------------------

    def text(self, column):
        """A column as text that reads back to the driver's value."""
        if isinstance(column.type, sa.DateTime) and (
                self.dialect == "postgresql"):
            # whatever the server's DateStyle
            return sa.func.to_char(column, "YYYY-MM-DD HH24:MI:SS.US")
        if isinstance(column.type, sa.String):
            return column
        return sa.cast(column, sa.String)

    def joined(self, separator, parts):
        """``parts`` (columns or texts, none NULL) as texts, joined."""
        if self.dialect == "sqlite":
            out = self.text(parts[0])
            for part in parts[1:]:
                out = out + separator + self.text(part)
            return out
        # CONCAT_WS converts numbers (and MySQL's dates) itself, as the
        # driver would read them: cheaper than CAST on MariaDB
        return sa.func.concat_ws(separator, *(
            self.text(p) if isinstance(p.type, sa.DateTime) and (
                self.dialect == "postgresql") else p for p in parts))

    def optional(self, column):
        """'' for NULL, else '=' and the column as text."""
        return sa.func.coalesce(sa.literal("=") + self.text(column), "")

    # -- reading -------------------------------------------------------------

    def _texts(self, key, parts, source, batch=_BATCH, ranged=False):
        """The texts ``parts`` of every row of ``source`` (a table or a
        join; or, when ``ranged``, a query of the rows whose ``key`` is in
        ``[:lo, :hi)``), ``batch`` values of ``key`` per query: per range
        one text of the fields of its rows joined with ``_SEP``, or the
        list of those fields when a field holds ``_SEP``."""
        lo, hi = self.conn.execute(
            sa.select(sa.func.min(key), sa.func.max(key))).one()
        if lo is None:
            return []
        record = self.joined(_SEP, parts)
        query = sa.select(sa.func.count(),
                          sa.func.aggregate_strings(record, _SEP)
                          ).select_from(source)
        plain = sa.select(*map(self.text, parts)).select_from(source)
        if not ranged:
            query = query.where(_in_range(key))
            plain = plain.where(_in_range(key))
        chunks = []
        for start in range(lo, hi + 1, batch):
            params = {"lo": start, "hi": start + batch}
            count, text = self.conn.execute(query, params).one()
            if not count:
                continue
            if text is None or text.count(_SEP) != count * len(parts) - 1:
                # a separator in a name (or a cut text): plain rows
                text = [str(value) for row in self.conn.execute(
                    plain, params) for value in row]
            chunks.append(text)
        return chunks

    def host_texts(self):
        """The fields of each host's record (see ``_HOST_FIELDS``)."""
        rp, r = RP.c, REPORTS.c
        optional = self.optional
        parts = [rp.id, rp.uuid, rp.generation, r.host, r.nodename,
                 optional(r.cell_uuid), optional(r.availability_zone),
                 sa.case((r.disabled, 1), else_=0), r.report_sequence,
                 r.num_instances, r.num_io_ops, r.received_at,
                 optional(r.agent_updated_at), r.details,
                 optional(r.instance_uuids)]
        source = RP.join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        return self._texts(RP.c.id, parts, source)

    def child_rows(self):
        """Every provider that is not a tree's root."""
        return self.conn.execute(
            sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                      RP.c.root_provider_id, RP.c.parent_provider_id)
            .where(RP.c.root_provider_id != RP.c.id)
            .order_by(RP.c.id)).all()

    def inventory_texts(self):
        """Per inventory row (in ranges of row ids: the rows of a range of
        providers are not contiguous) its provider id and one item text
        (the class and the inventory fields)."""
        if self.dialect == "sqlite":
            # its float to text conversions do not read back exactly
            return [[token for row in self.conn.execute(sa.select(
                INV.c.resource_provider_id, INV.c.resource_class,
                *(INV.c[k] for k in _INVENTORY_FIELDS)))
                for token in (str(row[0]), _SEP_ITEM.join(
                    [row[1]] + [str(v) for v in row[2:-1]]
                    + [repr(float(row[-1]))]))]]
        item = self.joined(_SEP_ITEM, [INV.c.resource_class] + [
            INV.c[k] for k in _INVENTORY_FIELDS])
        return self._texts(INV.c.id, [INV.c.resource_provider_id, item],
                           INV, batch=_ROW_BATCH)

    def member_texts(self, table, column):
        """Per row its provider id and its ``column`` (an aggregate)."""
        rp = table.c.resource_provider_id
        return self._texts(rp, [rp, column], table)

    def joined_texts(self, table, column):
        """Per provider its id and its values of ``column`` (traits)
        joined with _SEP_LIST by the database: more work for it, least
        for this process, which parses each distinct set once (1.4
        million traits, 34k distinct sets at 100k hosts)."""
        rp = table.c.resource_provider_id
        values = sa.func.aggregate_strings(column, _SEP_LIST)
        per_provider = (sa.select(rp.label("rp"), values.label("values"))
                        .where(_in_range(rp)).group_by(rp).subquery())
        return self._texts(rp, [per_provider.c.rp,
                                per_provider.c["values"]],
                           per_provider, ranged=True)

    def usage_texts(self):
        """Per allocation its provider id, class and amount."""
        parts = [ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                 ALLOC.c.used]
        return self._texts(ALLOC.c.id, parts, ALLOC, batch=_ROW_BATCH)


def _ints(texts):
    """int64 array of decimal texts."""
    if not texts:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(" ".join(texts), dtype=np.int64, sep=" ")


def _coded(texts):
    """``(codes, distinct)``: per text the index of its first equal one in
    ``distinct``."""
    seen = {}
    codes = [seen.setdefault(t, len(seen)) for t in texts]
    return np.array(codes, dtype=np.int64), list(seen)


def _host_columns(tokens):
    """The host records' fields (``_HOST_FIELDS`` after each other) as
    columns in id order: int64 arrays, lists of strings (None for an
    optional field not set)."""
    stride = len(_HOST_FIELDS)
    out = {name: tokens[k::stride] for k, name in enumerate(_HOST_FIELDS)}
    ids = _ints(out["ids"])
    if len(ids) and not np.all(ids[1:] > ids[:-1]):
        order = np.argsort(ids, kind="stable").tolist()
        out = {name: [values[k] for k in order]
               for name, values in out.items()}
    for name in _INT_FIELDS:
        out[name] = _ints(out[name])
    for name in _OPTIONAL:
        out[name] = [None if v == "" else v[1:] for v in out[name]]
    out["disabled"] = out["disabled"].astype(bool)
    out["detail_codes"], out["detail_texts"] = _coded(out.pop("details"))
    texts = out["received_texts"] = out.pop("received_at")
    out["received_at"] = (np.array(texts, dtype="datetime64[us]")
                          .astype(np.int64) / 1e6) if texts else np.zeros(0)
    parse = datetime.datetime.fromisoformat
    out["agent_updated_at"] = [None if t is None else parse(t)
                               for t in out["agent_updated_at"]]
    return out


def _sets(tokens):
    """``(provider ids, codes, distinct frozensets)`` of (provider id,
    value) pairs: per provider (ids ascending) the code of its set of
    values in the distinct sets, of which code 0 is the empty one."""
    ids, values = _ints(tokens[0::2]), tokens[1::2]
    names = list(dict.fromkeys(values))
    lookup = {name: k for k, name in enumerate(names)}
    codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64,
                        count=len(values))
    if len(ids) and not np.all(ids[1:] >= ids[:-1]):
        order = np.argsort(ids, kind="stable")
        ids, codes = ids[order], codes[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(
        ids) else np.zeros(0, dtype=np.int64)
    if len(names) <= _MASK_BITS:
        groups, distinct = _sets_by_mask(codes, starts, len(names))
    else:
        groups, distinct = _sets_by_tuple(codes, starts)
    sets = [frozenset()] + [frozenset(map(names.__getitem__, members))
                            for members in distinct]
    return ids[starts], groups + 1, sets


#: up to this many distinct values, a provider's set is found as a bit mask
_MASK_BITS = 128


def _sets_by_mask(codes, starts, count):
    """Per group of ``codes`` (a group from each of ``starts``) the index
    of its set among the distinct sets, and each distinct set's codes;
    found with one bit mask per group (``count`` codes at most)."""
    words = max(1, -(-count // 64))
    masks = np.zeros((len(starts), words), dtype=np.uint64)
    bits = np.left_shift(np.uint64(1), (codes & 63).astype(np.uint64))
    if len(starts):
        for word in range(words):
            if words > 1:
                word_bits = np.where(codes >> 6 == word, bits, np.uint64(0))
            else:
                word_bits = bits
            masks[:, word] = np.bitwise_or.reduceat(word_bits, starts)
    if words == 1:      # the usual case, and much quicker than axis=0
        distinct, inverse = np.unique(masks[:, 0], return_inverse=True)
        distinct = distinct.reshape(-1, 1)
    else:
        distinct, inverse = np.unique(masks, axis=0, return_inverse=True)
    flags = np.unpackbits(distinct.astype("<u8").view(np.uint8).reshape(
        len(distinct), 8 * words), axis=1, bitorder="little")
    rows, cols = np.nonzero(flags)
    bounds = np.searchsorted(rows, np.arange(len(distinct) + 1)).tolist()
    cols = cols.tolist()
    return inverse.reshape(-1), [cols[bounds[k]:bounds[k + 1]]
                                 for k in range(len(distinct))]


def _sets_by_tuple(codes, starts):
    """:func:`_sets_by_mask` for many distinct codes: a sorted tuple per
    group."""
    codes = codes.tolist()
    bounds = starts.tolist() + [len(codes)]
    seen = {}
    groups = [seen.setdefault(tuple(sorted(codes[lo:hi])), len(seen))
              for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return np.array(groups, dtype=np.int64), list(seen)


def _joined_sets(tokens):
    """:func:`_sets` of (provider id, its values joined with _SEP_LIST)
    pairs; each distinct text is split once."""
    seen = {}
    ids = _ints(tokens[0::2])
    codes = np.fromiter((seen.setdefault(t, len(seen) + 1)
                         for t in tokens[1::2]), dtype=np.int64,
                        count=len(ids))
    if len(ids) and not np.all(ids[1:] > ids[:-1]):
        order = np.argsort(ids, kind="stable")
        ids, codes = ids[order], codes[order]
    sets = [frozenset()] + [frozenset(text.split(_SEP_LIST))
                            for text in seen]
    return ids, codes, sets


def _inventory_dict(items):
    """``{class: (total, reserved, min, max, step, ratio)}`` from item
    texts, sorted by class."""
    out = {}
    for item in sorted(items):
        rc, total, reserved, low, high, step, ratio = item.split(_SEP_ITEM)
        out[rc] = (int(total), int(reserved), int(low), int(high),
                   int(step), float(ratio))
    return out


def _usage(tokens):
    """``(provider ids, class codes, amounts, classes)``: the usage summed
    per provider and class, sorted by both."""
    names = {}
    codes = np.array([names.setdefault(rc, len(names))
                      for rc in tokens[1::3]], dtype=np.int64)
    rp_ids, amounts = _ints(tokens[0::3]), _ints(tokens[2::3])
    if len(rp_ids):
        order = np.lexsort((codes, rp_ids))
        rp_ids, codes, amounts = rp_ids[order], codes[order], amounts[order]
        starts = np.flatnonzero(np.r_[True, (rp_ids[1:] != rp_ids[:-1])
                                      | (codes[1:] != codes[:-1])])
        rp_ids, codes = rp_ids[starts], codes[starts]
        amounts = np.add.reduceat(amounts, starts)
    return rp_ids, codes, amounts, list(names)


def _per_host(ids, content):
    """Per host (ids, ascending) the code of its content: ``content`` is
    ``(provider ids, codes, distinct)``; 0 for a host without any."""
    rp_ids, codes, _distinct = content
    out = np.zeros(len(ids), dtype=np.int64)
    if len(ids) and len(rp_ids):
        pos = np.minimum(np.searchsorted(ids, rp_ids), len(ids) - 1)
        mine = ids[pos] == rp_ids
        out[pos[mine]] = codes[mine]
    return out


def _of_provider(content):
    """``{provider id: content}`` of ``(provider ids, codes, distinct)``."""
    rp_ids, codes, distinct = content
    return {rp_id: distinct[code] for rp_id, code in zip(
        rp_ids.tolist(), codes.tolist(), strict=True)}


def _assemble(columns, children, inventories, traits, aggregates, usage):
    """StoredHosts from what the queries read."""
    children, child_ids = children
    ids = columns["ids"]
    if child_ids:
        _fill_children(child_ids, inventories, traits, aggregates, usage)
    rp_ids, codes, amounts, classes = usage
    pos = np.searchsorted(ids, rp_ids)
    mine = (ids[np.minimum(pos, len(ids) - 1)] == rp_ids if len(ids)
            else np.zeros(len(rp_ids), dtype=bool))
    return StoredHosts(
        inventory_codes=_per_host(ids, inventories),
        inventory_sets=inventories[2],
        trait_codes=_per_host(ids, traits), trait_sets=traits[2],
        aggregate_codes=_per_host(ids, aggregates),
        aggregate_sets=aggregates[2],
        usage_rows=pos[mine], usage_codes=codes[mine],
        usage_amounts=amounts[mine], usage_classes=classes,
        children=children, **columns)


def _fill_children(child_ids, inventories, traits, aggregates, usage):
    """Inventories, traits, aggregates and usage of the children."""
    inventories = _of_provider(inventories)
    traits, aggregates = _of_provider(traits), _of_provider(aggregates)
    for rp_id, child in child_ids.items():
        child.inventories = dict(inventories.get(rp_id, {}))
        child.traits = set(traits.get(rp_id, ()))
        child.aggregates = set(aggregates.get(rp_id, ()))
    rp_ids, codes, amounts, classes = usage
    for k in np.flatnonzero(np.isin(rp_ids, list(child_ids))).tolist():
        child_ids[int(rp_ids[k])].usage[classes[codes[k]]] = int(
            amounts[k])


def _children(rows, ids, uuids):
    """The children (``rows``) of the hosts ``ids``, parents first, as
    ``({host index: [StoredProvider]}, {child id: StoredProvider})``."""
    index = {rp_id: i for i, rp_id in enumerate(ids.tolist())}
    kids_of = collections.defaultdict(list)      # parent id -> child rows
    roots = set()
    for row in rows:
        if row.root_provider_id in index:
            kids_of[row.parent_provider_id].append(row)
            roots.add(row.root_provider_id)
    children, loaded = {}, {}
    for root_id in sorted(roots):
        i = index[root_id]
        known = {root_id: uuids[i]}
        kids = children[i] = []
        queue = collections.deque([root_id])
        while queue:
            for row in kids_of.pop(queue.popleft(), ()):
                child = StoredProvider(
                    uuid=row.uuid, name=row.name,
                    parent_uuid=known[row.parent_provider_id],
                    generation=row.generation)
                kids.append(child)
                known[row.id] = row.uuid
                loaded[row.id] = child
                queue.append(row.id)
    return children, loaded


def _load_contents(conn, targets, only):
    """Fill inventories, traits, aggregates and usage of ``targets``
    (``{rp_id: StoredHost or StoredProvider}``), one query each; ``only``
    (a subquery of provider ids, or None for all) narrows the rows read."""
    def select(table, *columns):
        query = sa.select(*columns) if columns else sa.select(table)
        if only is not None:
            query = query.where(table.c.resource_provider_id.in_(only))
        return query

    for rp_id, rc, *inventory in conn.execute(select(
            INV, INV.c.resource_provider_id, INV.c.resource_class,
            *(INV.c[k] for k in _INVENTORY_FIELDS))):
        target = targets.get(rp_id)
        if target is not None:
            target.inventories[rc] = tuple(inventory)
    for table, attr in ((TRAITS, "traits"), (AGGS, "aggregates")):
        for rp_id, value in conn.execute(select(table)):
            if rp_id in targets:
                getattr(targets[rp_id], attr).add(value)
    for rp_id, rc, used in conn.execute(
            select(ALLOC, ALLOC.c.resource_provider_id,
                   ALLOC.c.resource_class, sa.func.sum(ALLOC.c.used))
            .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class)):
        if rp_id in targets:
            targets[rp_id].usage[rc] = int(used)


def load_standalone_providers(db):
    """Every standalone provider, as :class:`StoredProvider` with its
    ``report_sequence`` and ``boot_id``."""
    standalone = {}
    with db.begin() as conn:
        for row in conn.execute(
                sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                          PROVIDER_REPORTS.c.report_sequence,
                          PROVIDER_REPORTS.c.boot_id)
                .join(PROVIDER_REPORTS,
                      PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
                .order_by(RP.c.id)):
            standalone[row.id] = StoredProvider(
                uuid=row.uuid, name=row.name, parent_uuid=None,
                generation=row.generation,
                report_sequence=row.report_sequence, boot_id=row.boot_id)
        if standalone:
            _load_contents(conn, standalone, sa.select(
                PROVIDER_REPORTS.c.resource_provider_id))
    return list(standalone.values())


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
