"""HostTable: every host the worker knows, as numpy columns.

One row per host (a resource-provider tree root), one column per resource
class or trait; aggregate membership is kept sparse (see
:class:`~gantt.scheduler.state.aggregates.Membership`). Filters and
weighers read whole columns at once.

A table never shrinks nor moves its arrays: when a host, class or trait
does not fit, :meth:`HostTable.grown` copies it into bigger arrays, and the
cache (:mod:`gantt.scheduler.state.cache`) publishes the copy. Rows are
written by :mod:`gantt.scheduler.state.rows` (one host) and
:mod:`gantt.scheduler.state.load` (many, at start).
"""

import dataclasses

import numpy as np

from gantt.objects import host_state as host_state_obj
from gantt.scheduler.state import aggregates as aggregates_mod
from gantt.scheduler.state import columns as columns_mod
from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import pci as pci_mod
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import topology as topology_mod

_INITIAL_ROWS = 64
_INITIAL_COLS = 8
#: the kind of every compute node, code 0 of ``HostTable.kinds_index``
COMPUTE = "compute"
#: ``HostTable.kind`` of a row whose standalone provider is gone
NO_KIND = -1


def _grow(array, rows, cols=None):
    """A copy of ``array`` padded to ``rows`` (x ``cols``) with 0 or None."""
    shape = (rows,) if array.ndim == 1 else (rows, cols)
    # object columns (uuids, hosts…) must pad with None like empty() does:
    # rows.write_row takes any non-None host of a row as its previous owner
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
    # what each row is: an index into kinds_index ("compute" is 0, so
    # rows written in bulk are compute nodes); NO_KIND for a standalone
    # provider's row after it was deleted or retired (no request
    # considers it, operators no longer see it)
    kinds_index: columns_mod.KeyIndex
    kind: np.ndarray           # int32
    # standalone providers: the owning service, the instance it runs in
    # (as reported, and as an index into ``links_index``, -1 for none:
    # the column a request naming an instance is looked up in)
    services: list
    instance_links: list
    links_index: columns_mod.KeyIndex
    instance_link: np.ndarray  # int32
    # status
    disabled: np.ndarray       # bool
    last_seen: np.ndarray      # float64 epoch seconds of the last report
    # seconds a sign of life keeps the row up, 0 for ``service_down_time``
    # (a compute node the REST API made a host: ``[api]
    # compute_node_down_time``, inf when that is 0); ``leased`` says
    # whether any row has one (else up() reads one column less)
    lease: np.ndarray          # float64
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
    # the room left, kept with the inventory and the usage (rows.write_room)
    # so that a filter pass reads it rather than subtracting whole columns:
    # ``capacity - used`` (Placement's), ``total - reserved - used`` and
    # ``total * allocation_ratio - used`` (Nova's RAM/disk and CPU
    # weighers'), each as that expression gives it
    free: np.ndarray           # float64
    free_unreserved: np.ndarray    # float64
    free_overcommitted: np.ndarray  # float64
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
    # failure domains: each row's Location (report's, filled from
    # topology aggregates) and its domain codes per level
    locations: list = None
    topology: topology_mod.DomainColumns = None
    reported_locations: list = None     # per row: the report's text

    # how many claim marks ``pending`` holds: none (the usual case) spares
    # every filter pass adding the whole column
    marks: int = 0
    # whether any row has a lease (see ``lease``)
    leased: bool = False

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
            kinds_index=columns_mod.KeyIndex([COMPUTE]),
            kind=np.zeros(rows, dtype=np.int32),
            services=[None] * rows, instance_links=[None] * rows,
            links_index=columns_mod.KeyIndex(),
            instance_link=np.full(rows, -1, dtype=np.int32),
            disabled=np.zeros(rows, dtype=bool),
            last_seen=np.zeros(rows), lease=np.zeros(rows),
            report_sequence=np.zeros(rows, np.int64),
            generation=np.zeros(rows, np.int64),
            num_instances=np.zeros(rows, np.int64),
            num_io_ops=np.zeros(rows, np.int64),
            has_inventory=mat(bool), total=mat(np.int64),
            reserved=mat(np.int64), min_unit=mat(np.int64),
            max_unit=mat(np.int64), step_size=mat(np.int64),
            allocation_ratio=mat(np.float64), used=mat(np.float64),
            pending=mat(np.int64),
            capacity=mat(np.float64), free=mat(np.float64),
            free_unreserved=mat(np.float64),
            free_overcommitted=mat(np.float64), rc_bounds={},
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
            locations=[topology_mod.NOWHERE] * rows,
            topology=topology_mod.DomainColumns(rows),
            reported_locations=[None] * rows,
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
                    if f.name in ("cell", "zone", "instance_link"):
                        grown[value.shape[0]:] = -1
                elif f.name in ("traits", "tree_traits"):
                    grown = _grow(value, rows, trait_cols)
                else:
                    grown = _grow(value, rows, rc_cols)
                value = grown
            elif f.name == "locations":
                value = value + [topology_mod.NOWHERE] * (rows - len(value))
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

    def domains(self, level):
        """Domain codes at ``level`` for the live rows ``[0, n)``, -1 where
        a row's location does not name that level (see
        :class:`~gantt.scheduler.state.topology.DomainColumns`); at
        ``zone``, the reported availability zone's code."""
        if level == topology_mod.ZONE:
            return self.zone[:self.n]
        return self.topology.domains(level, self.n)

    def set_location(self, row, location):
        """Record row ``row``'s effective location."""
        self.locations[row] = location
        self.topology.set(row, location)

    def kind_of(self, row):
        """The kind of row ``row`` (None for a row no longer held)."""
        code = int(self.kind[row])
        return None if code < 0 else self.kinds_index.names[code]

    def is_empty(self, row):
        """Nothing allocated on row ``row`` (nor marked by a claim)."""
        width = self.used.shape[1]
        return not (self.used[row, :width].any()
                    or self.pending[row, :width].any())

    def is_up(self, row, now, service_down_time):
        """Whether row ``row`` was heard from recently enough."""
        window = self.lease[row] or service_down_time
        return bool(now - self.last_seen[row] <= window)

    def host_state(self, row, now, service_down_time, vacancy_kinds=()):
        """The operator view of one row, as a HostState object (classes,
        traits and aggregates sorted: the same whatever order the worker
        learnt them in).

        :param vacancy_kinds: the kinds whose empty providers are vacant
        """
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
            up=self.is_up(row, now, service_down_time),
            disabled=bool(self.disabled[row]),
            kind=self.kind_of(row), service=self.services[row],
            capabilities=dict(self.capabilities[row] or {}),
            instance_uuid=self.instance_links[row],
            location=str(self.locations[row]) or None,
            vacant=(self.kind_of(row) in vacancy_kinds
                    and self.is_empty(row)),
        )


def more_rows(rows):
    """The row capacity after ``rows``: an eighth more (a table loaded
    exactly to size must not double for its next host)."""
    return rows + max(_INITIAL_ROWS, rows // 8)


def room(allocated, needed):
    """Columns to allocate for ``needed``: ``allocated``, doubled until
    it holds them."""
    if needed <= allocated:
        return allocated
    while allocated < needed:
        allocated *= 2
    return allocated
