"""Bringing one provider tree's stored rows to a report's state.

:mod:`gantt.db.reports` decides whether a report is stored (the sequence
guard) and then hands the tree to a :class:`TreeWriter`: it locks the
tree's provider rows, upserts each reported provider, removes those the
report no longer names (not those holding allocations), and replaces
inventories, traits and aggregates set-wise, bumping the generation of
every provider that changed. A class whose new capacity would be below its
usage keeps its stored inventory unless forced (see
:func:`_replace_inventories`); what was refused comes back in the
:class:`SaveResult`.
"""

import collections
import dataclasses

import sqlalchemy as sa

from gantt import exception
from gantt.db import host_load
from gantt.db.models import AGGS
from gantt.db.models import INV
from gantt.db.models import INVENTORY_FIELDS
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS

#: the reason given for a provider that left its report but stays
HAS_ALLOCATIONS = "provider has allocations"


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


def inventory_row(inv):
    """An inventory object as an ``inventories`` row (no provider)."""
    return {"resource_class": inv.resource_class, "total": inv.total,
            "reserved": inv.reserved, "min_unit": inv.min_unit,
            "max_unit": inv.max_unit, "step_size": inv.step_size,
            "allocation_ratio": inv.allocation_ratio}


def inventory_tuple(row):
    """An inventory as a tuple, from a table row or an _inventory_row."""
    if isinstance(row, dict):
        return tuple(row[k] for k in INVENTORY_FIELDS)
    return (row.total, row.reserved, row.min_unit, row.max_unit,
            row.step_size, row.allocation_ratio)


def role(row):
    """What kind of provider a ``lookup`` row is, in words."""
    if row.root_provider_id != row.id:
        return "a child in another provider tree"
    if row.host_report is not None:
        return "a compute node"
    return "a standalone provider"


def insert_provider(conn, uuid, name, parentage, received_at):
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


def insert_contents(conn, entries):
    """Inventories, traits and aggregates of new providers, set-wise."""
    inventories = [dict(inventory_row(inv), resource_provider_id=rp_id)
                   for rp_id, p in entries for inv in p.inventories]
    traits = [{"resource_provider_id": rp_id, "trait": t}
              for rp_id, p in entries for t in sorted(set(p.traits))]
    aggs = [{"resource_provider_id": rp_id, "aggregate_uuid": a}
            for rp_id, p in entries for a in sorted(set(p.aggregates))]
    for table, rows in ((INV, inventories), (TRAITS, traits),
                        (AGGS, aggs)):
        if rows:
            conn.execute(table.insert(), rows)


class TreeWriter:
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
            raise exception.InvalidRequest(
                reason="resource provider %s is already %s" % (
                    row.uuid, role(row)))

    def upsert(self, provider, parent_uuid, name):
        row = self.rows.get(provider.uuid)
        parent_id = None if parent_uuid is None else self.ids[parent_uuid]
        if row is None:
            rp_id = insert_provider(self.conn, provider.uuid, name,
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
        usage = host_load.provider_usage(self.conn, gone)
        holders = {rp for rp, used in usage.items() if used}
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
        insert_contents(self.conn, [
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
                r.resource_class] = inventory_tuple(r)
    return stored


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
        wanted = {inv.resource_class: inventory_row(inv)
                  for inv in provider.inventories}
        have = current[rp_id]
        touched = {rc for rc in set(wanted) | set(have)
                   if rc not in have or rc not in wanted
                   or inventory_tuple(have[rc]) != inventory_tuple(
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
    usage = host_load.provider_usage(conn, checked) if checked else {}
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
