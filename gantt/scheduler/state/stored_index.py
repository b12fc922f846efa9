"""Every stored provider, read from the database, as a
:class:`gantt.scheduler.state.provider_tree.ProviderIndex`, the structure
the allocation-candidates solver reads (the workers build theirs from
reports; the REST API reads one from the database when its change
stamp moved, :mod:`gantt.api.index_cache`): five statements, whatever
the number of providers."""

import collections

import sqlalchemy as sa

from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import RP
from gantt.db.models import TRAITS
from gantt.scheduler.state import provider_tree


def load(conn):
    """The index, and ``{uuid: name}`` of every provider."""
    rows = conn.execute(sa.select(
        RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
        RP.c.parent_provider_id, RP.c.root_provider_id)).all()
    uuids = {r.id: r.uuid for r in rows}
    inventories, usage = _inventories(conn), _usage(conn)
    traits = _sets(conn, TRAITS.c.trait)
    aggs = _sets(conn, AGGS.c.aggregate_uuid)
    by_root = collections.defaultdict(list)
    for r in rows:
        root_id = r.root_provider_id or r.id
        by_root[uuids[root_id]].append(provider_tree.Provider(
            uuid=r.uuid, name=r.name,
            parent_uuid=uuids.get(r.parent_provider_id),
            root_uuid=uuids[root_id], generation=r.generation,
            inventories=inventories.get(r.id, {}),
            usage=usage.get(r.id, {}), traits=traits.get(r.id, ()),
            aggregates=aggs.get(r.id, ())))
    index = provider_tree.ProviderIndex()
    for root, providers in by_root.items():
        index.set_tree(root, _parents_first(root, providers))
    return index


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


def _inventories(conn):
    found = collections.defaultdict(dict)
    for r in conn.execute(sa.select(INV)):
        found[r.resource_provider_id][r.resource_class] = (
            r.total, r.reserved, r.min_unit, r.max_unit, r.step_size,
            r.allocation_ratio)
    return found


def _usage(conn):
    found = collections.defaultdict(dict)
    for rp_id, rc, used in conn.execute(
            sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                      sa.func.sum(ALLOC.c.used))
            .group_by(ALLOC.c.resource_provider_id,
                      ALLOC.c.resource_class)):
        found[rp_id][rc] = int(used)
    return found


def _sets(conn, column):
    found = collections.defaultdict(set)
    for rp_id, value in conn.execute(sa.select(
            column.table.c.resource_provider_id, column)):
        found[rp_id].add(value)
    return found
