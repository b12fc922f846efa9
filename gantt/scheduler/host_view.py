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
                and self.used + amount <= self.capacity)


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


class HostView:
    """Columns of the first ``n`` rows of a table, plus local consumption."""

    def __init__(self, table, now, service_down_time):
        self.table = table
        self.n = table.n
        self.now = now
        self.service_down_time = service_down_time
        # row -> {column: amount} claimed by earlier instances of this request
        self._consumed = {}

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
        """Hosts that reported within ``service_down_time``."""
        return (self.now - self.table.last_seen[:self.n]) <= (
            self.service_down_time)

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
        used = self.table.used[:self.n, col]
        if self._consumed:
            used = used.copy()
            for row, amounts in self._consumed.items():
                used[row] += amounts.get(col, 0)
        return used

    def capacity(self, col):
        t = self.table
        n = self.n
        return (t.total[:n, col] - t.reserved[:n, col]) * (
            t.allocation_ratio[:n, col])

    def free(self, col):
        return self.capacity(col) - self.used(col)

    def fits(self, resource_class, amount):
        """Rows that can take one allocation of ``amount`` of a class."""
        col = self.rc_column(resource_class)
        if col is None:
            return np.zeros(self.n, dtype=bool)
        t = self.table
        n = self.n
        return (t.has_inventory[:n, col]
                & (t.min_unit[:n, col] <= amount)
                & (t.max_unit[:n, col] >= amount)
                & (amount % np.maximum(t.step_size[:n, col], 1) == 0)
                & (self.used(col) + amount <= self.capacity(col)))

    def consume(self, row, resources):
        """Count a claim made by this request against ``row``."""
        slot = self._consumed.setdefault(row, {})
        for rc, amount in resources.items():
            col = self.rc_column(rc)
            if col is not None:
                slot[col] = slot.get(col, 0) + amount

    # -- memberships ------------------------------------------------------

    def has_trait(self, trait):
        col = self.table.traits_index.get(trait)
        if col is None or col >= self.table.traits.shape[1]:
            return np.zeros(self.n, dtype=bool)
        return self.table.traits[:self.n, col]

    def in_aggregate(self, aggregate):
        col = self.table.aggregates_index.get(aggregate)
        if col is None or col >= self.table.aggregates.shape[1]:
            return np.zeros(self.n, dtype=bool)
        return self.table.aggregates[:self.n, col]

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
                used=int(t.used[row, col]) + consumed.get(col, 0))
        zone = int(t.zone[row])
        return HostRecord(
            row=row, uuid=t.uuids[row], host=t.hosts[row],
            nodename=t.nodenames[row], cell_uuid=self.cell_uuid(row),
            availability_zone=(t.zones_index.names[zone]
                               if zone >= 0 else None),
            disabled=bool(t.disabled[row]),
            up=bool(self.now - t.last_seen[row] <= self.service_down_time),
            num_instances=int(t.num_instances[row]),
            num_io_ops=int(t.num_io_ops[row]),
            resources=resources,
            traits=frozenset(
                name for c, name in enumerate(t.traits_index.names)
                if c < t.traits.shape[1] and t.traits[row, c]),
            aggregates=frozenset(
                name for c, name in enumerate(t.aggregates_index.names)
                if c < t.aggregates.shape[1] and t.aggregates[row, c]),
            capabilities=t.capabilities[row] or {},
            stats=t.stats[row] or {},
            metrics=t.metrics[row] or {},
        )
