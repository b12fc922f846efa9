"""The NUMA model: host cells as agents report them, guest topologies as
requests ask for them, and what one guest cell takes of a host cell.

Immutable records only; see the package docstring for the rules.
"""

import dataclasses

SMALL = "small"
LARGE = "large"
ANY = "any"
SHARED = "shared"
DEDICATED = "dedicated"
MIXED = "mixed"
CPU_POLICIES = (SHARED, DEDICATED, MIXED)
PREFER = "prefer"
ISOLATE = "isolate"
REQUIRE = "require"
THREAD_POLICIES = (PREFER, ISOLATE, REQUIRE)
EMULATOR_POLICIES = ("share", "isolate")
HYPERTHREADING = "HW_CPU_HYPERTHREADING"
#: permutations tried for an asymmetric guest topology, per host
MAX_PERMUTATIONS = 40320


@dataclasses.dataclass(frozen=True)
class PagePool:
    size_kb: int
    total: int
    used: int
    reserved: int

    @property
    def free(self):
        return self.total - self.used - self.reserved


def _cores(reported, cpus):
    """Disjoint sibling sets over ``cpus``, sorted: the reported ones (CPUs
    of no reported set, or of none at all, are cores of their own)."""
    seen = set()
    cores = []
    for group in reported:
        core = frozenset(group) & cpus - seen
        if core:
            cores.append(core)
            seen |= core
    cores.extend(frozenset([cpu]) for cpu in cpus - seen)
    return tuple(sorted(cores, key=min))


@dataclasses.dataclass(frozen=True)
class HostCell:
    """One host NUMA cell, immutable (the cache keeps these per row)."""

    id: int
    cpuset: frozenset
    pcpuset: frozenset
    pinned: frozenset
    cpu_usage: int
    memory_mb: int
    memory_usage_mb: int
    pages: tuple                # of PagePool, by size
    # thread sibling sets (frozensets), disjoint, covering cpuset|pcpuset
    siblings: tuple = ()

    @classmethod
    def from_obj(cls, cell):
        cpuset = frozenset(cell.cpuset)
        pcpuset = frozenset(cell.pcpuset)
        return cls(
            id=cell.id, cpuset=cpuset, pcpuset=pcpuset,
            pinned=frozenset(cell.pinned_cpus), cpu_usage=cell.cpu_usage,
            memory_mb=cell.memory_mb, memory_usage_mb=cell.memory_usage_mb,
            pages=tuple(sorted(
                (PagePool(p.size_kb, p.total, p.used, p.reserved)
                 for p in cell.mempages), key=lambda p: p.size_kb)),
            siblings=_cores(cell.siblings, cpuset | pcpuset))

    @property
    def free(self):
        """The free dedicated CPUs."""
        return self.pcpuset - self.pinned

    @property
    def free_pcpus(self):
        return len(self.free)

    @property
    def threads(self):
        """Threads per core (Nova's ``threads_per_core``); 1 without
        SMT."""
        return max((len(s) for s in self.siblings), default=1)

    @property
    def legacy(self):
        """Shared and dedicated CPUs are one set (``vcpu_pin_set``)."""
        return self.cpuset == self.pcpuset

    def free_cores(self):
        """The free dedicated CPUs of each core that has some, in core
        order (Nova's ``free_siblings``)."""
        free = self.free
        return [core & free for core in self.siblings if core & free]


@dataclasses.dataclass(frozen=True)
class GuestCell:
    cpus: int                  # vCPUs in the cell
    memory_mb: int
    pinned: int = 0            # of them dedicated
    reserved: int = 0          # extra pCPUs (isolated emulator threads)

    @property
    def shared(self):
        return self.cpus - self.pinned


@dataclasses.dataclass(frozen=True)
class GuestTopology:
    cells: tuple               # of GuestCell
    cpu_policy: str | None     # None, SHARED, DEDICATED or MIXED
    page_size: object          # None, SMALL, LARGE, ANY or a size in KiB
    thread_policy: str | None = None
    emulator_isolate: bool = False

    @property
    def dedicated(self):
        return self.cpu_policy == DEDICATED

    @property
    def pinned(self):
        """Some vCPUs are pinned (``dedicated`` or ``mixed``)."""
        return self.cpu_policy in (DEDICATED, MIXED)

    @property
    def symmetric(self):
        return len(set(self.cells)) == 1


@dataclasses.dataclass(frozen=True)
class CpuRequest:
    """A request's CPU constraints, validated as Nova's
    ``numa_get_constraints`` validates them."""

    policy: str | None         # None, SHARED, DEDICATED or MIXED
    thread_policy: str | None
    emulator_isolate: bool
    dedicated: frozenset       # the guest vCPUs (numbers) that are pinned
    # the policy came from hw:cpu_policy (not resources:PCPU/VCPU), so the
    # flavor's VCPU becomes PCPU as Nova's ResourceRequest translates it
    translate: bool = True
    # (HW_CPU_HYPERTHREADING, "required" or "forbidden") to add, or None
    trait: tuple | None = None

    @property
    def pinned(self):
        return self.policy in (DEDICATED, MIXED)

    def resources(self, vcpus):
        """``{"PCPU": n}`` (and ``"VCPU"`` for ``mixed``) replacing the
        flavor's VCPU, or None when the flavor's VCPU stands (Nova's
        ``_translate_pinning_policies``)."""
        if not (self.translate and self.pinned):
            return None
        resources = {"PCPU": len(self.dedicated) + int(self.emulator_isolate)}
        if self.policy == MIXED:
            resources["VCPU"] = vcpus - len(self.dedicated)
        return resources


@dataclasses.dataclass(frozen=True)
class CellUsage:
    """What one guest cell takes of the host cell ``cell_id``."""

    cell_id: int
    pinned: frozenset          # host CPUs (whole cores with isolate)
    shared: int                # floating vCPUs
    memory_mb: int
    page_size: int | None      # the pool it takes pages of; None: smallest
