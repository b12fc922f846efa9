"""HostStateCache: every host's latest report and usage, as numpy columns.

One row per host (a resource-provider tree root), one column per resource
class, trait or aggregate. Filters and weighers read whole columns at once.

Concurrency model: writers (stats reports, usage updates) hold ``_lock`` and
change elements in place; when a table must grow (a new host, class, trait or
aggregate) the writer builds bigger arrays and swaps in a new ``HostTable``.
A request takes ``cache.table`` once and keeps that reference, so it always
sees arrays of consistent shapes. It may see one host's row half-updated;
that can cost a claim retry, never an overcommit, because every claim is
checked again in the database.
"""

import dataclasses
import datetime
import functools
import threading
import time

import numpy as np

from gantt.objects import host_state as host_state_obj
from gantt.scheduler import aggregates as aggregates_mod
from gantt.scheduler import columns as columns_mod
from gantt.scheduler import numa as numa_mod
from gantt.scheduler import pci as pci_mod
from gantt.scheduler import provider_tree

_INITIAL_ROWS = 64
_INITIAL_COLS = 8


def _grow(array, rows, cols=None):
    """A copy of ``array`` padded to ``rows`` (x ``cols``) with 0 or None."""
    shape = (rows,) if array.ndim == 1 else (rows, cols)
    # object columns (uuids, hosts…) must pad with None like empty() does:
    # _write_row takes any non-None host of a row as its previous owner
    fill = None if array.dtype == object else 0
    # NOTE: matrices are column-major: filters and weighers read whole
    # columns (one class, trait or aggregate for every host), contiguously
    out = np.full(shape, fill, dtype=array.dtype, order="F")
    if array.ndim == 1:
        out[:array.shape[0]] = array
    else:
        out[:array.shape[0], :array.shape[1]] = array
    return out


@dataclasses.dataclass
class HostTable:
    """All hosts as columns. Rows ``[0, n)`` are live; the rest is spare.

    Resource matrices are ``rows x classes``; ``has_inventory`` tells which
    classes a host offers at all.
    """

    n: int
    resource_classes: columns_mod.KeyIndex
    traits_index: columns_mod.KeyIndex
    aggregates_index: columns_mod.KeyIndex
    zones_index: columns_mod.KeyIndex
    cells_index: columns_mod.KeyIndex
    # identity
    uuids: np.ndarray          # object
    hosts: np.ndarray          # object
    nodenames: np.ndarray      # object
    cell: np.ndarray           # int32 index into cells_index, -1 = none
    zone: np.ndarray           # int32 index into zones_index, -1 = none
    # status
    disabled: np.ndarray       # bool
    last_seen: np.ndarray      # float64 epoch seconds of the last report
    report_sequence: np.ndarray  # int64
    generation: np.ndarray     # int64, as last known from the database
    num_instances: np.ndarray  # int64
    num_io_ops: np.ndarray     # int64
    # resources
    has_inventory: np.ndarray  # bool  rows x classes
    total: np.ndarray          # int64 rows x classes
    reserved: np.ndarray       # int64
    min_unit: np.ndarray       # int64
    max_unit: np.ndarray       # int64
    step_size: np.ndarray      # int64
    allocation_ratio: np.ndarray  # float64
    used: np.ndarray           # int64
    # claims this worker has in flight (picked, not yet committed): other
    # requests of the same worker must not all pick the same last room
    pending: np.ndarray        # int64
    # (total - reserved) * allocation_ratio, kept with the inventory
    capacity: np.ndarray       # float64
    # column -> (largest min_unit, smallest max_unit, largest step_size)
    # any row ever reported: a request within them skips those checks
    rc_bounds: dict
    # memberships
    traits: np.ndarray         # bool rows x traits
    aggregates: np.ndarray     # bool rows x aggregates
    # free-form per-host detail for plugins that need it
    capabilities: list
    stats: list
    metrics: list
    updated_at: list
    # what was last written to the database for each row, and when
    fingerprints: list
    persisted_at: np.ndarray   # float64 epoch seconds
    row_by_uuid: dict
    rows_by_host: dict          # host name -> list of rows
    # keyed detail as columns (see gantt.scheduler.columns), NUMA cells and
    # PCI pools as columns, and their per-row originals for host_passes
    capability_columns: columns_mod.StringColumns
    stat_columns: columns_mod.StringColumns
    metric_columns: columns_mod.FloatColumns
    numa: numa_mod.NumaColumns
    pci: pci_mod.PciColumns
    numa_cells: list            # per row: tuple of numa.HostCell
    pci_pools: list             # per row: tuple of pci.Pool
    # per row: the aggregates the agent reported; ``aggregates`` adds those
    # whose host list names the host (see HostStateCache.apply_aggregates)
    reported_aggregates: list
    aggregate_set: aggregates_mod.AggregateSet
    # hosts that are provider trees (children reported): their resource
    # columns hold the tree-wide sums, the exact layout is in ``providers``
    tree: np.ndarray           # bool
    # the aggregates of sharing providers: hosts in them are served too
    sharing_aggregates: frozenset
    sharing_providers: tuple   # their uuids
    # every tree with children and every standalone provider (shared by
    # all tables of one cache)
    providers: provider_tree.ProviderIndex

    @classmethod
    def empty(cls, rows=_INITIAL_ROWS, cols=_INITIAL_COLS):
        def obj():
            return np.empty(rows, dtype=object)

        def mat(dtype):
            return np.zeros((rows, cols), dtype=dtype, order="F")

        return cls(
            n=0,
            resource_classes=columns_mod.KeyIndex(),
            traits_index=columns_mod.KeyIndex(),
            aggregates_index=columns_mod.KeyIndex(),
            zones_index=columns_mod.KeyIndex(),
            cells_index=columns_mod.KeyIndex(),
            uuids=obj(), hosts=obj(), nodenames=obj(),
            cell=np.full(rows, -1, dtype=np.int32),
            zone=np.full(rows, -1, dtype=np.int32),
            disabled=np.zeros(rows, dtype=bool),
            last_seen=np.zeros(rows), report_sequence=np.zeros(rows, np.int64),
            generation=np.zeros(rows, np.int64),
            num_instances=np.zeros(rows, np.int64),
            num_io_ops=np.zeros(rows, np.int64),
            has_inventory=mat(bool), total=mat(np.int64),
            reserved=mat(np.int64), min_unit=mat(np.int64),
            max_unit=mat(np.int64), step_size=mat(np.int64),
            allocation_ratio=mat(np.float64), used=mat(np.int64),
            pending=mat(np.int64),
            capacity=mat(np.float64), rc_bounds={},
            traits=mat(bool), aggregates=mat(bool),
            capabilities=[None] * rows, stats=[None] * rows,
            metrics=[None] * rows, updated_at=[None] * rows,
            fingerprints=[None] * rows, persisted_at=np.zeros(rows),
            row_by_uuid={}, rows_by_host={},
            capability_columns=columns_mod.StringColumns(rows),
            stat_columns=columns_mod.StringColumns(rows),
            metric_columns=columns_mod.FloatColumns(rows),
            numa=numa_mod.NumaColumns(rows), pci=pci_mod.PciColumns(rows),
            numa_cells=[()] * rows, pci_pools=[()] * rows,
            reported_aggregates=[frozenset()] * rows,
            aggregate_set=aggregates_mod.EMPTY,
            tree=np.zeros(rows, dtype=bool), sharing_aggregates=frozenset(),
            sharing_providers=(),
            providers=provider_tree.ProviderIndex(),
        )

    # -- shape ------------------------------------------------------------

    @property
    def row_capacity(self):
        return self.uuids.shape[0]

    def grown(self, rows=None, rc_cols=None, trait_cols=None, agg_cols=None):
        """A new table with room for more rows and/or columns.

        Indexes are copied, not shared: a reader of the old table must never
        find a name whose column its arrays do not have.
        """
        rows = max(rows or 0, self.row_capacity)
        rc_cols = max(rc_cols or 0, self.total.shape[1])
        trait_cols = max(trait_cols or 0, self.traits.shape[1])
        agg_cols = max(agg_cols or 0, self.aggregates.shape[1])
        fields = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                if value.ndim == 1:
                    grown = _grow(value, rows)
                    if f.name in ("cell", "zone"):
                        grown[value.shape[0]:] = -1
                elif f.name == "traits":
                    grown = _grow(value, rows, trait_cols)
                elif f.name == "aggregates":
                    grown = _grow(value, rows, agg_cols)
                else:
                    grown = _grow(value, rows, rc_cols)
                value = grown
            elif isinstance(value, list):
                value = value + [None] * (rows - len(value))
            elif isinstance(value, columns_mod.KeyIndex):
                value = columns_mod.KeyIndex(value.names)
            elif isinstance(value, dict):
                value = {k: (list(v) if isinstance(v, list) else v)
                         for k, v in value.items()}
            elif hasattr(value, "grown"):
                # column families (keyed detail, NUMA, PCI) grow themselves
                value = value.grown(rows)
            fields[f.name] = value
        return HostTable(**fields)

    def host_state(self, row, now, service_down_time):
        """The operator view of one row, as a HostState object."""
        resources = []
        for col, rc in enumerate(self.resource_classes.names):
            if not self.has_inventory[row, col]:
                continue
            total = int(self.total[row, col])
            reserved = int(self.reserved[row, col])
            ratio = float(self.allocation_ratio[row, col])
            used = int(self.used[row, col])
            resources.append(host_state_obj.ResourceUsage(
                resource_class=rc, total=total, reserved=reserved,
                allocation_ratio=ratio, used=used,
                free=int((total - reserved) * ratio) - used))
        cell = int(self.cell[row])
        zone = int(self.zone[row])
        return host_state_obj.HostState(
            uuid=self.uuids[row], host=self.hosts[row],
            nodename=self.nodenames[row],
            cell_uuid=self.cells_index.names[cell] if cell >= 0 else None,
            availability_zone=(self.zones_index.names[zone]
                               if zone >= 0 else None),
            resources=resources,
            traits=[t for c, t in enumerate(self.traits_index.names)
                    if self.traits[row, c]],
            aggregates=[a for c, a in enumerate(self.aggregates_index.names)
                        if self.aggregates[row, c]],
            num_instances=int(self.num_instances[row]),
            num_io_ops=int(self.num_io_ops[row]),
            generation=int(self.generation[row]),
            report_sequence=int(self.report_sequence[row]),
            updated_at=self.updated_at[row],
            up=bool(now - self.last_seen[row] <= service_down_time),
            disabled=bool(self.disabled[row]),
        )


@dataclasses.dataclass(frozen=True)
class HostReport:
    """One host's report as the cache stores it (built from ComputeNode or
    from the database at start-up)."""

    uuid: str
    host: str
    nodename: str
    cell_uuid: str | None
    availability_zone: str | None
    disabled: bool
    report_sequence: int
    num_instances: int
    num_io_ops: int
    # resource class -> (total, reserved, min_unit, max_unit, step, ratio)
    inventories: dict
    traits: frozenset
    aggregates: frozenset
    capabilities: dict
    stats: dict
    metrics: dict
    updated_at: datetime.datetime | None
    received_at: float
    numa_cells: tuple = ()       # of numa.HostCell
    pci_pools: tuple = ()        # of pci.Pool
    # consumers the agent runs (None: not reported); persisted for the
    # orphan audit, so a change must reach the database
    instance_uuids: frozenset | None = None
    # the rest of the provider tree (provider_tree.Provider), parents first
    children: tuple = ()

    @classmethod
    def from_compute_node(cls, node, received_at):
        return cls(
            uuid=node.uuid, host=node.host, nodename=node.nodename,
            cell_uuid=node.cell_uuid,
            availability_zone=node.availability_zone,
            disabled=node.disabled, report_sequence=node.report_sequence,
            num_instances=node.num_instances, num_io_ops=node.num_io_ops,
            inventories=_inventory_tuples(node.inventories),
            traits=frozenset(node.traits),
            aggregates=frozenset(node.aggregates),
            capabilities=dict(node.capabilities), stats=dict(node.stats),
            metrics=dict(node.metrics), updated_at=node.updated_at,
            received_at=received_at,
            numa_cells=tuple(numa_mod.HostCell.from_obj(c)
                             for c in node.numa_cells),
            pci_pools=tuple(pci_mod.Pool.from_obj(p) for p in node.pci_pools),
            instance_uuids=(None if node.instance_uuids is None
                            else frozenset(node.instance_uuids)),
            children=tuple(
                provider_tree.Provider(
                    uuid=child.uuid, name=child.name,
                    parent_uuid=child.parent_provider_uuid,
                    root_uuid=node.uuid,
                    inventories=_inventory_tuples(child.inventories),
                    traits=frozenset(child.traits),
                    aggregates=frozenset(child.aggregates))
                for child in node.child_providers))

    def root_provider(self, generation=-1, usage=None):
        """The compute node itself as a provider of its tree."""
        return provider_tree.Provider(
            uuid=self.uuid, name=self.nodename, parent_uuid=None,
            root_uuid=self.uuid, generation=generation,
            inventories=dict(self.inventories), usage=dict(usage or {}),
            traits=self.traits, aggregates=self.aggregates)

    @functools.cached_property
    def column_inventories(self):
        """What the host's resource columns hold: its own inventory, or for
        a tree the sums over every provider of it.

        A tree's sums are a bound no fitting tree can fail (capacity summed,
        the smallest min_unit, no max_unit), so columnar filters and
        weighers can narrow trees before the solver looks at them.
        """
        if not self.children:
            return self.inventories
        sums = {}
        for inventories in [self.inventories] + [
                c.inventories for c in self.children]:
            for rc, (total, reserved, min_u, _max, step, ratio) in (
                    inventories.items()):
                t, r, cap, low, steps = sums.get(
                    rc, (0, 0, 0.0, min_u, frozenset()))
                sums[rc] = (t + total, r + reserved,
                            cap + (total - reserved) * ratio,
                            min(low, min_u), steps | {step})
        result = {}
        for rc, (total, reserved, capacity, low, steps) in sums.items():
            free = total - reserved
            ratio = capacity / free if free > 0 else 1.0
            step = next(iter(steps)) if len(steps) == 1 else 1
            result[rc] = (total, reserved, low, 2 ** 62, step, ratio)
        return result

    def fingerprint(self):
        """Everything but the sequence and times: equal means unchanged."""
        return hash((
            self.host, self.nodename, self.cell_uuid, self.availability_zone,
            self.disabled, self.num_instances, self.num_io_ops,
            tuple(sorted(self.inventories.items())), self.traits,
            self.aggregates, tuple(sorted(self.capabilities.items())),
            tuple(sorted(self.stats.items())),
            tuple(sorted(self.metrics.items())), self.numa_cells,
            self.pci_pools, self.instance_uuids,
            tuple((c.uuid, c.name, c.parent_uuid,
                   tuple(sorted(c.inventories.items())), c.traits,
                   c.aggregates) for c in self.children)))


class HostStateCache:
    """The worker's in-memory copy of every host, kept fresh by reports."""

    def __init__(self, clock=time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self.table = HostTable.empty()
        # standalone provider uuid -> the report sequence held
        self._standalone = {}

    def __len__(self):
        return self.table.n

    # -- reports ----------------------------------------------------------

    def needs_persisting(self, report, interval):
        """Whether ``report`` must be written to the database.

        A report that only repeats what this worker last wrote, less than
        ``interval`` seconds ago, need not be: the database already holds
        its content, and its liveness is refreshed at that interval.
        """
        table = self.table
        row = table.row_by_uuid.get(report.uuid)
        return (row is None
                or table.fingerprints[row] != report.fingerprint()
                or report.received_at - table.persisted_at[row] >= interval)

    def apply_report(self, report, persisted=False):
        """Store a host report; False when it is not newer than the cache's.

        :param report: a :class:`HostReport`
        :param persisted: the database now holds this report's content
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            if row is not None and (
                    table.report_sequence[row] >= report.report_sequence):
                return False
            table = self._make_room(table, report, row is None)
            if row is None:
                # NOTE: write the row before publishing it (uuid map, n), so
                # that a reader never sees a live row full of zeros
                row = table.n
                table.uuids[row] = report.uuid
                # below any real generation: the first usage is always news
                table.generation[row] = -1
                self._write_row(table, row, report)
                self._write_tree(table, row, report, was_tree=False)
                table.row_by_uuid[report.uuid] = row
                table.n += 1
            else:
                was_tree = bool(table.tree[row])
                self._write_row(table, row, report)
                self._write_tree(table, row, report, was_tree)
            if persisted:
                table.fingerprints[row] = report.fingerprint()
                table.persisted_at[row] = report.received_at
            self.table = table
            return True

    def presize(self, rows, resource_classes, traits, aggregates):
        """Grow the table once to hold what a bulk load will bring.

        Loading 100k hosts row by row would double the table (and copy it)
        a dozen times; sizing it up front copies it at most once.
        """
        with self._lock:
            table = self.table
            wanted = (_room(table.row_capacity, rows),
                      _room(table.total.shape[1], resource_classes),
                      _room(table.traits.shape[1], traits),
                      _room(table.aggregates.shape[1], aggregates))
            if wanted != (table.row_capacity, table.total.shape[1],
                          table.traits.shape[1],
                          table.aggregates.shape[1]):
                self.table = table.grown(*wanted)

    def _make_room(self, table, report, new_row):
        """Return ``table``, or a grown copy if the report does not fit."""
        wanted = (
            (table.resource_classes, report.column_inventories),
            (table.traits_index, report.traits),
            (table.aggregates_index, report.aggregates
             | table.aggregate_set.listed_for(report.host)),
        )
        new = [[n for n in names if index.get(n) is None]
               for index, names in wanted]
        rows = table.row_capacity
        if new_row and table.n >= rows:
            rows *= 2
        rc_cols = _room(table.total.shape[1],
                        len(table.resource_classes) + len(new[0]))
        t_cols = _room(table.traits.shape[1],
                       len(table.traits_index) + len(new[1]))
        a_cols = _room(table.aggregates.shape[1],
                       len(table.aggregates_index) + len(new[2]))
        if (rows, rc_cols, t_cols, a_cols) != (
                table.row_capacity, table.total.shape[1],
                table.traits.shape[1], table.aggregates.shape[1]):
            table = table.grown(rows, rc_cols, t_cols, a_cols)
        for index, names in zip((table.resource_classes, table.traits_index,
                                 table.aggregates_index), new, strict=True):
            for name in names:
                index.add(name)
        return table

    def _write_tree(self, table, row, report, was_tree):
        """Keep the provider index in step with a host's report."""
        index = table.providers
        if report.children:
            if was_tree:
                # usage and generations stay with the providers that stay
                root = report.root_provider()
            else:
                # the root's usage so far lived in the row alone
                root = report.root_provider(
                    generation=int(table.generation[row]),
                    usage=_row_usage(table, row))
            index.set_tree(report.uuid, [root, *report.children])
            _write_tree_usage(table, row, index.tree(report.uuid))
        elif was_tree:
            root = index.get(report.uuid)
            index.remove_tree(report.uuid)
            if root is not None:
                # back to one provider: the row holds the root's own usage
                _write_usage(table, row, root.usage)

    def _write_row(self, table, row, report):
        old_host = table.hosts[row]
        if old_host != report.host:
            if old_host is not None:
                table.rows_by_host[old_host].remove(row)
            table.rows_by_host.setdefault(report.host, []).append(row)
        table.hosts[row] = report.host
        table.nodenames[row] = report.nodename
        table.cell[row] = (table.cells_index.add(report.cell_uuid)
                           if report.cell_uuid else -1)
        table.zone[row] = (table.zones_index.add(report.availability_zone)
                           if report.availability_zone else -1)
        table.disabled[row] = report.disabled
        table.last_seen[row] = report.received_at
        table.report_sequence[row] = report.report_sequence
        table.num_instances[row] = report.num_instances
        table.num_io_ops[row] = report.num_io_ops
        table.has_inventory[row] = False
        table.tree[row] = bool(report.children)
        for rc, (total, reserved, min_u, max_u, step, ratio) in (
                report.column_inventories.items()):
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
        for trait in report.traits:
            table.traits[row, table.traits_index.get(trait)] = True
        table.reported_aggregates[row] = report.aggregates
        _write_aggregates(table, row)
        table.capabilities[row] = report.capabilities
        table.stats[row] = report.stats
        table.metrics[row] = report.metrics
        table.updated_at[row] = report.updated_at
        table.capability_columns.write(row, report.capabilities)
        table.stat_columns.write(row, report.stats)
        table.metric_columns.write(row, report.metrics)
        table.numa.write(row, report.numa_cells)
        table.numa_cells[row] = report.numa_cells
        table.pci.write(row, report.pci_pools)
        table.pci_pools[row] = report.pci_pools

    # -- aggregates -------------------------------------------------------

    @property
    def aggregates(self):
        """The :class:`~gantt.scheduler.aggregates.AggregateSet` in use."""
        return self.table.aggregate_set

    def apply_aggregates(self, aggregate_set):
        """Use ``aggregate_set`` (every aggregate) from now on.

        Hosts named in an aggregate's host list become members of it, in
        addition to the aggregates their agents report; only the rows of
        hosts whose listed membership changed are rewritten.
        """
        with self._lock:
            table = self.table
            old = table.aggregate_set
            hosts = set(old.by_host) | set(aggregate_set.by_host)
            changed = [h for h in hosts if old.listed_for(h)
                       != aggregate_set.listed_for(h)]
            new = [u for u in set().union(*aggregate_set.by_host.values())
                   if table.aggregates_index.get(u) is None]
            if new:
                cols = _room(table.aggregates.shape[1],
                             len(table.aggregates_index) + len(new))
                if cols != table.aggregates.shape[1]:
                    table = table.grown(agg_cols=cols)
                for uuid in sorted(new):
                    table.aggregates_index.add(uuid)
            table.aggregate_set = aggregate_set
            for host in changed:
                for row in table.rows_by_host.get(host, ()):
                    _write_aggregates(table, row)
            self.table = table

    # -- usage ------------------------------------------------------------

    def apply_usage(self, provider_uuid, generation, usages):
        """Set a host's usage as of ``generation``; older news is ignored.

        Every change of a provider's allocations bumps its generation, so an
        equal generation is the same state and is not applied again.

        :param usages: resource class -> total amount used on the provider
        :returns: True if this was news (the cache changed)
        """
        with self._lock:
            table = self.table
            node = table.providers.get(provider_uuid)
            if node is not None:
                return self._apply_tree_usage(table, node, generation,
                                              usages)
            row = table.row_by_uuid.get(provider_uuid)
            if row is None or table.generation[row] >= generation:
                return False
            table.generation[row] = generation
            _write_usage(table, row, usages)
            return True

    @staticmethod
    def _apply_tree_usage(table, node, generation, usages):
        """A provider of a tree, or a standalone one, changed usage."""
        index = table.providers
        if not index.apply_usage(node.uuid, generation, usages):
            return False
        row = table.row_by_uuid.get(node.root_uuid)
        if row is not None:
            if node.uuid == node.root_uuid:
                table.generation[row] = generation
            _write_tree_usage(table, row, index.tree(node.root_uuid))
        return True

    # -- standalone providers ----------------------------------------------

    def apply_provider(self, provider, report_sequence):
        """Store a standalone provider's report (a sharing pool…); False
        when it is not newer than the one held.

        :param provider: a :class:`provider_tree.Provider` (its own root)
        """
        with self._lock:
            held = self._standalone.get(provider.uuid)
            if held is not None and held >= report_sequence:
                return False
            table = self.table
            table.providers.set_tree(provider.uuid, [provider])
            self._standalone[provider.uuid] = report_sequence
            self._refresh_sharing(table)
            return True

    def remove_provider(self, provider_uuid):
        """Forget a standalone provider (it was deleted)."""
        with self._lock:
            if self._standalone.pop(provider_uuid, None) is None:
                return False
            table = self.table
            table.providers.remove_tree(provider_uuid)
            self._refresh_sharing(table)
            return True

    def standalone_providers(self):
        """The standalone providers held, as provider_tree.Provider."""
        index = self.table.providers
        return [p for p in map(index.get, list(self._standalone))
                if p is not None]

    def _refresh_sharing(self, table):
        pools = [p for p in map(table.providers.get, list(self._standalone))
                 if p is not None and p.sharing]
        sharing = frozenset().union(*(p.aggregates for p in pools))
        if sharing - set(table.aggregates_index.names):
            new = sorted(sharing - set(table.aggregates_index.names))
            cols = _room(table.aggregates.shape[1],
                         len(table.aggregates_index) + len(new))
            if cols != table.aggregates.shape[1]:
                table = table.grown(agg_cols=cols)
            for uuid in new:
                table.aggregates_index.add(uuid)
        table.sharing_aggregates = sharing
        table.sharing_providers = tuple(sorted(p.uuid for p in pools))
        self.table = table

    # -- reading ----------------------------------------------------------

    def reserve(self, provider_uuid, resources):
        """Mark a claim this worker is making; returns the token that
        :meth:`unreserve` takes."""
        with self._lock:
            self._mark(self.table, provider_uuid, resources, 1)
            return (self.table, provider_uuid, resources)

    def unreserve(self, token):
        """Drop a mark, from its table and from any bigger table that was
        copied from it meanwhile (views may still read either)."""
        table, provider_uuid, resources = token
        with self._lock:
            self._mark(table, provider_uuid, resources, -1)
            if self.table is not table:
                self._mark(self.table, provider_uuid, resources, -1)

    @staticmethod
    def _mark(table, provider_uuid, resources, sign):
        row = table.row_by_uuid.get(provider_uuid)
        if row is None:
            return
        for rc, amount in resources.items():
            col = table.resource_classes.get(rc)
            if col is not None and col < table.pending.shape[1]:
                table.pending[row, col] += sign * amount

    def report_ages(self):
        """``oldest_report_s`` and ``min_report_sequence`` over all hosts."""
        table = self.table
        n = table.n
        if not n:
            return {"oldest_report_s": None, "min_report_sequence": None}
        return {
            "oldest_report_s": float(self._clock()
                                     - table.last_seen[:n].min()),
            "min_report_sequence": int(table.report_sequence[:n].min())}

    def host_states(self, service_down_time, hosts=None):
        table = self.table
        now = self._clock()
        rows = range(table.n)
        if hosts:
            wanted = set(hosts)
            rows = [r for r in rows if table.hosts[r] in wanted
                    or table.uuids[r] in wanted]
        return [table.host_state(r, now, service_down_time) for r in rows]

    def now(self):
        return self._clock()


def _row_usage(table, row):
    names = table.resource_classes.names
    return {names[c]: int(table.used[row, c])
            for c in np.flatnonzero(table.used[row, :len(names)])}


def _write_usage(table, row, usages):
    table.used[row] = 0
    for rc, amount in usages.items():
        col = table.resource_classes.get(rc)
        if col is not None:
            table.used[row, col] = amount


def _write_tree_usage(table, row, providers):
    """A tree host's row uses the sum over its providers."""
    total = {}
    for provider in providers:
        for rc, amount in provider.usage.items():
            total[rc] = total.get(rc, 0) + amount
    _write_usage(table, row, total)


def _inventory_tuples(inventories):
    """Inventory objects as ``{class: (total, reserved, min_unit, max_unit,
    step_size, allocation_ratio)}``."""
    return {inv.resource_class: (inv.total, inv.reserved, inv.min_unit,
                                 inv.max_unit, inv.step_size,
                                 inv.allocation_ratio)
            for inv in inventories}


def _write_aggregates(table, row):
    """Row ``row``'s membership: reported plus listed aggregates."""
    members = table.reported_aggregates[row] | (
        table.aggregate_set.listed_for(table.hosts[row]))
    table.aggregates[row] = False
    for agg in members:
        table.aggregates[row, table.aggregates_index.get(agg)] = True


def _room(allocated, needed):
    if needed <= allocated:
        return allocated
    while allocated < needed:
        allocated *= 2
    return allocated
