"""Resource providers as Placement's REST API reads and writes them.

Every change of a provider's inventories, traits or aggregates compares
and swaps the provider's ``generation`` (the one claims compare, see
:mod:`gantt.db.allocations`), so that a REST write and a claim racing on
one provider meet on its row: one of them fails with ``ProviderConflict``
and changes nothing.

The filters of ``GET /resource_providers`` are one SQL condition
(:mod:`gantt.db.provider_filter`): the listing is one statement.
"""

import collections
import dataclasses
import datetime

import os_resource_classes
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt import exception
from gantt.db import provider_filter
from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS

Filters = provider_filter.Filters

_PARENT = RP.alias("parent")
_ROOT = RP.alias("root")


@dataclasses.dataclass(frozen=True)
class Row:
    """One provider as the API shows it."""

    id: int
    uuid: str
    name: str
    generation: int
    parent_uuid: str | None
    root_uuid: str
    root_id: int
    created_at: datetime.datetime
    updated_at: datetime.datetime | None


class Conflict(exception.GanttException):
    msg_fmt = "resource provider %(uuid)s changed: generation %(seen)s"


def _select():
    return (sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                      _PARENT.c.uuid.label("parent_uuid"),
                      _ROOT.c.uuid.label("root_uuid"),
                      RP.c.root_provider_id, RP.c.created_at,
                      RP.c.updated_at)
            .select_from(RP.outerjoin(_PARENT, _PARENT.c.id ==
                                      RP.c.parent_provider_id)
                         .outerjoin(_ROOT, _ROOT.c.id ==
                                    RP.c.root_provider_id)))


def _row(r):
    return Row(r.id, r.uuid, r.name, r.generation, r.parent_uuid,
               r.root_uuid or r.uuid, r.root_provider_id or r.id,
               r.created_at, r.updated_at)


def get(conn, uuid):
    """The provider ``uuid`` as a :class:`Row`, or None."""
    r = conn.execute(_select().where(RP.c.uuid == uuid)).first()
    return None if r is None else _row(r)


def by_name(conn, name):
    r = conn.execute(_select().where(RP.c.name == name)).first()
    return None if r is None else _row(r)


def find(conn, filters):
    """The providers that pass every filter (a :class:`Filters`), by id,
    in one statement (:mod:`gantt.db.provider_filter`)."""
    return [_row(r) for r in conn.execute(_select().where(
        provider_filter.where(filters, conn.dialect.name))
        .order_by(RP.c.id))]


def create(conn, uuid, name, parent=None):
    """Insert a provider (a root, or a child of the :class:`Row`
    ``parent``) at generation 0."""
    now = timeutils.utcnow()
    rp_id = conn.execute(RP.insert().values(
        uuid=uuid, name=name, generation=0,
        root_provider_id=parent.root_id if parent else None,
        parent_provider_id=parent.id if parent else None,
        created_at=now)).inserted_primary_key[0]
    if parent is None:
        conn.execute(RP.update().where(RP.c.id == rp_id).values(
            root_provider_id=rp_id))
    return get(conn, uuid)


def update(conn, row, name, parent):
    """Rename ``row`` and put it under ``parent`` (a Row, or None for a
    root); the whole subtree moves with it."""
    root_id = parent.root_id if parent is not None else row.id
    conn.execute(RP.update().where(RP.c.id == row.id).values(
        name=name, parent_provider_id=parent.id if parent else None,
        updated_at=timeutils.utcnow()))
    if root_id != row.root_id:
        ids = subtree_ids(conn, row.id)
        conn.execute(RP.update().where(RP.c.id.in_(ids)).values(
            root_provider_id=root_id))
    return get(conn, row.uuid)


def subtree_ids(conn, rp_id):
    """``rp_id`` and every provider below it."""
    children = collections.defaultdict(list)
    root = conn.execute(sa.select(RP.c.root_provider_id).where(
        RP.c.id == rp_id)).scalar_one()
    for child, parent in conn.execute(
            sa.select(RP.c.id, RP.c.parent_provider_id).where(
                RP.c.root_provider_id == root)):
        children[parent].append(child)
    found, todo = [], [rp_id]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children[current])
    return found


def has_children(conn, rp_id):
    return conn.execute(sa.select(RP.c.id).where(
        RP.c.parent_provider_id == rp_id).limit(1)).first() is not None


def has_allocations(conn, rp_id):
    return conn.execute(sa.select(ALLOC.c.id).where(
        ALLOC.c.resource_provider_id == rp_id).limit(1)).first() is not None


def delete(conn, row):
    # (the host row too: SQLite enforces no cascade)
    for table in (INV, TRAITS, AGGS, REPORTS):
        conn.execute(table.delete().where(
            table.c.resource_provider_id == row.id))
    conn.execute(RP.delete().where(RP.c.id == row.id))


def bump(conn, row, seen=None):
    """Compare-and-swap ``row``'s generation from ``seen`` (the row's own
    when None); :class:`Conflict` if another write moved it.

    :returns: the new generation
    """
    seen = row.generation if seen is None else seen
    done = conn.execute(RP.update().where(RP.c.id == row.id).where(
        RP.c.generation == seen).values(
        generation=seen + 1, updated_at=timeutils.utcnow())).rowcount
    if done != 1:
        raise Conflict(uuid=row.uuid, seen=seen)
    return seen + 1


# -- contents -------------------------------------------------------------

def inventories_of(conn, rp_id):
    """``{class: inventory row}``."""
    return {r.resource_class: r for r in conn.execute(
        sa.select(INV).where(INV.c.resource_provider_id == rp_id)
        .order_by(INV.c.resource_class))}


def usages_of(conn, rp_id):
    """``{class: amount allocated}``."""
    return {rc: int(used) for rc, used in conn.execute(
        sa.select(ALLOC.c.resource_class, sa.func.sum(ALLOC.c.used))
        .where(ALLOC.c.resource_provider_id == rp_id)
        .group_by(ALLOC.c.resource_class))}


def traits_of(conn, rp_id):
    return frozenset(conn.execute(sa.select(TRAITS.c.trait).where(
        TRAITS.c.resource_provider_id == rp_id)).scalars())


def aggregates_of(conn, rp_id):
    return frozenset(conn.execute(sa.select(AGGS.c.aggregate_uuid).where(
        AGGS.c.resource_provider_id == rp_id)).scalars())


def replace_set(conn, row, table, column, wanted):
    """Make ``row``'s traits or aggregates exactly ``wanted``."""
    have = set(conn.execute(sa.select(table.c[column]).where(
        table.c.resource_provider_id == row.id)).scalars())
    gone, new = have - set(wanted), set(wanted) - have
    if gone:
        conn.execute(table.delete().where(
            table.c.resource_provider_id == row.id).where(
            table.c[column].in_(sorted(gone))))
    if new:
        conn.execute(table.insert(), [
            {"resource_provider_id": row.id, column: v}
            for v in sorted(new)])


def set_traits(conn, row, traits, seen):
    bump(conn, row, seen)
    replace_set(conn, row, TRAITS, "trait", traits)


def set_aggregates(conn, row, aggregates, seen=None, generation=True):
    """Replace ``row``'s aggregates; the generation moves only when
    ``generation`` (microversion 1.19 on)."""
    if generation:
        bump(conn, row, seen)
    replace_set(conn, row, AGGS, "aggregate_uuid", aggregates)


#: what an inventory field left out is (Placement's defaults)
MAX_INT = 0x7FFFFFFF
INVENTORY_DEFAULTS = {"reserved": 0, "min_unit": 1, "max_unit": MAX_INT,
                      "step_size": 1, "allocation_ratio": 1.0}


def write_inventories(conn, row, wanted, seen, replace):
    """Set inventories (``{class: fields}``); with ``replace``, remove
    the classes not in ``wanted``.

    :raises: Conflict; InventoryInUse when a class to remove holds
        allocations; CapacityBelowUsage (never raised: Placement allows
        shrinking below usage, which then shows as overcommitted)
    """
    bump(conn, row, seen)
    have = inventories_of(conn, row.id)
    if replace:
        gone = sorted(set(have) - set(wanted))
        if gone:
            _refuse_in_use(conn, row, gone)
            conn.execute(INV.delete().where(
                INV.c.resource_provider_id == row.id).where(
                INV.c.resource_class.in_(gone)))
    for rc, fields in wanted.items():
        values = dict(INVENTORY_DEFAULTS, **fields)
        if rc in have:
            conn.execute(INV.update().where(INV.c.id == have[rc].id)
                         .values(**values))
        else:
            conn.execute(INV.insert().values(
                resource_provider_id=row.id, resource_class=rc, **values))


class InventoryInUse(exception.GanttException):
    msg_fmt = ("Inventory for '%(classes)s' on resource provider "
               "'%(uuid)s' in use.")


def _refuse_in_use(conn, row, classes):
    used = sorted(set(conn.execute(
        sa.select(ALLOC.c.resource_class).distinct()
        .where(ALLOC.c.resource_provider_id == row.id)
        .where(ALLOC.c.resource_class.in_(classes))).scalars()),
        key=_class_order)
    if used:
        raise InventoryInUse(classes=", ".join(used), uuid=row.uuid)


def _class_order(rc):
    """Placement's order of classes: the standard ones as
    os-resource-classes lists them, then custom ones by name."""
    standard = os_resource_classes.STANDARDS
    return (standard.index(rc), "") if rc in standard else (
        len(standard), rc)


def delete_inventory(conn, row, rc, seen=None):
    """Remove one class's inventory; False if there was none."""
    _refuse_in_use(conn, row, [rc])
    bump(conn, row, seen)
    return conn.execute(INV.delete().where(
        INV.c.resource_provider_id == row.id).where(
        INV.c.resource_class == rc)).rowcount > 0


def generations(conn, uuids):
    """``{uuid: generation}`` of the stored providers among ``uuids``."""
    if not uuids:
        return {}
    return dict(conn.execute(sa.select(RP.c.uuid, RP.c.generation).where(
        RP.c.uuid.in_(sorted(uuids)))).all())


def settle_generations(conn, before):
    """One write, one generation: give every provider of ``before``
    (``{uuid: generation read at the start of this transaction}``) that
    moved by more than one step ``generation + 1``, as Placement numbers
    a write. Safe inside the transaction: the steps between were never
    committed, and whoever read ``before`` still fails its compare.

    :returns: ``{uuid: final generation}`` of the providers that moved
    """
    now = generations(conn, before)
    final = {}
    for uuid, start in before.items():
        if uuid in now and now[uuid] != start:
            final[uuid] = start + 1
            if now[uuid] != start + 1:
                conn.execute(RP.update().where(RP.c.uuid == uuid).values(
                    generation=start + 1))
    return final
