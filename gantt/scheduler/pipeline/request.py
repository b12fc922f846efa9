"""ResourceRequest: what filters and weighers read of one request.

The records here are built by :mod:`.translate` from a RequestSpec, which
catches everything a caller can get wrong; filters never guess at a
malformed spec.
"""

import collections
import dataclasses

from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import pci as pci_mod

#: group policies every member must keep (the claim checks them)
HARD_POLICIES = ("affinity", "anti-affinity")


@dataclasses.dataclass(frozen=True)
class Profile:
    """A scheduling profile's settings a request is checked against
    (``gantt.conf.profiles``; built by ``.profiles``).

    :attr provider_kinds: the kinds of provider its requests consider
    :attr packing: its packing policy (None: the weighers as configured)
    :attr request_packing: a request may name another policy
    """

    name: str
    provider_kinds: frozenset
    packing: str | None
    request_packing: bool


@dataclasses.dataclass(frozen=True)
class ResourceGroup:
    """One request group, validated."""

    suffix: str
    resources: dict
    required_traits: frozenset
    forbidden_traits: frozenset
    any_traits: tuple          # of frozensets: at least one of each
    member_of: tuple           # of frozensets: member of one of each
    forbidden_aggregates: frozenset
    in_tree: str | None


@dataclasses.dataclass
class GroupState:
    """A server group's policy and where its members already are."""

    uuid: str
    policy: str
    max_per_host: int
    # host name -> number of members already there
    hosts: collections.Counter
    # policies per level (gantt.scheduler.state.topology.LevelPolicy)
    levels: tuple = ()
    # the HostView the call decides on (set by its CycleState): where the
    # members are, for the per-host path of the level policies
    places: object = None

    @property
    def is_hard(self):
        """Whether the claim must check anything: a hard host-level
        policy or a hard policy per level."""
        return self.policy in HARD_POLICIES or bool(self.hard_levels)

    @property
    def hard_levels(self):
        return tuple(p for p in self.levels if p.is_hard)

    @property
    def soft_levels(self):
        return tuple(p for p in self.levels if not p.is_hard)

    def add_member(self, host):
        """One more member of this request placed on ``host``."""
        self.hosts[host] += 1

    def remove_member(self, host):
        """One member fewer on ``host`` (a member counted out of its own
        group: a retried claim, a moving instance)."""
        if self.hosts.get(host):
            self.hosts[host] -= 1
            if not self.hosts[host]:
                del self.hosts[host]

    def remove_members(self, hosts):
        """Undo :meth:`add_member` for each of ``hosts`` (decisions that
        were not claimed)."""
        self.hosts.subtract(hosts)
        for host in [h for h, n in self.hosts.items() if n <= 0]:
            del self.hosts[host]

    def reset(self, hosts):
        """Where the members are now, as the database says."""
        self.hosts.clear()
        self.hosts.update(hosts)


class Ledger:
    """What the instances of one request placed so far take of their
    hosts beyond resource classes: NUMA cells (pinned pCPUs, shared vCPUs,
    memory, pages) and PCI devices, by row.

    The cache's NUMA cells and PCI pools only change when an agent
    reports, so without this two instances of one request could be fitted
    onto the same free pCPUs or devices. Nova's scheduler counts them with
    ``HostState.consume_from_request`` after each selection; here the
    NUMATopology and PciPassthrough filters read a host through
    :meth:`numa_cells` and :meth:`pci_pools`. Entries are kept with the
    host's uuid and ignored for a row that now holds another host.
    """

    def __init__(self):
        self._numa = {}        # row -> (uuid, [numa.CellUsage])
        self._pci = {}         # row -> (uuid, {pool key: devices})

    def __bool__(self):
        return bool(self._numa or self._pci)

    def take(self, request, view, row):
        """Count what one instance of ``request`` takes on ``row``."""
        pci_requests = request.derived.get(pci_mod.REQUESTS_MEMO)
        if request.numa is None and not pci_requests:
            return      # most requests: nothing beyond resource classes
        host = view.record(row)
        if request.numa is not None:
            usage = numa_mod.place(
                self.numa_cells(row, host.uuid, host.numa_cells),
                request.numa, host.ratio("VCPU"), host.ratio("MEMORY_MB"))
            if usage:
                self._entry(self._numa, row, host.uuid, list)[1].extend(
                    usage)
        if pci_requests:
            taken = pci_mod.allocate(
                self.pci_pools(row, host.uuid, host.pci_pools),
                pci_requests)
            if taken:
                counts = self._entry(self._pci, row, host.uuid, dict)[1]
                for key, count in taken.items():
                    counts[key] = counts.get(key, 0) + count

    @staticmethod
    def _entry(entries, row, uuid, empty):
        entry = entries.get(row)
        if entry is None or entry[0] != uuid:
            entry = entries[row] = (uuid, empty())
        return entry

    def clear(self):
        self._numa.clear()
        self._pci.clear()

    def numa_cells(self, row, uuid, cells):
        """A host's NUMA cells (``cells`` as reported) less what this
        request took there."""
        entry = self._numa.get(row)
        if entry is None or entry[0] != uuid:
            return cells
        return numa_mod.consumed(cells, entry[1])

    def pci_pools(self, row, uuid, pools):
        """A host's PCI pools less the devices this request took there."""
        entry = self._pci.get(row)
        if entry is None or entry[0] != uuid:
            return pools
        return pci_mod.remaining(pools, entry[1])

    def numa_rows(self, view):
        """``(row, NUMA cells)`` of the view's rows this request took from.
        """
        table = view.table
        for row, (uuid, usage) in self._numa.items():
            if row < view.n and table.uuids[row] == uuid:
                yield row, numa_mod.consumed(table.numa_cells[row] or (),
                                             usage)

    def pci_rows(self, view):
        """``(row, PCI pools)`` of the view's rows this request took from.
        """
        table = view.table
        for row, (uuid, taken) in self._pci.items():
            if row < view.n and table.uuids[row] == uuid:
                yield row, pci_mod.remaining(table.pci_pools[row] or (),
                                             taken)


@dataclasses.dataclass
class ResourceRequest:
    """A validated request for one instance (repeated num_instances times)."""

    spec: object                      # the RequestSpec, for plugins
    groups: tuple                     # of ResourceGroup
    group_policy: str
    resources: dict                   # all groups summed, per class
    availability_zone: str | None
    force_hosts: frozenset
    force_nodes: frozenset
    ignore_hosts: frozenset
    destination: object | None        # Destination
    instance_group: GroupState | None
    same_host: frozenset | None       # hosts of the instances in the hint
    different_host: frozenset | None
    extra_specs: dict
    image_properties: dict
    hints: dict
    # the guest NUMA topology (hw:numa_nodes, cpu_policy, mem_page_size,
    # thread and emulator threads policies)
    numa: numa_mod.GuestTopology | None = None
    project_id: str | None = None
    image_id: str | None = None
    # what plugins derive from the request once (PCI requests…), by name
    derived: dict = dataclasses.field(default_factory=dict)
    # Placement's same_subtree (frozensets of suffixes) and root traits
    same_subtree: tuple = ()
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    # the scheduling profile that ranks it, the packing policy its
    # weighers follow (None: as configured) and the kinds of provider it
    # considers
    profile: str = "default"
    packing: str | None = None
    provider_kinds: frozenset = frozenset({"compute"})
    # the instance whose container host must take the request (a uuid),
    # and how the host is picked: None (among the best, at random) or
    # "sequential" (see :mod:`.containers`)
    on_instance: str | None = None
    fill: str | None = None
    # extra-spec-style requirements on the provider's capabilities (a
    # volume type's extra specs: CapabilitiesFilter, CapacityFilter)
    capabilities: dict = dataclasses.field(default_factory=dict)
    # several zone hints: the zones, and how many instances of this
    # request each holds so far (see :mod:`.zones`)
    zone_spread: object = dataclasses.field(default=None, repr=False,
                                            compare=False)
    # NUMA cells and PCI devices the instances placed so far took
    ledger: Ledger = dataclasses.field(default_factory=Ledger, repr=False,
                                       compare=False)

    def record_placement(self, view, row):
        """Count what one instance takes on ``row`` beyond resource
        classes (NUMA cells, pinned pCPUs, pages, PCI devices), so that
        the filters show the next instances of this request what is left.
        Call once for each instance decided (claimed, or decided for a
        batch claim)."""
        self.ledger.take(self, view, row)
        if self.zone_spread is not None:
            self.zone_spread.take(view, row)

    def forget_placements(self):
        """Drop what :meth:`record_placement` counted (decisions that were
        not claimed and will be made again)."""
        self.ledger.clear()
        if self.zone_spread is not None:
            self.zone_spread.clear()

    @property
    def needs_tree_features(self):
        """Whether a lone provider could answer differently than its
        columns say (granular groups spread over a tree need the solver)."""
        return len(self.groups) > 1 or bool(self.same_subtree)

    @property
    def forced(self):
        return bool(self.force_hosts or self.force_nodes)

    def memo(self, name, build):
        """``build()`` once per request, kept under ``name``."""
        if name not in self.derived:
            self.derived[name] = build()
        return self.derived[name]

    @property
    def required_traits(self):
        """Every group's required traits (the isolation pre-filter's)."""
        return frozenset().union(*(g.required_traits for g in self.groups))
