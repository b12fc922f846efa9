"""HostStateCache: every host's latest report and usage, as numpy columns.

One row per host (a resource-provider tree root), one column per resource
class or trait; aggregate membership is kept sparse (see
:class:`~gantt.scheduler.state.aggregates.Membership`). Filters and
weighers read whole columns at once.

Concurrency model: writers (stats reports, usage updates) hold ``_lock`` and
change elements in place; when a table must grow (a new host, class or
trait) the writer builds bigger arrays and swaps in a new ``HostTable``.
A request takes ``cache.table`` once and keeps that reference, so it always
sees arrays of consistent shapes. It may see one host's row half-updated;
that can cost a claim retry, never an overcommit, because every claim is
checked again in the database.
"""

import dataclasses
import datetime
import functools
import json
import threading
import time

import numpy as np

from gantt.objects import base as objects_base
from gantt.objects import host_state as host_state_obj
from gantt.scheduler.intake import report_rules
from gantt.scheduler.state import aggregates as aggregates_mod
from gantt.scheduler.state import columns as columns_mod
from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import pci as pci_mod
from gantt.scheduler.state import provider_tree

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
    # float64 holding whole numbers (exact below 2**53): ``capacity - used``
    # then needs no conversion of the column on every filter pass
    used: np.ndarray
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
    # traits of a tree host's other providers (children): the root's own
    # are in ``traits``; false for a host that is one provider
    tree_traits: np.ndarray    # bool rows x traits
    aggregates: aggregates_mod.Membership   # rows per aggregate, sparse
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
    # keyed detail as columns (see gantt.scheduler.state.columns), NUMA
    # cells and PCI pools as columns, and their per-row originals for
    # host_passes
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
    # how many claim marks ``pending`` holds: none (the usual case) spares
    # every filter pass adding the whole column
    marks: int = 0

    @classmethod
    def empty(cls, rows=_INITIAL_ROWS, cols=_INITIAL_COLS):
        def obj():
            return np.empty(rows, dtype=object)

        def mat(dtype):
            return np.zeros((rows, cols), dtype=dtype, order="F")

        aggregates_index = columns_mod.KeyIndex()
        return cls(
            n=0,
            resource_classes=columns_mod.KeyIndex(),
            traits_index=columns_mod.KeyIndex(),
            aggregates_index=aggregates_index,
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
            allocation_ratio=mat(np.float64), used=mat(np.float64),
            pending=mat(np.int64),
            capacity=mat(np.float64), rc_bounds={},
            traits=mat(bool), tree_traits=mat(bool),
            aggregates=aggregates_mod.Membership(rows, aggregates_index),
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

    def grown(self, rows=None, rc_cols=None, trait_cols=None):
        """A new table with room for more rows and/or columns.

        Indexes are copied, not shared: a reader of the old table must never
        find a name whose column its arrays do not have.
        """
        rows = max(rows or 0, self.row_capacity)
        rc_cols = max(rc_cols or 0, self.total.shape[1])
        trait_cols = max(trait_cols or 0, self.traits.shape[1])
        fields = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                if value.ndim == 1:
                    grown = _grow(value, rows)
                    if f.name in ("cell", "zone"):
                        grown[value.shape[0]:] = -1
                elif f.name in ("traits", "tree_traits"):
                    grown = _grow(value, rows, trait_cols)
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
            elif isinstance(value, aggregates_mod.Membership):
                continue        # below, with the new aggregate index
            elif hasattr(value, "grown"):
                # column families (keyed detail, NUMA, PCI) grow themselves
                value = value.grown(rows)
            fields[f.name] = value
        fields["aggregates"] = self.aggregates.grown(
            rows, fields["aggregates_index"])
        return HostTable(**fields)

    def host_state(self, row, now, service_down_time):
        """The operator view of one row, as a HostState object (classes,
        traits and aggregates sorted: the same whatever order the worker
        learnt them in)."""
        resources = []
        names = self.resource_classes.names
        for col, rc in sorted(enumerate(names), key=lambda c: c[1]):
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
            traits=sorted(t for c, t in enumerate(self.traits_index.names)
                          if self.traits[row, c]),
            aggregates=sorted(self.aggregates.members(row)),
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
    # the agent's boot (None: it does not say); see report_rules.supersedes
    boot_id: str | None = None

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
                for child in node.child_providers),
            boot_id=node.boot_id)

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
        return self._fingerprint

    @functools.cached_property
    def _fingerprint(self):
        return hash((
            self.host, self.nodename, self.cell_uuid,
            self.availability_zone, self.disabled, self.num_instances,
            self.num_io_ops, _inventory_hash(self.inventories),
            self.traits, self.aggregates,
            _details_hash(self.capabilities, self.stats, self.metrics,
                          self.numa_cells, self.pci_pools),
            self.instance_uuids,
            tuple((c.uuid, c.name, c.parent_uuid,
                   _inventory_hash(c.inventories), c.traits, c.aggregates)
                  for c in self.children)))


# NOTE: a fingerprint hashes the hashes of the inventories and the details:
# a bulk load computes those once per distinct inventory and details, which
# many hosts share (see _Loading)


def _inventory_hash(inventories):
    return hash(tuple(sorted(inventories.items())))


def _details_hash(capabilities, stats, metrics, numa_cells, pci_pools):
    return hash((tuple(sorted(capabilities.items())),
                 tuple(sorted(stats.items())),
                 tuple(sorted(metrics.items())), numa_cells, pci_pools))


class HostStateCache:
    """The worker's in-memory copy of every host, kept fresh by reports."""

    def __init__(self, clock=time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self.table = HostTable.empty()
        # standalone provider uuid -> (report sequence, boot id) held
        self._standalone = {}
        # providers whose usage changed since the last usage sync began,
        # and during a sync those that had changed before it began (see
        # begin_usage_sync): only they can hold what the database does not
        self._moved = set()
        self._suspects = set()
        # host uuid -> the boot id of the report held (absent: None)
        self._boot_ids = {}

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
                or report.received_at - table.persisted_at[row] >= interval
                or report.boot_id != self._boot_ids.get(report.uuid))

    def supersedes(self, uuid, sequence, boot_id):
        """Whether a report of host ``uuid`` replaces the one held (see
        ``report_rules.supersedes``); True for a host not held."""
        table = self.table
        row = table.row_by_uuid.get(uuid)
        return row is None or report_rules.supersedes(
            sequence, boot_id, int(table.report_sequence[row]),
            self._boot_ids.get(uuid))

    def _supersedes(self, table, row, report):
        return report_rules.supersedes(
            report.report_sequence, report.boot_id,
            int(table.report_sequence[row]), self._boot_ids.get(report.uuid))

    def _hold_boot(self, report):
        if report.boot_id is None:
            self._boot_ids.pop(report.uuid, None)
        else:
            self._boot_ids[report.uuid] = report.boot_id

    def load_boot_ids(self, boot_ids):
        """The stored boot ids of the hosts (after :meth:`load`); a host
        whose report was cast meanwhile keeps that report's."""
        with self._lock:
            for uuid, boot_id in boot_ids.items():
                self._boot_ids.setdefault(uuid, boot_id)

    def host_holder(self, host, uuid):
        """The uuid of a compute node other than ``uuid`` that the cache
        holds as ``host``, or None."""
        table = self.table
        for row in table.rows_by_host.get(host, ()):
            if table.uuids[row] != uuid:
                return table.uuids[row]
        return None

    def retire_host_rows(self, host, uuid):
        """Compute node ``uuid`` now holds ``host`` (the database let it
        in, the former one was deleted): the rows of others under that
        name are disabled and no longer found by the name. They stay
        until the worker restarts, never placeable."""
        with self._lock:
            table = self.table
            rows = table.rows_by_host.get(host, [])
            for row in [r for r in rows if table.uuids[r] != uuid]:
                rows.remove(row)
                table.disabled[row] = True
                table.has_inventory[row] = False

    def reset_sequence(self, uuid):
        """Take the next report of host ``uuid`` whatever its sequence and
        boot (an operator's reset); False for a host not held."""
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(uuid)
            if row is None:
                return False
            table.report_sequence[row] = np.iinfo(np.int64).min
            self._boot_ids.pop(uuid, None)
            return True

    def apply_report(self, report, persisted=False):
        """Store a host report; False when it is not newer than the cache's.

        :param report: a :class:`HostReport`
        :param persisted: the database now holds this report's content
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            if row is not None and not self._supersedes(table, row, report):
                return False
            self._hold_boot(report)
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
            elif table.fingerprints[row] != report.fingerprint():
                # the row now holds content the database does not: no
                # fingerprint may claim it (see refresh_liveness)
                table.fingerprints[row] = None
            self.table = table
            return True

    def refresh_liveness(self, report):
        """Take a report whose content the row already holds: only its
        sequence and times are new (most reports: an agent repeating
        itself), so the row is not rewritten.

        :returns: True if taken, False if not newer than the cache's, None
            if the row does not hold exactly that content (then
            :meth:`apply_report` must take it)
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            # NOTE: a row's fingerprint is the persisted content's, and is
            # cleared whenever the row holds anything else (apply_report)
            if row is None or table.fingerprints[row] != report.fingerprint():
                return None
            if not self._supersedes(table, row, report):
                return False
            self._hold_boot(report)
            table.last_seen[row] = report.received_at
            table.report_sequence[row] = report.report_sequence
            table.updated_at[row] = report.updated_at
            return True

    def load(self, stored):
        """Store every host read from the database, in bulk.

        The same as ``apply_report(report, persisted=True)`` of each
        host's stored report, then ``apply_usage`` of the host and of the
        other providers of its tree, at the stored generations; but the
        hosts new to the cache and without children are written as whole
        columns, into a table grown once to exactly the hosts it will hold
        (no spare rows). A host the cache holds already (a report cast
        while loading) keeps the newer report, as apply_report decides.

        :param stored: a :class:`gantt.db.providers.StoredHosts`
        """
        loading = _Loading(stored)      # parsed outside the lock
        with self._lock:
            table = self.table
            fresh, others = loading.split(table.row_by_uuid)
            # room for the trees too, which are applied as reports
            new = len(fresh) + sum(
                stored.uuids[i] not in table.row_by_uuid for i in others)
            if fresh:
                self.table = _loaded_table(table, loading, fresh, new)
            elif table.n + new > table.row_capacity:
                self.table = table.grown(table.n + new)
        for i in others:
            # trees, and hosts whose report was cast meanwhile
            self.apply_report(stored_report(stored, i), persisted=True)
            self.apply_usage(stored.uuids[i], int(stored.generation[i]),
                             stored.usage_of(i))
            for child in stored.children.get(i, ()):
                self.apply_usage(child.uuid, child.generation, child.usage)

    def _make_room(self, table, report, new_row):
        """Return ``table``, or a grown copy if the report does not fit."""
        wanted = (
            (table.resource_classes, report.column_inventories),
            (table.traits_index, report.traits.union(
                *(child.traits for child in report.children))),
            (table.aggregates_index, report.aggregates
             | table.aggregate_set.listed_for(report.host)),
        )
        new = [[n for n in names if index.get(n) is None]
               for index, names in wanted]
        rows = table.row_capacity
        if new_row and table.n >= rows:
            rows = _more_rows(rows)
        rc_cols = _room(table.total.shape[1],
                        len(table.resource_classes) + len(new[0]))
        t_cols = _room(table.traits.shape[1],
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

    def _write_tree(self, table, row, report, was_tree):
        """Keep the provider index in step with a host's report."""
        index = table.providers
        table.tree_traits[row] = False
        for child in report.children:
            for trait in child.traits:
                table.tree_traits[row, table.traits_index.get(trait)] = True
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
        """The :class:`~.state.aggregates.AggregateSet` in use."""
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
            news = self._apply_usage(provider_uuid, generation, usages)
            if news:
                self._moved.add(provider_uuid)
            return news

    def _apply_usage(self, provider_uuid, generation, usages, force=False):
        table = self.table
        node = table.providers.get(provider_uuid)
        if node is not None:
            return self._apply_tree_usage(table, node, generation, usages,
                                          force)
        row = table.row_by_uuid.get(provider_uuid)
        if row is None:
            return False
        if force:
            if table.generation[row] == generation and (
                    provider_tree.same_usage(_row_usage(table, row),
                                              _known(table, usages))):
                return False
        elif table.generation[row] >= generation:
            return False
        table.generation[row] = generation
        _write_usage(table, row, usages)
        return True

    @staticmethod
    def _apply_tree_usage(table, node, generation, usages, force=False):
        """A provider of a tree, or a standalone one, changed usage."""
        index = table.providers
        if not index.apply_usage(node.uuid, generation, usages, force):
            return False
        row = table.row_by_uuid.get(node.root_uuid)
        if row is not None:
            if node.uuid == node.root_uuid:
                table.generation[row] = generation
            _write_tree_usage(table, row, index.tree(node.root_uuid))
        return True

    # -- usage sync: the database overrides what peers said ---------------

    def begin_usage_sync(self):
        """Call before reading usage from the database for
        :meth:`finish_usage_sync`: usage news from now on may be newer
        than what the read returns."""
        with self._lock:
            # a sync whose read failed left its suspects: they stay
            self._suspects |= self._moved
            self._moved = set()

    def finish_usage_sync(self, stored):
        """Make the database's usage the cache's (a usage sync).

        A provider whose usage changed since :meth:`begin_usage_sync`
        (a claim or peer cast the read may predate) takes the stored
        state only if it is newer, as :meth:`apply_usage`. Every other
        provider takes exactly the stored generation and usage, whatever
        generation it held: a legitimate change is committed before any
        cache hears of it, so a cached state the database does not hold
        came from a forged or corrupted peer cast, and must not outlive
        the sync. Only a provider whose usage changed between the
        previous sync and this one can hold such a state (the others hold
        what the previous sync read), so only those are compared.

        :param stored: ``{provider uuid: (generation, {class: used})}``
            as read after :meth:`begin_usage_sync`
        :returns: the uuids whose cached state contradicted the database
            (a generation at or above the stored one with other usage)
        """
        contradicted = []
        for uuid, (generation, usage) in stored.items():
            with self._lock:
                if (uuid in self._suspects and uuid not in self._moved
                        and self._held_generation(uuid) >= generation):
                    if self._apply_usage(uuid, generation, usage,
                                         force=True):
                        contradicted.append(uuid)
                else:
                    self._apply_usage(uuid, generation, usage)
        with self._lock:
            self._suspects = set()
        return contradicted

    def _held_generation(self, uuid):
        table = self.table
        node = table.providers.get(uuid)
        if node is not None:
            return node.generation
        row = table.row_by_uuid.get(uuid)
        return -1 if row is None else int(table.generation[row])

    # -- standalone providers ----------------------------------------------

    def apply_provider(self, provider, report_sequence, boot_id=None):
        """Store a standalone provider's report (a sharing pool…); False
        when it does not supersede the one held
        (``report_rules.supersedes``).

        :param provider: a :class:`provider_tree.Provider` (its own root)
        """
        with self._lock:
            held = self._standalone.get(provider.uuid)
            if held is not None and not report_rules.supersedes(
                    report_sequence, boot_id, *held):
                return False
            table = self.table
            table.providers.set_tree(provider.uuid, [provider])
            self._standalone[provider.uuid] = (report_sequence, boot_id)
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
        for uuid in sorted(sharing - set(table.aggregates_index.names)):
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
        # NOTE: counted after the amounts are written: a reader that sees
        # no mark then reads a moment before the claim, never half of it
        table.marks += sign

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
            # by name: the rows the name finds (not retired ones)
            named = {r for h in wanted for r in table.rows_by_host.get(h, ())}
            rows = [r for r in rows if r in named
                    or table.uuids[r] in wanted]
        return [table.host_state(r, now, service_down_time) for r in rows]

    def now(self):
        return self._clock()


def _row_usage(table, row):
    names = table.resource_classes.names
    return {names[c]: int(table.used[row, c])
            for c in np.flatnonzero(table.used[row, :len(names)])}


def _known(table, usages):
    """``usages`` but the classes the table has no column for."""
    return {rc: a for rc, a in usages.items()
            if table.resource_classes.get(rc) is not None}


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
    listed = table.aggregate_set.listed_for(table.hosts[row])
    reported = table.reported_aggregates[row]
    table.aggregates.write(row, reported | listed if listed else reported)


def _more_rows(rows):
    """The row capacity after ``rows``: an eighth more (a table loaded
    exactly to size must not double for its next host)."""
    return rows + max(_INITIAL_ROWS, rows // 8)


def _room(allocated, needed):
    if needed <= allocated:
        return allocated
    while allocated < needed:
        allocated *= 2
    return allocated


# -- loading from the database ------------------------------------------------


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


def _instance_uuids(text):
    return None if text is None else frozenset(json.loads(text))


def stored_provider(stored, root_uuid):
    """A provider_tree.Provider from a database StoredProvider."""
    return provider_tree.Provider(
        uuid=stored.uuid, name=stored.name, parent_uuid=stored.parent_uuid,
        root_uuid=root_uuid, inventories=dict(stored.inventories),
        traits=frozenset(stored.traits),
        aggregates=frozenset(stored.aggregates))


def stored_report(stored, i):
    """Host ``i`` of a StoredHosts as a :class:`HostReport` (what the cache
    holds of it once loaded)."""
    caps, stats, metrics, numa_cells, pci_pools = _report_details(
        stored.details(i))
    uuid = stored.uuids[i]
    return HostReport(
        uuid=uuid, host=stored.hosts[i], nodename=stored.nodenames[i],
        cell_uuid=stored.cell_uuids[i], availability_zone=stored.zones[i],
        disabled=bool(stored.disabled[i]),
        report_sequence=int(stored.report_sequence[i]),
        num_instances=int(stored.num_instances[i]),
        num_io_ops=int(stored.num_io_ops[i]),
        inventories=dict(stored.inventories(i)), traits=stored.traits(i),
        aggregates=stored.aggregates(i), capabilities=caps, stats=stats,
        metrics=metrics, updated_at=stored.agent_updated_at[i],
        received_at=stored.received(i).replace(
            tzinfo=datetime.timezone.utc).timestamp(),
        instance_uuids=_instance_uuids(stored.instance_uuids[i]),
        numa_cells=numa_cells, pci_pools=pci_pools,
        children=tuple(stored_provider(c, uuid)
                       for c in stored.children.get(i, ())))


class _Loading:
    """A StoredHosts prepared for :meth:`HostStateCache.load`: details
    parsed once per distinct text, and the fingerprints of the hosts
    without children (as their stored reports')."""

    def __init__(self, stored):
        self.stored = stored
        self.details = [_report_details(t) for t in stored.detail_texts]
        self.fingerprints = self._fingerprints()

    def _fingerprints(self):
        """HostReport.fingerprint of each host's stored report, were it
        without children (a tree's is not used: see HostStateCache.load).
        """
        stored = self.stored
        inventories = [_inventory_hash(inv) for inv in stored.inventory_sets]
        details = [_details_hash(*d) for d in self.details]
        traits, aggregates = stored.trait_sets, stored.aggregate_sets
        iu = (map(_instance_uuids, stored.instance_uuids)
              if any(stored.instance_uuids)
              else [None] * len(stored))
        return [hash(
            (host, node, cell, zone, disabled, instances, io_ops,
             inventories[inv], traits[trait], aggregates[agg],
             details[detail], instance_uuids, ()))
            for (host, node, cell, zone, disabled, instances, io_ops, inv,
                 trait, agg, detail, instance_uuids) in zip(
                stored.hosts, stored.nodenames, stored.cell_uuids,
                stored.zones, stored.disabled.tolist(),
                stored.num_instances.tolist(), stored.num_io_ops.tolist(),
                stored.inventory_codes.tolist(),
                stored.trait_codes.tolist(),
                stored.aggregate_codes.tolist(),
                stored.detail_codes.tolist(), iu, strict=True)]

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


def _loaded_table(table, loading, fresh, new_rows):
    """``table`` grown to hold ``new_rows`` more hosts, with the hosts
    ``fresh`` of ``loading`` written at its end (the caller holds the
    cache's lock; the new table is not published yet)."""
    stored = loading.stored
    pick = np.array(fresh, dtype=np.int64)
    rcs = _used_names(stored.inventory_sets, stored.inventory_codes[pick])
    traits = _used_names(stored.trait_sets, stored.trait_codes[pick])
    table = table.grown(
        table.n + new_rows,
        _room(table.total.shape[1], len(
            set(table.resource_classes.names) | set(rcs))),
        _room(table.traits.shape[1], len(
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
    table.last_seen[start:end] = stored.received_at[pick]
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
        for rc, fields in sets[k].items():
            col = index.get(rc)
            has[k, col] = True
            ints[:, k, col] = fields[:5]
            ratio[k, col] = fields[5]
            # as _write_row computes it, in Python floats
            capacity[k, col] = (fields[0] - fields[1]) * fields[5]
        _fold_bounds(table.rc_bounds, index, sets[k])
    end = start + len(pick)
    table.has_inventory[start:end] = has[codes]
    for k, name in enumerate(("total", "reserved", "min_unit", "max_unit",
                              "step_size")):
        getattr(table, name)[start:end] = ints[k][codes]
    table.allocation_ratio[start:end] = ratio[codes]
    table.capacity[start:end] = capacity[codes]


def _fold_bounds(bounds, index, inventories):
    """Widen ``rc_bounds`` by one row's inventories (see _write_row)."""
    for rc, (_t, _r, min_u, max_u, step, _a) in inventories.items():
        col = index.get(rc)
        low, high, steps = bounds.get(col, (min_u, max_u, step))
        bounds[col] = (max(low, min_u), min(high, max_u), max(steps, step))


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
