"""HostUpdate: one host's report as the cache takes it, and Inventory.

What the agent sent (a ComputeNode) or the database holds (a stored
report, see :mod:`gantt.scheduler.state.load`), in the shape the cache
writes into a table row: plain values, frozen, with a fingerprint that
tells whether two updates say the same thing.

(The name: ``gantt.db.models.HostReport`` is the table a report is stored
in, ``gantt.objects.ProviderReport`` a standalone provider's report.)
"""

import dataclasses
import datetime
import functools
import math
import typing

from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import pci as pci_mod
from gantt.scheduler.state import provider_tree


class Inventory(typing.NamedTuple):
    """One resource class of a provider, as reported.

    A tuple, so that it hashes into fingerprints and is built in bulk at
    start as cheaply as one (``Inventory(*fields)``).
    """

    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float

    @property
    def capacity(self):
        """What can be allocated: ``(total - reserved) * ratio``."""
        return (self.total - self.reserved) * self.allocation_ratio


def inventories_of(inventories):
    """Inventory objects (``gantt.objects``) as ``{class: Inventory}``."""
    return {inv.resource_class: Inventory(
        inv.total, inv.reserved, inv.min_unit, inv.max_unit,
        inv.step_size, inv.allocation_ratio) for inv in inventories}


@dataclasses.dataclass(frozen=True)
class HostUpdate:
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
    # resource class -> Inventory
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
    # what the provider is: "compute" for a compute node, else the kind a
    # standalone provider's report says (see from_standalone)
    kind: str = "compute"
    # a standalone provider's owning service, and the instance it runs in
    service: str | None = None
    instance_uuid: str | None = None
    # where the provider is, as reported (``room=r1/rack=b07``, checked
    # by the intake; None: the report does not say)
    location: str | None = None
    # seconds a sign of life keeps the host up; 0: ``[scheduler]
    # service_down_time`` (see HostTable.lease)
    lease: float = 0.0

    @classmethod
    def from_compute_node(cls, node, received_at):
        return cls(
            uuid=node.uuid, host=node.host, nodename=node.nodename,
            cell_uuid=node.cell_uuid,
            availability_zone=node.availability_zone,
            disabled=node.disabled, report_sequence=node.report_sequence,
            num_instances=node.num_instances, num_io_ops=node.num_io_ops,
            inventories=inventories_of(node.inventories),
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
                    inventories=inventories_of(child.inventories),
                    traits=frozenset(child.traits),
                    aggregates=frozenset(child.aggregates))
                for child in node.child_providers),
            boot_id=node.boot_id, location=node.location)

    @classmethod
    def from_standalone(cls, provider, details, report_sequence,
                        received_at):
        """A standalone provider as a row of the table: its name is its
        host and node name, it has no cell and no children.

        :param provider: a :class:`provider_tree.Provider` (its own root)
        :param details: a :class:`Standalone`
        """
        return cls(
            uuid=provider.uuid, host=provider.name, nodename=provider.name,
            cell_uuid=None, availability_zone=details.availability_zone,
            disabled=False, report_sequence=report_sequence,
            num_instances=0, num_io_ops=0,
            inventories=dict(provider.inventories),
            traits=provider.traits, aggregates=provider.aggregates,
            capabilities=dict(details.capabilities), stats={}, metrics={},
            updated_at=None, received_at=received_at, kind=details.kind,
            service=details.service, instance_uuid=details.instance_uuid,
            location=details.location)

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
            result[rc] = Inventory(total, reserved, low, 2 ** 62, step,
                                   ratio)
        return result

    def fingerprint(self):
        """Everything but the sequence and times: equal means unchanged."""
        return self._fingerprint

    @functools.cached_property
    def _fingerprint(self):
        return hash((
            self.host, self.nodename, self.cell_uuid,
            self.availability_zone, self.disabled, self.num_instances,
            self.num_io_ops, inventory_hash(self.inventories),
            self.traits, self.aggregates,
            details_hash(self.capabilities, self.stats, self.metrics,
                          self.numa_cells, self.pci_pools),
            self.instance_uuids, self.location,
            tuple((c.uuid, c.name, c.parent_uuid,
                   inventory_hash(c.inventories), c.traits, c.aggregates)
                  for c in self.children)))


# NOTE: a fingerprint hashes the hashes of the inventories and the details:
# a bulk load computes those once per distinct inventory and details, which
# many hosts share (see load.Loading)


@dataclasses.dataclass(frozen=True)
class Standalone:
    """What a standalone provider's report says it is, besides its
    provider (``ProviderReport`` 1.2, or the database's row of it)."""

    kind: str
    service: str | None = None
    availability_zone: str | None = None
    # typed values, as reported
    capabilities: dict = dataclasses.field(default_factory=dict)
    instance_uuid: str | None = None
    location: str | None = None

    @classmethod
    def from_report(cls, report):
        return cls(kind=report.kind, service=report.service,
                   availability_zone=report.availability_zone,
                   capabilities=dict(report.capabilities),
                   instance_uuid=report.instance_uuid,
                   location=report.location)


def api_lease(source, window):
    """The lease (HostUpdate.lease) of a host whose row ``source`` wrote
    (``host_reports.source``): ``window`` (``[api]
    compute_node_down_time``; inf when 0) for one the REST API made, 0
    for an agent's."""
    if source is None:
        return 0.0
    return float(window) if window else math.inf


def inventory_hash(inventories):
    return hash(tuple(sorted(inventories.items())))


def details_hash(capabilities, stats, metrics, numa_cells, pci_pools):
    return hash((tuple(sorted(capabilities.items())),
                 tuple(sorted(stats.items())),
                 tuple(sorted(metrics.items())), numa_cells, pci_pools))
