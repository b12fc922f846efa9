"""The cold load: every host the database holds, into a HostTable.

:meth:`.cache.HostStateCache.load` takes a
:class:`gantt.db.host_load.StoredHosts` (columns, contents many hosts share
held once) and writes the hosts that are new and plain (no children) as
whole columns here, each distinct inventory, trait set and detail once;
trees, and hosts whose report was cast while loading, go through the
cache's one-host path (:func:`stored_report`).
"""

import datetime
import json

import numpy as np

from gantt.objects import base as objects_base
from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import pci as pci_mod
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import rows as rows_mod
from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import topology as topology_mod
from gantt.scheduler.state import update as update_mod


def _report_details(text):
    """(capabilities, stats, metrics, NUMA cells, PCI pools) from a stored
    report's ``details``."""
    details = json.loads(text or "{}")
    return (
        details.get("capabilities", {}), details.get("stats", {}),
        details.get("metrics", {}),
        tuple(numa_mod.HostCell.from_obj(
            objects_base.GanttObject.obj_from_primitive(p))
            for p in details.get("numa_cells", [])),
        tuple(pci_mod.Pool.from_obj(
            objects_base.GanttObject.obj_from_primitive(p))
            for p in details.get("pci_pools", [])))


def _inventories(stored):
    """``{class: Inventory}`` of the database's ``{class: 6-tuple}``."""
    return {rc: update_mod.Inventory._make(fields)
            for rc, fields in stored.items()}


def _instance_uuids(text):
    return None if text is None else frozenset(json.loads(text))


def stored_provider(stored, root_uuid):
    """A provider_tree.Provider from a database StoredProvider."""
    return provider_tree.Provider(
        uuid=stored.uuid, name=stored.name, parent_uuid=stored.parent_uuid,
        root_uuid=root_uuid, inventories=_inventories(stored.inventories),
        traits=frozenset(stored.traits),
        aggregates=frozenset(stored.aggregates))


def stored_report(stored, i, window=0):
    """Host ``i`` of a StoredHosts as a :class:`~.update.HostUpdate`
    (what the cache holds of it once loaded; ``window``: ``[api]
    compute_node_down_time``)."""
    caps, stats, metrics, numa_cells, pci_pools = _report_details(
        stored.details(i))
    uuid = stored.uuids[i]
    return update_mod.HostUpdate(
        uuid=uuid, host=stored.hosts[i], nodename=stored.nodenames[i],
        cell_uuid=stored.cell_uuids[i], availability_zone=stored.zones[i],
        disabled=bool(stored.disabled[i]),
        report_sequence=int(stored.report_sequence[i]),
        num_instances=int(stored.num_instances[i]),
        num_io_ops=int(stored.num_io_ops[i]),
        inventories=_inventories(stored.inventories(i)),
        traits=stored.traits(i),
        aggregates=stored.aggregates(i), capabilities=caps, stats=stats,
        metrics=metrics, updated_at=stored.agent_updated_at[i],
        received_at=stored.received(i).replace(
            tzinfo=datetime.timezone.utc).timestamp(),
        instance_uuids=_instance_uuids(stored.instance_uuids[i]),
        numa_cells=numa_cells, pci_pools=pci_pools,
        location=stored.locations[i],
        lease=update_mod.api_lease(stored.sources[i], window),
        children=tuple(stored_provider(c, uuid)
                       for c in stored.children.get(i, ())))


def stored_host(stored, window=0):
    """A :class:`gantt.db.host_load.StoredHost` as a
    :class:`~.update.HostUpdate` (``window``: ``[api]
    compute_node_down_time``)."""
    r, uuid = stored.report, stored.root.uuid
    caps, stats, metrics, numa_cells, pci_pools = _report_details(r.details)
    return update_mod.HostUpdate(
        uuid=uuid, host=r.host, nodename=r.nodename, cell_uuid=r.cell_uuid,
        availability_zone=r.availability_zone, disabled=bool(r.disabled),
        report_sequence=int(r.report_sequence),
        num_instances=int(r.num_instances), num_io_ops=int(r.num_io_ops),
        inventories=_inventories(stored.root.inventories),
        traits=frozenset(stored.root.traits),
        aggregates=frozenset(stored.root.aggregates), capabilities=caps,
        stats=stats, metrics=metrics, updated_at=r.agent_updated_at,
        received_at=r.received_at.replace(
            tzinfo=datetime.timezone.utc).timestamp(),
        instance_uuids=_instance_uuids(r.instance_uuids),
        numa_cells=numa_cells, pci_pools=pci_pools, location=r.location,
        boot_id=r.boot_id, lease=update_mod.api_lease(r.source, window),
        children=tuple(stored_provider(c, uuid) for c in stored.children))


class Loading:
    """A StoredHosts prepared for :meth:`.cache.HostStateCache.load`: details
    parsed once per distinct text, and the fingerprints of the hosts
    without children (as their stored reports')."""

    def __init__(self, stored, window=0):
        self.stored = stored
        self.leases = np.array([update_mod.api_lease(s, window)
                                for s in stored.sources], dtype=np.float64)
        self.details = [_report_details(t) for t in stored.detail_texts]
        self.fingerprints = self._fingerprints()

    def _fingerprints(self):
        """HostUpdate.fingerprint of each host's stored report, were it
        without children (a tree's is not used: see HostStateCache.load).
        """
        stored = self.stored
        inventories = [update_mod.inventory_hash(inv)
                       for inv in stored.inventory_sets]
        details = [update_mod.details_hash(*d) for d in self.details]
        traits, aggregates = stored.trait_sets, stored.aggregate_sets
        iu = (map(_instance_uuids, stored.instance_uuids)
              if any(stored.instance_uuids)
              else [None] * len(stored))
        return [hash(
            (host, node, cell, zone, disabled, instances, io_ops,
             inventories[inv], traits[trait], aggregates[agg],
             details[detail], instance_uuids, location, ()))
            for (host, node, cell, zone, disabled, instances, io_ops, inv,
                 trait, agg, detail, instance_uuids, location) in zip(
                stored.hosts, stored.nodenames, stored.cell_uuids,
                stored.zones, stored.disabled.tolist(),
                stored.num_instances.tolist(), stored.num_io_ops.tolist(),
                stored.inventory_codes.tolist(),
                stored.trait_codes.tolist(),
                stored.aggregate_codes.tolist(),
                stored.detail_codes.tolist(), iu, stored.locations,
                strict=True)]

    def split(self, row_by_uuid):
        """(hosts to write in bulk: new and plain, the other hosts)."""
        children = self.stored.children
        if not row_by_uuid and not children:
            return list(range(len(self.stored))), []
        fresh, others = [], []
        for i, uuid in enumerate(self.stored.uuids):
            if uuid in row_by_uuid or i in children:
                others.append(i)
            else:
                fresh.append(i)
        return fresh, others


def loaded_table(table, loading, fresh, new_rows):
    """``table`` grown to hold ``new_rows`` more hosts, with the hosts
    ``fresh`` of ``loading`` written at its end (the caller holds the
    cache's lock; the new table is not published yet)."""
    stored = loading.stored
    pick = np.array(fresh, dtype=np.int64)
    rcs = _used_names(stored.inventory_sets, stored.inventory_codes[pick])
    traits = _used_names(stored.trait_sets, stored.trait_codes[pick])
    table = table.grown(
        table.n + new_rows,
        table_mod.room(table.total.shape[1], len(
            set(table.resource_classes.names) | set(rcs))),
        table_mod.room(table.traits.shape[1], len(
            set(table.traits_index.names) | set(traits))))
    for name in rcs:
        table.resource_classes.add(name)
    for name in traits:
        table.traits_index.add(name)
    start = table.n
    _load_identity(table, loading, pick, start)
    _load_inventories(table, stored, pick, start)
    _load_memberships(table, stored, pick, start)
    _load_details(table, loading, pick, start)
    _load_usage(table, stored, pick, start)
    end = start + len(fresh)
    rows_mod.write_room(table, slice(start, end))
    uuids = table.uuids[start:end].tolist()
    hosts = table.hosts[start:end].tolist()
    table.row_by_uuid.update(zip(uuids, range(start, end), strict=True))
    by_host = table.rows_by_host
    if not by_host and len(set(hosts)) == len(hosts):
        table.rows_by_host = {h: [row] for row, h in enumerate(hosts, start)}
    else:
        for row, host in enumerate(hosts, start):
            by_host.setdefault(host, []).append(row)
    # NOTE: rows are written before ``n`` publishes them
    table.n = end
    return table


def _used_names(sets, codes):
    """The names in the ``sets`` some of ``codes`` use, sorted."""
    return sorted(set().union(*(sets[c] for c in np.unique(codes).tolist())))


def _taken(values, pick):
    """``values[pick]`` of a list (itself when ``pick`` is everything)."""
    if len(pick) == len(values):
        return values
    return [values[i] for i in pick.tolist()]


def _codes(index, values):
    """Per value its code in ``index`` (added if new), -1 for None/''."""
    codes = {v: index.add(v) for v in dict.fromkeys(values) if v}
    return [codes.get(v, -1) for v in values]


def _load_identity(table, loading, pick, start):
    stored = loading.stored
    end = start + len(pick)
    table.uuids[start:end] = _taken(stored.uuids, pick)
    table.hosts[start:end] = _taken(stored.hosts, pick)
    table.nodenames[start:end] = _taken(stored.nodenames, pick)
    table.cell[start:end] = _codes(table.cells_index,
                                   _taken(stored.cell_uuids, pick))
    table.zone[start:end] = _codes(table.zones_index,
                                   _taken(stored.zones, pick))
    table.disabled[start:end] = stored.disabled[pick]
    # every host loaded in bulk is a compute node (standalone providers
    # come in through HostStateCache.apply_provider)
    table.kind[start:end] = table.kinds_index.get(table_mod.COMPUTE)
    table.last_seen[start:end] = stored.received_at[pick]
    table.lease[start:end] = loading.leases[pick]
    if loading.leases[pick].any():
        table.leased = True
    table.persisted_at[start:end] = stored.received_at[pick]
    table.report_sequence[start:end] = stored.report_sequence[pick]
    table.num_instances[start:end] = stored.num_instances[pick]
    table.num_io_ops[start:end] = stored.num_io_ops[pick]
    table.generation[start:end] = stored.generation[pick]
    table.updated_at[start:end] = _taken(stored.agent_updated_at, pick)
    table.fingerprints[start:end] = _taken(loading.fingerprints, pick)


def _load_inventories(table, stored, pick, start):
    """Inventory columns of the rows from ``start``: each distinct
    inventory is written once as a row pattern, then copied to the rows
    that have it."""
    index = table.resource_classes
    sets = stored.inventory_sets
    width = table.total.shape[1]
    has = np.zeros((len(sets), width), dtype=bool)
    ints = np.zeros((5, len(sets), width), dtype=np.int64)
    ratio = np.zeros((len(sets), width))
    capacity = np.zeros((len(sets), width))
    codes = stored.inventory_codes[pick]
    for k in np.unique(codes).tolist():
        inventories = _inventories(sets[k])
        for rc, inv in inventories.items():
            col = index.get(rc)
            has[k, col] = True
            ints[:, k, col] = (inv.total, inv.reserved, inv.min_unit,
                               inv.max_unit, inv.step_size)
            ratio[k, col] = inv.allocation_ratio
            # as rows.write_row computes it, in Python floats
            capacity[k, col] = inv.capacity
        _fold_bounds(table.rc_bounds, index, inventories)
    end = start + len(pick)
    table.has_inventory[start:end] = has[codes]
    for k, name in enumerate(("total", "reserved", "min_unit", "max_unit",
                              "step_size")):
        getattr(table, name)[start:end] = ints[k][codes]
    table.allocation_ratio[start:end] = ratio[codes]
    table.capacity[start:end] = capacity[codes]


def _fold_bounds(bounds, index, inventories):
    """Widen ``rc_bounds`` by one row's inventories (see rows.write_row).
    """
    for rc, inv in inventories.items():
        col = index.get(rc)
        low, high, steps = bounds.get(
            col, (inv.min_unit, inv.max_unit, inv.step_size))
        bounds[col] = (max(low, inv.min_unit), min(high, inv.max_unit),
                       max(steps, inv.step_size))


def _load_memberships(table, stored, pick, start):
    """Traits, and reported plus listed aggregates, of the rows from
    ``start``."""
    by_name = table.traits_index.by_name
    sets = stored.trait_sets
    codes = stored.trait_codes[pick]
    used = np.unique(codes).tolist()
    patterns = np.zeros((len(sets), table.traits.shape[1]), dtype=bool)
    patterns[np.repeat(used, [len(sets[k]) for k in used]),
             [by_name[t] for k in used for t in sets[k]]] = True
    end = start + len(pick)
    table.traits[start:end] = patterns[codes]
    codes = stored.aggregate_codes[pick]
    sets = list(stored.aggregate_sets)
    table.reported_aggregates[start:end] = [sets[c] for c in codes.tolist()]
    listed = table.aggregate_set.by_host
    if listed:
        # a host an aggregate names is in it too: a set of its own
        reported, codes = codes.tolist(), codes.copy()
        for k, host in enumerate(table.hosts[start:end].tolist()):
            if host in listed:
                codes[k] = len(sets)
                sets.append(sets[reported[k]] | listed[host])
    for uuid in _used_names(sets, codes):
        table.aggregates_index.add(uuid)
    table.aggregates.add_rows(start, codes, sets)
    _load_locations(table, stored, pick, start)


def _load_locations(table, stored, pick, start):
    """The rows' locations, when any host reports one or any aggregate
    is a topology domain (else every row stays nowhere)."""
    reported = _taken(stored.locations, pick)
    table.reported_locations[start:start + len(pick)] = reported
    if any(reported) or table.aggregate_set.with_key(
            topology_mod.AGGREGATE_KEY):
        for row in range(start, start + len(pick)):
            rows_mod.write_location(table, row)


def _load_details(table, loading, pick, start):
    """Capabilities, stats, metrics, NUMA cells and PCI pools of the rows
    from ``start`` (hosts with equal details share them)."""
    codes = loading.stored.detail_codes[pick]
    details = loading.details
    end = start + len(pick)
    for k, (name, family) in enumerate((
            ("capabilities", table.capability_columns),
            ("stats", table.stat_columns),
            ("metrics", table.metric_columns))):
        distinct = [d[k] for d in details]
        getattr(table, name)[start:end] = [
            distinct[c] for c in codes.tolist()]
        family.write_coded(start, codes, distinct)
    per_row = [details[c] for c in codes.tolist()]
    table.numa_cells[start:end] = [d[3] for d in per_row]
    table.pci_pools[start:end] = [d[4] for d in per_row]
    for row, d in enumerate(per_row, start):
        # a new row holds no cell nor pool already
        if d[3]:
            table.numa.write(row, d[3])
        if d[4]:
            table.pci.write(row, d[4])


def _load_usage(table, stored, pick, start):
    """Usage of the rows from ``start`` (hosts ``pick`` of ``stored``)."""
    row_of = np.full(len(stored), -1, dtype=np.int64)
    row_of[pick] = np.arange(start, start + len(pick))
    target = row_of[stored.usage_rows]
    index = table.resource_classes
    col_of = np.array([-1 if index.get(rc) is None else index.get(rc)
                       for rc in stored.usage_classes], dtype=np.int64)
    cols = col_of[stored.usage_codes] if len(col_of) else target
    keep = (target >= 0) & (cols >= 0)
    table.used[target[keep], cols[keep]] = stored.usage_amounts[keep]
