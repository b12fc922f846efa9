"""Writing one host into a HostTable row (the cache holds its lock).

:func:`make_room` grows the table when an update brings a new host, class
or trait; :func:`write_row` writes the update's columns, and
:func:`write_tree` keeps the provider index of a tree host in step. The
usage helpers write what a host uses: its own, or for a tree the sum over
its providers.
"""

import numpy as np

from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import topology as topology_mod


def make_room(table, update, new_row):
    """Return ``table``, or a grown copy if ``update`` does not fit."""
    wanted = (
        (table.resource_classes, update.column_inventories),
        (table.traits_index, update.traits.union(
            *(child.traits for child in update.children))),
        (table.aggregates_index, update.aggregates
         | table.aggregate_set.listed_for(update.host)),
    )
    new = [[n for n in names if index.get(n) is None]
           for index, names in wanted]
    rows = table.row_capacity
    if new_row and table.n >= rows:
        rows = table_mod.more_rows(rows)
    rc_cols = table_mod.room(table.total.shape[1],
                             len(table.resource_classes) + len(new[0]))
    t_cols = table_mod.room(table.traits.shape[1],
                            len(table.traits_index) + len(new[1]))
    if (rows, rc_cols, t_cols) != (
            table.row_capacity, table.total.shape[1],
            table.traits.shape[1]):
        table = table.grown(rows, rc_cols, t_cols)
    for index, names in zip((table.resource_classes, table.traits_index,
                             table.aggregates_index), new, strict=True):
        for name in names:
            index.add(name)
    return table


def write_tree(table, row, update, was_tree):
    """Keep the provider index in step with a host's update."""
    index = table.providers
    table.tree_traits[row] = False
    for child in update.children:
        for trait in child.traits:
            table.tree_traits[row, table.traits_index.get(trait)] = True
    if update.children:
        if was_tree:
            # usage and generations stay with the providers that stay
            root = update.root_provider()
        else:
            # the root's usage so far lived in the row alone
            root = update.root_provider(
                generation=int(table.generation[row]),
                usage=row_usage(table, row))
        index.set_tree(update.uuid, [root, *update.children])
        write_tree_usage(table, row, index.tree(update.uuid))
    elif was_tree:
        root = index.get(update.uuid)
        index.remove_tree(update.uuid)
        if root is not None:
            # back to one provider: the row holds the root's own usage
            write_usage(table, row, root.usage)


def write_row(table, row, update):
    """Row ``row`` holds ``update`` (its inventories may be plain
    6-tuples: the database's readers give those, see update.Inventory)."""
    old_host = table.hosts[row]
    if old_host != update.host:
        if old_host is not None:
            table.rows_by_host[old_host].remove(row)
        table.rows_by_host.setdefault(update.host, []).append(row)
    table.hosts[row] = update.host
    table.nodenames[row] = update.nodename
    table.cell[row] = (table.cells_index.add(update.cell_uuid)
                       if update.cell_uuid else -1)
    table.zone[row] = (table.zones_index.add(update.availability_zone)
                       if update.availability_zone else -1)
    table.disabled[row] = update.disabled
    table.kind[row] = table.kinds_index.add(update.kind)
    table.services[row] = update.service
    table.instance_links[row] = update.instance_uuid
    table.instance_link[row] = (table.links_index.add(update.instance_uuid)
                                if update.instance_uuid else -1)
    table.last_seen[row] = update.received_at
    table.lease[row] = update.lease
    if update.lease:
        table.leased = True
    table.report_sequence[row] = update.report_sequence
    table.num_instances[row] = update.num_instances
    table.num_io_ops[row] = update.num_io_ops
    table.has_inventory[row] = False
    table.tree[row] = bool(update.children)
    for rc, (total, reserved, min_u, max_u, step, ratio) in (
            update.column_inventories.items()):
        col = table.resource_classes.get(rc)
        table.has_inventory[row, col] = True
        table.total[row, col] = total
        table.reserved[row, col] = reserved
        table.min_unit[row, col] = min_u
        table.max_unit[row, col] = max_u
        table.step_size[row, col] = step
        table.allocation_ratio[row, col] = ratio
        table.capacity[row, col] = (total - reserved) * ratio
        low, high, steps = table.rc_bounds.get(col, (min_u, max_u, step))
        table.rc_bounds[col] = (max(low, min_u), min(high, max_u),
                                max(steps, step))
    # a class no longer reported offers nothing
    table.total[row, ~table.has_inventory[row]] = 0
    table.capacity[row, ~table.has_inventory[row]] = 0
    table.traits[row] = False
    for trait in update.traits:
        table.traits[row, table.traits_index.get(trait)] = True
    table.reported_aggregates[row] = update.aggregates
    table.reported_locations[row] = update.location
    write_aggregates(table, row)
    table.capabilities[row] = update.capabilities
    table.stats[row] = update.stats
    table.metrics[row] = update.metrics
    table.updated_at[row] = update.updated_at
    table.capability_columns.write(row, update.capabilities)
    table.stat_columns.write(row, update.stats)
    table.metric_columns.write(row, update.metrics)
    table.numa.write(row, update.numa_cells)
    table.numa_cells[row] = update.numa_cells
    table.pci.write(row, update.pci_pools)
    table.pci_pools[row] = update.pci_pools
    write_room(table, row)


def row_usage(table, row):
    """``{class: used}`` of row ``row`` (the classes it uses)."""
    names = table.resource_classes.names
    return {names[c]: int(table.used[row, c])
            for c in np.flatnonzero(table.used[row, :len(names)])}


def known(table, usages):
    """``usages`` but the classes the table has no column for."""
    return {rc: a for rc, a in usages.items()
            if table.resource_classes.get(rc) is not None}


def write_usage(table, row, usages):
    """Row ``row`` uses ``usages`` (classes without a column ignored)."""
    table.used[row] = 0
    for rc, amount in usages.items():
        col = table.resource_classes.get(rc)
        if col is not None:
            table.used[row, col] = amount
    write_room(table, row)


def write_room(table, rows):
    """The room columns of ``rows`` (a row or a slice of them) from their
    inventory and usage: called after each write of either."""
    used = table.used[rows]
    total = table.total[rows]
    table.free[rows] = table.capacity[rows] - used
    table.free_unreserved[rows] = total - table.reserved[rows] - used
    table.free_overcommitted[rows] = (
        total * table.allocation_ratio[rows] - used)


def write_tree_usage(table, row, providers):
    """A tree host's row uses the sum over its providers."""
    total = {}
    for provider in providers:
        for rc, amount in provider.usage.items():
            total[rc] = total.get(rc, 0) + amount
    write_usage(table, row, total)


def write_aggregates(table, row):
    """Row ``row``'s membership: reported plus listed aggregates."""
    listed = table.aggregate_set.listed_for(table.hosts[row])
    reported = table.reported_aggregates[row]
    table.aggregates.write(row, reported | listed if listed else reported)
    write_location(table, row)


def write_location(table, row):
    """Row ``row``'s location: the report's, its levels left out filled
    from the topology aggregates the row is in (the report wins)."""
    reported = topology_mod.Location.parse(table.reported_locations[row])
    from_aggregates = _aggregate_location(table, row)
    if from_aggregates.parts:
        reported = reported.filled(from_aggregates, table.topology.levels)
    if reported != table.locations[row]:
        table.set_location(row, reported)


def _aggregate_location(table, row):
    """The domains the row's topology aggregates name (of two at one
    level, the first name in sorted order)."""
    tagged = table.aggregate_set.with_key(topology_mod.AGGREGATE_KEY)
    if not tagged:
        return topology_mod.NOWHERE
    mine = table.aggregates.members(row)
    by_uuid = table.aggregate_set.by_uuid
    names = {}
    for uuid, level in tagged:
        if uuid in mine and level != topology_mod.ZONE:
            name = by_uuid[uuid].name
            names[level] = min(names.get(level, name), name)
    return topology_mod.Location(tuple(sorted(names.items())))
