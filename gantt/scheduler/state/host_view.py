"""HostView: one request's fixed window on the host table.

The view pins the number of live rows when the request starts, so every
column a filter or weigher reads has the same length, and it keeps the
usage this request has already claimed (instance 0 of a multi-instance
request must make instance 1 see less room) without copying the table.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class ResourceSlot:
    """One resource class of one host, as a per-host filter sees it."""

    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float
    used: int

    @property
    def capacity(self):
        return (self.total - self.reserved) * self.allocation_ratio

    @property
    def free(self):
        return self.capacity - self.used

    def fits(self, amount):
        """Placement's rule for one allocation of ``amount``."""
        return (self.min_unit <= amount <= self.max_unit
                and amount % self.step_size == 0
                and self.free >= amount)


@dataclasses.dataclass(frozen=True)
class HostRecord:
    """One host, materialised for plugins that work host by host."""

    row: int
    uuid: str
    host: str
    nodename: str
    cell_uuid: str | None
    availability_zone: str | None
    disabled: bool
    up: bool
    num_instances: int
    num_io_ops: int
    resources: dict          # resource class -> ResourceSlot
    traits: frozenset
    aggregates: frozenset
    capabilities: dict
    stats: dict
    metrics: dict
    # the definitions (metadata) of the aggregates the host is in
    aggregate_infos: tuple = ()
    numa_cells: tuple = ()      # of numa.HostCell
    pci_pools: tuple = ()       # of pci.Pool
    # more than one provider (children or a sharing provider): resources
    # hold the tree-wide sums, the solver decides the exact fit
    tree: bool = False
    # a sharing provider serves it (it may lack a class locally)
    shared: bool = False
    # a tree's usage above the capacity of its own providers, by class
    # (see HostView.tree_excess)
    tree_excess: dict = dataclasses.field(default_factory=dict)
    # the instance a container host runs in (ProviderReport.instance_uuid)
    instance_uuid: str | None = None

    def ratio(self, resource_class):
        """The allocation ratio of a class (1.0 when not offered)."""
        slot = self.resources.get(resource_class)
        return 1.0 if slot is None else slot.allocation_ratio


class HostView:
    """Columns of the first ``n`` rows of a table, plus local consumption."""

    def __init__(self, table, now, service_down_time):
        self.table = table
        self.n = table.n
        self.now = now
        self.service_down_time = service_down_time
        # the aggregate definitions this request sees, taken once
        self.aggregates = table.aggregate_set
        # row -> {column: amount} claimed by earlier instances of this request
        self._consumed = {}
        # column -> free capacity, shared by the resource filter and weighers
        self._free = {}
        # other columns derived once per filter pass (see memo)
        self._memo = {}

    # -- identity ---------------------------------------------------------

    @property
    def hosts(self):
        return self.table.hosts[:self.n]

    @property
    def nodenames(self):
        return self.table.nodenames[:self.n]

    @property
    def uuids(self):
        return self.table.uuids[:self.n]

    def column(self, name):
        """The live part of a 1-d table column (``disabled``, ``zone``…)."""
        return getattr(self.table, name)[:self.n]

    def row_of(self, uuid):
        row = self.table.row_by_uuid.get(uuid)
        return row if row is not None and row < self.n else None

    def rows_of_hosts(self, names):
        """Boolean mask of the rows of the hosts named in ``names``."""
        mask = np.zeros(self.n, dtype=bool)
        index = self.table.rows_by_host
        for name in names:
            for row in index.get(name, ()):
                if row < self.n:
                    mask[row] = True
        return mask

    def domains(self, level):
        """Per row its domain code at ``level`` (-1: unknown). At
        ``host``, rows of one host name share a code (server groups count
        members by host name)."""
        if level != "host":
            return self.table.domains(level)[:self.n]
        return self.memo(("domains", level), lambda: np.unique(
            self.hosts.astype(str), return_inverse=True)[1].astype(
                np.int32))

    def row_of_host(self, name):
        """The first live row of host ``name`` (None: not held)."""
        rows = [r for r in self.table.rows_by_host.get(name, ())
                if r < self.n]
        return rows[0] if rows else None

    def rows_of_hosts_any_case(self, names):
        """Like :meth:`rows_of_hosts`, with host names compared
        case-insensitively, as Nova matches ``ignore_hosts`` and
        ``force_hosts``."""
        wanted = {name.lower() for name in names}
        return self.rows_of_hosts([host for host in self.table.rows_by_host
                                   if host.lower() in wanted])

    def of_kinds(self, kinds):
        """Boolean mask of the rows whose provider is of one of ``kinds``,
        or None when every row is (no other kind was ever held: the
        common, compute-only cloud pays nothing)."""
        index = self.table.kinds_index
        if set(index.names) <= kinds:
            return None
        codes = [index.get(k) for k in kinds if index.get(k) is not None]
        column = self.column("kind")
        if len(codes) == 1:
            return column == codes[0]       # one kind: the usual case
        return np.isin(column, codes)

    def zone_code(self, zone):
        code = self.table.zones_index.get(zone)
        return -2 if code is None else code

    def cell_code(self, cell_uuid):
        code = self.table.cells_index.get(cell_uuid)
        return -2 if code is None else code

    def cell_uuid(self, row):
        code = int(self.table.cell[row])
        return self.table.cells_index.names[code] if code >= 0 else None

    # -- status -----------------------------------------------------------

    def up(self):
        """Hosts that reported within ``service_down_time`` (or within
        their own lease: see ``HostTable.lease``)."""
        age = self.now - self.table.last_seen[:self.n]
        if not self.table.leased:
            return age <= self.service_down_time
        lease = self.table.lease[:self.n]
        return age <= np.where(lease > 0, lease, self.service_down_time)

    # -- resources --------------------------------------------------------

    def rc_column(self, resource_class):
        col = self.table.resource_classes.get(resource_class)
        if col is None or col >= self.table.total.shape[1]:
            return None
        return col

    def inventory(self, name, col):
        """A live slice of one resource matrix (``total``, ``min_unit``…)."""
        return getattr(self.table, name)[:self.n, col]

    def used(self, col):
        """Committed usage, plus claims in flight in this worker, plus
        what this request has claimed itself (may be the table's own
        column: do not modify it)."""
        t = self.table
        used = t.used[:self.n, col]
        if t.marks:
            used = used + t.pending[:self.n, col]
        elif self._consumed:
            used = used.copy()
        if self._consumed:
            for row, amounts in self._consumed.items():
                used[row] += amounts.get(col, 0)
        return used

    def capacity(self, col):
        """``(total - reserved) * allocation_ratio``, kept by the cache."""
        return self.table.capacity[:self.n, col]

    def new_pass(self):
        """Forget derived columns: the table's usage may have changed (a
        claim of this request) since the last filter pass."""
        self._free.clear()
        self._memo.clear()

    def memo(self, key, build):
        """``build()`` once per filter pass (a filter's ``passes_columns``
        and its ``explain`` share their columns this way)."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = build()
        return value

    def free(self, col):
        """``capacity - used`` of a class column, found once per filter
        pass (see :meth:`new_pass`); do not modify the array."""
        free = self._free.get(col)
        if free is None:
            free = self.kept_free("free", col)
            if free is None:
                free = self.capacity(col) - self.used(col)
            self._free[col] = free
        return free

    def kept_free(self, name, col):
        """The table's kept room column ``name`` (``free``,
        ``free_unreserved``, ``free_overcommitted``: see HostTable) of a
        class, when the committed usage is all there is to count; None
        when claims in flight or this request's own add to it (then the
        caller subtracts :meth:`used`, as the kept column would not give
        the same digits). The table's own array, read live: do not modify
        it."""
        if self.table.marks or self._consumed:
            return None
        return getattr(self.table, name)[:self.n, col]

    def fits(self, resource_class, amount):
        """Rows that can take one allocation of ``amount`` of a class."""
        col = self.rc_column(resource_class)
        if col is None:
            return np.zeros(self.n, dtype=bool)
        t = self.table
        n = self.n
        mask = self.free(col) >= amount
        mask &= t.has_inventory[:n, col]
        # unit checks every row is known to pass (see rc_bounds) are skipped
        low, high, step = t.rc_bounds.get(col, (None, None, None))
        if low is None or amount < low:
            mask &= t.min_unit[:n, col] <= amount
        if high is None or amount > high:
            mask &= t.max_unit[:n, col] >= amount
        if step is None or step > 1:
            mask &= amount % np.maximum(t.step_size[:n, col], 1) == 0
        return mask

    def consumed_at(self, row):
        """``{column: amount}`` this request has claimed on ``row``."""
        return self._consumed.get(row, {})

    def consume(self, row, resources):
        """Count a claim made by this request against ``row``."""
        self.new_pass()
        slot = self._consumed.setdefault(row, {})
        for rc, amount in resources.items():
            col = self.rc_column(rc)
            if col is not None:
                slot[col] = slot.get(col, 0) + amount

    def note_claim(self, row, resources, generations, held=()):
        """Make this view count a claim committed by this request.

        The claim's usage (with its generation) went into the cache's
        table, which the view reads live: counting it again would halve
        the room later instances see. Only if this view's table missed it
        (the cache swapped in a grown table first) does the view count
        the claim itself.

        :param generations: ``{provider uuid: generation}`` the claim
            committed
        :param held: ``[(row, resources)]`` an old claim this one replaced:
            once the table shows it released, the view's own allowance
            for it (see :meth:`consume` with negative amounts) must go
        """
        seen = generations.get(self.uuids[row])
        if seen is not None and self.table.generation[row] < seen:
            self.consume(row, resources)
        for old_row, old in held:
            seen = generations.get(self.uuids[old_row])
            if seen is not None and self.table.generation[old_row] >= seen:
                self.consume(old_row, old)

    # -- provider trees ---------------------------------------------------

    def tree_rows(self):
        """Rows whose host is more than one provider: a tree with children,
        or a root that a sharing provider serves through an aggregate.

        Columns hold such a host's tree-wide sums; which provider gives
        what is for the allocation-candidates solver to say.
        """
        return self.memo(("tree rows",), self._tree_rows)

    def _tree_rows(self):
        return self.table.tree[:self.n] | self.shared_rows()

    def shared_rows(self):
        """Rows in an aggregate of a sharing provider: such a host may get
        a class it lacks (or has too little of) from the sharing one (a
        shared, read-only array)."""
        aggregates = self.table.sharing_aggregates
        # memberships alone decide it: kept until one changes (a cloud
        # with a pool per rack would otherwise merge hundreds of sparse
        # columns on every filter pass)
        return self.table.aggregates.derived(
            ("any of", aggregates), self.n,
            lambda: self.in_any_aggregate(aggregates))

    def tree_excess(self, row):
        """``{class: amount}`` a tree's providers hold above their own
        capacity (Placement keeps usage over a shrunk inventory).

        The row's used column sums every provider's usage, so such an
        excess would hide room its siblings have; a bound on the tree's
        room adds it back. Empty for a host that is one provider.
        """
        excess = {}
        for provider in self.table.providers.tree(self.uuids[row]):
            for rc in provider.usage:
                over = -provider.free(rc)
                if over > 0:
                    excess[rc] = excess.get(rc, 0) + over
        return excess

    def root_of(self, provider_uuid):
        """The uuid of the root of the tree ``provider_uuid`` belongs to."""
        node = self.table.providers.get(provider_uuid)
        return provider_uuid if node is None else node.root_uuid

    # -- memberships ------------------------------------------------------

    def has_trait(self, trait):
        col = self.table.traits_index.get(trait)
        if col is None or col >= self.table.traits.shape[1]:
            return np.zeros(self.n, dtype=bool)
        return self.table.traits[:self.n, col]

    def in_tree_has_trait(self, trait):
        """Rows whose tree has ``trait`` on some provider, root or child
        (a new array)."""
        col = self.table.traits_index.get(trait)
        if col is None or col >= self.table.traits.shape[1]:
            return np.zeros(self.n, dtype=bool)
        return (self.table.traits[:self.n, col]
                | self.table.tree_traits[:self.n, col])

    def sharing_traits(self):
        """Every trait some sharing provider of the cloud has."""
        return self.memo(("sharing traits",), lambda: frozenset().union(
            *(p.traits for p in map(self.table.providers.get,
                                    self.table.sharing_providers)
              if p is not None)))

    def in_aggregate(self, aggregate):
        """Rows in ``aggregate`` (may be the table's own array: do not
        modify it)."""
        col = self.table.aggregates_index.get(aggregate)
        if col is None:
            return np.zeros(self.n, dtype=bool)
        return self.table.aggregates.column(col, self.n)

    def in_any_aggregate(self, aggregates):
        """Rows in any of ``aggregates`` (a new array)."""
        index = self.table.aggregates_index
        cols = [c for c in map(index.get, aggregates) if c is not None]
        return self.table.aggregates.any_of(cols, self.n)

    def ratio(self, resource_class):
        """Per row: the allocation ratio of a class (1.0 where absent)."""
        col = self.rc_column(resource_class)
        if col is None:
            return np.ones(self.n)
        return np.where(self.inventory("has_inventory", col),
                        self.inventory("allocation_ratio", col), 1.0)

    # -- keyed detail -----------------------------------------------------

    def capability(self, key, func, missing, dtype=bool, meaning=None):
        """Per row: ``func(value)`` of capability ``key``, once per distinct
        value; ``missing`` where a host does not report it. With a
        ``meaning`` (see StringColumns.evaluate) the column is shared and
        read-only."""
        return self.table.capability_columns.evaluate(
            key, self.n, func, missing, dtype, meaning)

    def stat(self, key, func, missing, dtype=bool, meaning=None):
        """Like :meth:`capability`, for the reported ``stats``."""
        return self.table.stat_columns.evaluate(key, self.n, func, missing,
                                                dtype, meaning)

    def metric(self, name):
        """Per row: the metric's value, NaN where it is not reported."""
        return self.table.metric_columns.column(name, self.n)

    # -- per host ---------------------------------------------------------

    def record(self, row):
        """A :class:`HostRecord` for ``row`` (for per-host plugins)."""
        t = self.table
        resources = {}
        consumed = self._consumed.get(row, {})
        ncols = t.total.shape[1]
        for col, rc in enumerate(t.resource_classes.names):
            if col >= ncols or not t.has_inventory[row, col]:
                continue
            resources[rc] = ResourceSlot(
                total=int(t.total[row, col]),
                reserved=int(t.reserved[row, col]),
                min_unit=int(t.min_unit[row, col]),
                max_unit=int(t.max_unit[row, col]),
                step_size=int(t.step_size[row, col]),
                allocation_ratio=float(t.allocation_ratio[row, col]),
                used=(int(t.used[row, col]) + int(t.pending[row, col])
                      + consumed.get(col, 0)))
        zone = int(t.zone[row])
        aggregates = t.aggregates.members(row)
        return HostRecord(
            row=row, uuid=t.uuids[row], host=t.hosts[row],
            nodename=t.nodenames[row], cell_uuid=self.cell_uuid(row),
            availability_zone=(t.zones_index.names[zone]
                               if zone >= 0 else None),
            disabled=bool(t.disabled[row]),
            up=t.is_up(row, self.now, self.service_down_time),
            num_instances=int(t.num_instances[row]),
            num_io_ops=int(t.num_io_ops[row]),
            resources=resources,
            traits=frozenset(_members(t.traits_index.names, t.traits, row)),
            aggregates=aggregates,
            capabilities=t.capabilities[row] or {},
            stats=t.stats[row] or {},
            metrics=t.metrics[row] or {},
            aggregate_infos=tuple(
                self.aggregates.by_uuid[name] for name in sorted(aggregates)
                if name in self.aggregates.by_uuid),
            numa_cells=t.numa_cells[row] or (),
            pci_pools=t.pci_pools[row] or (),
            tree=bool(self.tree_rows()[row]),
            shared=bool(self.shared_rows()[row]),
            tree_excess=self.tree_excess(row) if t.tree[row] else {},
            instance_uuid=t.instance_links[row],
        )


def _members(names, matrix, row):
    """The names of the columns set in ``matrix[row]``."""
    names = list(names)
    width = min(len(names), matrix.shape[1])
    return [names[c] for c in np.flatnonzero(matrix[row, :width])]
