"""Building Placement's test worlds in Gantt's database.

The helpers Placement's fixtures use (``create_provider``,
``add_inventory``, ``set_traits``, ``set_allocation`` of
``placement/tests/functional/db/test_base.py``), with the same defaults
and the same effect on generations, written on Gantt's tables through
Gantt's own DB layer: providers through
:func:`gantt.db.tree_writer.insert_provider`, their contents through
:func:`gantt.db.tree_writer.insert_contents`, custom classes and traits
defined in :mod:`gantt.db.names` (as Placement's helpers define them), and
allocations through :func:`gantt.db.consumers.write`, the claim a ``PUT
/allocations`` makes, so that a fixture's usage and consumer generations
are exactly what the API would have written.

A :class:`World` holds one transaction's connection; each fixture builds
its world in one transaction (``with World.open(db) as world: ...``).
"""

import contextlib
import dataclasses

from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel
import sqlalchemy as sa

from gantt.db import consumers
from gantt.db import names
from gantt.db import tree_writer
from gantt.db.models import AGGS
from gantt.db.models import RP
from gantt.db.models import TRAITS


@dataclasses.dataclass(frozen=True)
class Provider:
    """A provider the world made: what the fixtures pass around."""

    uuid: str
    name: str
    id: int


@dataclasses.dataclass(frozen=True)
class InventoryRecord:
    """One inventory, as ``tree_writer.inventory_row`` reads it."""

    resource_class: str
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 0
    step_size: int = 1
    allocation_ratio: float = 1.0


@dataclasses.dataclass(frozen=True)
class Contents:
    """A new provider's contents, as ``tree_writer.insert_contents``
    reads them."""

    inventories: tuple = ()
    traits: tuple = ()
    aggregates: tuple = ()


class World:
    """Placement's fixture helpers on one open transaction."""

    def __init__(self, conn):
        self.conn = conn
        self.now = timeutils.utcnow()

    @classmethod
    @contextlib.contextmanager
    def open(cls, db):
        with db.begin() as conn:
            yield cls(conn)

    def create_provider(self, name, *aggs, uuid=None, parent=None):
        """A provider named ``name`` (uuid: the sentinel of that name, as
        Placement's helper), under ``parent`` (a uuid) if given, in the
        aggregates ``aggs``; generation 0, as Placement creates it."""
        uuid = uuid or getattr(uuidsentinel, name)
        rp_id = tree_writer.insert_provider(
            self.conn, uuid, name, self._parentage(parent), self.now)
        if aggs:
            tree_writer.insert_contents(
                self.conn, [(rp_id, Contents(aggregates=tuple(aggs)))])
        return Provider(uuid=uuid, name=name, id=rp_id)

    def _parentage(self, parent_uuid):
        if parent_uuid is None:
            return None
        row = self.conn.execute(
            sa.select(RP.c.id, RP.c.root_provider_id)
            .where(RP.c.uuid == parent_uuid)).one()
        return row.root_provider_id, row.id

    def set_aggregates(self, rp, aggs):
        """Replace the provider's aggregates; no generation bump (the
        default of Placement's ``set_aggregates``)."""
        self.conn.execute(
            AGGS.delete().where(AGGS.c.resource_provider_id == rp.id))
        tree_writer.insert_contents(
            self.conn, [(rp.id, Contents(aggregates=tuple(aggs)))])

    def add_inventory(self, rp, resource_class, total, **fields):
        """One more inventory; ``max_unit`` defaults to ``total`` as in
        Placement's helper; bumps the generation once."""
        fields.setdefault("max_unit", total)
        _define(self.conn, names.CLASSES, [resource_class])
        inv = InventoryRecord(resource_class, total, **fields)
        tree_writer.insert_contents(
            self.conn, [(rp.id, Contents(inventories=(inv,)))])
        self._bump(rp)

    def set_traits(self, rp, *traits):
        """Replace the provider's traits (custom ones defined first);
        bumps the generation once."""
        _define(self.conn, names.TRAIT_NAMES, traits)
        self.conn.execute(
            TRAITS.delete().where(TRAITS.c.resource_provider_id == rp.id))
        tree_writer.insert_contents(
            self.conn, [(rp.id, Contents(traits=tuple(traits)))])
        self._bump(rp)

    def set_allocation(self, rp, consumer, amounts):
        """Replace ``consumer``'s allocations with ``amounts`` of ``rp``:
        the REST API's write (Gantt's claim), which bumps the provider's
        generation and the consumer's."""
        write = consumers.Write(
            consumer.uuid, {rp.uuid: dict(amounts)},
            project_id=consumer.project_id, user_id=consumer.user_id)
        consumers.write(self.conn, [write], {
            consumer.uuid: consumers.stored(self.conn, consumer.uuid)})

    def _bump(self, rp):
        self.conn.execute(RP.update().where(RP.c.id == rp.id).values(
            generation=RP.c.generation + 1))


def _define(conn, vocabulary, wanted):
    """Define the custom names among ``wanted`` not defined yet."""
    for name in wanted:
        if name.startswith("CUSTOM_"):
            vocabulary.create(conn, name)


@dataclasses.dataclass(frozen=True)
class Consumer:
    """A consumer of the world (stored by its first allocation)."""

    uuid: str
    project_id: str
    user_id: str
