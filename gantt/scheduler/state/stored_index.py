"""Every stored provider, read from the database, as a
:class:`gantt.scheduler.state.provider_tree.ProviderIndex`, the structure
the allocation-candidates solver reads (the workers build theirs from
reports; the REST API keeps one, :mod:`gantt.api.index_cache`).

:func:`load` reads everything in five statements, whatever the number of
providers, and lists the trees in provider id order (the order of
creation, and the order of the REST API's candidates). :func:`reload`
replaces some providers in an index already loaded (those whose
generation moved: :func:`generation_sums` finds their buckets of ids,
:func:`generations` reads those buckets): the same five statements
restricted to them.
"""

import collections
import dataclasses

import sqlalchemy as sa

from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import RP
from gantt.db.models import TRAITS
from gantt.scheduler.state import provider_tree

#: providers per bucket of ids (:func:`generation_sums`)
BUCKET = 128


@dataclasses.dataclass(frozen=True)
class Loaded:
    index: provider_tree.ProviderIndex
    uuids: dict             # provider id -> uuid
    generations: dict       # provider id -> generation
    sums: dict              # bucket -> (count, sum of generations)


def load(conn):
    """Every provider, as a :class:`Loaded`."""
    rows = conn.execute(_providers().order_by(RP.c.id)).all()
    uuids = {r.id: r.uuid for r in rows}
    details = _Details(conn)
    by_root = collections.defaultdict(list)
    for r in rows:
        p = details.provider(r, uuids)
        by_root[p.root_uuid].append(p)
    index = provider_tree.ProviderIndex()
    for root, providers in by_root.items():
        index.set_tree(root, _parents_first(root, providers))
    generations = {r.id: r.generation for r in rows}
    return Loaded(index, uuids, generations, bucket_sums(generations))


def bucket_sums(generations):
    """:func:`generation_sums` of ``{provider id: generation}``."""
    sums = collections.defaultdict(lambda: (0, 0))
    for rp_id, generation in generations.items():
        count, total = sums[rp_id // BUCKET]
        sums[rp_id // BUCKET] = (count + 1, total + generation)
    return dict(sums)


def generation_sums(conn):
    """``{bucket: (count, sum of generations)}`` of the providers, by
    bucket of :data:`BUCKET` ids: the buckets whose sum moved hold the
    providers a write touched (generations only grow), a few rows to
    read instead of one per provider."""
    bucket = (RP.c.id // BUCKET).label("bucket")
    return {int(b): (int(count), int(total)) for b, count, total in
            conn.execute(sa.select(bucket, sa.func.count(),
                                   sa.func.sum(RP.c.generation))
                         .group_by(bucket))}


def generations(conn, buckets):
    """``{provider id: generation}`` of the providers in ``buckets``."""
    ranges = [RP.c.id.between(b * BUCKET, b * BUCKET + BUCKET - 1)
              for b in buckets]
    return dict(conn.execute(sa.select(RP.c.id, RP.c.generation)
                             .where(sa.or_(*ranges))).all())


def reload(conn, loaded, ids):
    """Replace the providers ``ids`` of ``loaded.index`` (in place) by
    the database's, each staying where it is in its tree.

    :returns: the uuids replaced, or None (nothing changed) when one of
        them is not in the index any more or changed trees (the caller
        loads everything)
    """
    rows = conn.execute(_providers().where(RP.c.id.in_(ids))).all()
    if len(rows) != len(ids) or any(
            (r.root_provider_id or r.id) not in loaded.uuids for r in rows):
        return None
    details = _Details(conn, ids)
    fresh = [details.provider(r, loaded.uuids) for r in rows]
    for p in fresh:
        held = loaded.index.get(p.uuid)
        if (held is None or held.root_uuid != p.root_uuid
                or held.parent_uuid != p.parent_uuid):
            return None
    by_root = collections.defaultdict(dict)
    for p in fresh:
        by_root[p.root_uuid][p.uuid] = p
    for root, replaced in by_root.items():
        loaded.index.set_tree(root, [replaced.get(p.uuid, p)
                                     for p in loaded.index.tree(root)])
    return [p.uuid for p in fresh]


def _providers():
    return sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                     RP.c.parent_provider_id, RP.c.root_provider_id)


class _Details:
    """Inventories, usage, traits and aggregates of every provider (or
    of the providers ``ids``)."""

    def __init__(self, conn, ids=None):
        self.inventories = _inventories(conn, ids)
        self.usage = _usage(conn, ids)
        self.traits = _sets(conn, TRAITS.c.trait, ids)
        self.aggregates = _sets(conn, AGGS.c.aggregate_uuid, ids)

    def provider(self, row, uuids):
        root_id = row.root_provider_id or row.id
        return provider_tree.Provider(
            uuid=row.uuid, name=row.name,
            parent_uuid=uuids.get(row.parent_provider_id),
            root_uuid=uuids[root_id], generation=row.generation,
            inventories=self.inventories.get(row.id, {}),
            usage=self.usage.get(row.id, {}),
            traits=self.traits.get(row.id, ()),
            aggregates=self.aggregates.get(row.id, ()))


def _parents_first(root, providers):
    children = collections.defaultdict(list)
    by_uuid = {}
    for p in providers:
        by_uuid[p.uuid] = p
        children[p.parent_uuid].append(p)
    ordered, todo = [], [by_uuid[root]]
    while todo:
        p = todo.pop(0)
        ordered.append(p)
        todo.extend(sorted(children[p.uuid], key=lambda c: c.uuid))
    return ordered


def _among(query, column, ids):
    return query if ids is None else query.where(column.in_(ids))


def _inventories(conn, ids):
    found = collections.defaultdict(dict)
    for r in conn.execute(_among(sa.select(INV),
                                 INV.c.resource_provider_id, ids)):
        found[r.resource_provider_id][r.resource_class] = (
            r.total, r.reserved, r.min_unit, r.max_unit, r.step_size,
            r.allocation_ratio)
    return found


def _usage(conn, ids):
    found = collections.defaultdict(dict)
    query = _among(sa.select(ALLOC.c.resource_provider_id,
                             ALLOC.c.resource_class,
                             sa.func.sum(ALLOC.c.used)),
                   ALLOC.c.resource_provider_id, ids)
    for rp_id, rc, used in conn.execute(query.group_by(
            ALLOC.c.resource_provider_id, ALLOC.c.resource_class)):
        found[rp_id][rc] = int(used)
    return found


def _sets(conn, column, ids):
    found = collections.defaultdict(set)
    rp_id = column.table.c.resource_provider_id
    for provider, value in conn.execute(_among(sa.select(rp_id, column),
                                               rp_id, ids)):
        found[provider].add(value)
    return found
