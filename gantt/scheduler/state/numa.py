"""NUMA fitting: a guest topology from hw: extra specs, and whether it fits
a host's NUMA cells, host by host and for all hosts at once.

The rules follow Nova's ``nova/virt/hardware.py`` (``numa_get_constraints``,
``numa_fit_instance_to_host``, ``_pack_instance_onto_cores`` and
``numa_usage_from_instance_numa``) as current Nova has them:

* **CPU policy** (``hw:cpu_policy`` / ``hw_cpu_policy``: ``shared``,
  ``dedicated`` or ``mixed``). A flavor's ``dedicated`` wins; a flavor's
  ``shared`` forbids an image asking for ``dedicated`` or ``mixed``, and a
  flavor's ``mixed`` an image's ``dedicated`` (an error, not a silent
  override); without a flavor policy the image's applies.
  ``resources:PCPU=N`` (N the flavor's vCPUs, plus one with emulator
  threads isolated) means ``dedicated`` and ``resources:VCPU`` means
  ``shared``; either together with a CPU policy, or both together, is an
  error. ``mixed`` pins the vCPUs of ``hw:cpu_dedicated_mask`` (``0-1`` or
  ``^0``: all but vCPU 0), or, with ``hw:cpu_realtime=yes``, those of the
  realtime mask (``hw_cpu_realtime_mask`` / ``hw:cpu_realtime_mask``), and
  lets the others float; a guest NUMA node may hold only pinned or only
  floating vCPUs (as in Nova; but isolated emulator threads, which go with
  guest node 0, need a pinned vCPU there, as Nova's packing does). See
  :func:`cpu_request`.
* **Thread policy** (``hw:cpu_thread_policy`` / ``hw_cpu_thread_policy``:
  ``prefer``, ``isolate``, ``require``; or ``trait:HW_CPU_HYPERTHREADING``
  ``forbidden`` / ``required``), pinned guests only. ``prefer`` packs
  vCPUs onto thread siblings when it can, onto any free pCPUs otherwise;
  ``require`` places them on sibling threads only (a cell without SMT
  never fits); ``isolate`` puts each vCPU on a core of which every thread
  is free and takes the whole core. On a cell with SMT, ``isolate`` only
  fits when the cell's shared and dedicated CPU sets are the same (Nova's
  legacy ``vcpu_pin_set`` layout, bug #1889633); a cell without SMT (or
  whose agent does not report ``siblings``: each CPU is its own core)
  takes it as plain pinning.
* **Emulator threads** (``hw:emulator_threads_policy=isolate``, pinned
  guests only): one more free pCPU in the host cell of guest cell 0.
* a request has a NUMA topology when the flavor (or the image) asks for
  ``hw:numa_nodes``, a ``dedicated`` or ``mixed`` CPU policy or
  ``hw:mem_page_size``. Without ``numa_nodes`` it is one cell;
* vCPUs and memory are split evenly over the cells (an uneven split is an
  error; cell ``k`` gets the ``k``-th run of vCPU numbers) unless
  ``hw:numa_cpus.N`` / ``hw:numa_mem.N`` give every cell;
* each guest cell must fit a distinct host cell, tried in the host's cell
  order: its shared vCPUs may not exceed the cell's ``cpuset``; pinned
  vCPUs need as many free CPUs of the cell's ``pcpuset``, placed as the
  thread policy says, and memory within the cell's free memory (no
  overcommit for pinned guests); a guest without pinned vCPUs stays within
  the cell's free capacity times the host's VCPU and MEMORY_MB allocation
  ratios. Memory must also fit ``memory_mb`` without a page size; with one
  (``small`` = the smallest pool, ``large`` = every other pool, ``any`` =
  every pool, or a size) it must fit the free pages of one such pool
  (largest first), with no overcommit.

What one instance takes (:func:`place`, :func:`consumed`) is what Nova's
``HostState.consume_from_request`` counts before the next instance of a
request is scheduled: its pinned pCPUs (whole cores with ``isolate``,
the emulator pCPU included), shared vCPUs, memory, and pages of the pool
used (the smallest pool without a page size).

What is not modelled: PCI-NUMA affinity (``hw:pci_numa_affinity_policy``,
``[pci] alias`` ``numa_policy``) and the NUMA placement of PCI devices,
``hw:cpu_max_*``/``hw:cpu_sockets`` guest CPU topologies, vPMEM, the
``socket`` PCI policy, image ``trait:HW_CPU_HYPERTHREADING`` properties,
network NUMA affinity (``[neutron_physnet_*] numa_nodes``), and Nova's
check of a guest cell without a page size against the host cell's
smallest page pool (Gantt checks ``memory_mb``).
"""

import collections
import dataclasses
import itertools
import re

import numpy as np
from oslo_utils import strutils

from gantt import exception

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
_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)
_UNITS_KB = {"": 1, "K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}
_SUFFIX = r"([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?"
_CPU_RESOURCES = re.compile(r"^resources%s:(VCPU|PCPU)$" % _SUFFIX)
_HT_TRAIT = re.compile(r"^trait%s:%s$" % (_SUFFIX, HYPERTHREADING))
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


# -- the request --------------------------------------------------------------


def _clean(value):
    return None if value in (None, "") else str(value).strip()


def _setting(extra_specs, image_props, flavor_key, image_key):
    value = _clean(extra_specs.get(flavor_key))
    return value if value is not None else _clean(image_props.get(image_key))


def _invalid(reason, *args):
    return exception.InvalidRequest(reason=reason % args)


def parse_page_size(text):
    """``small``/``large``/``any`` or a size (``2048``, ``2MB``, ``1GiB``)
    as KiB."""
    lowered = text.lower()
    if lowered in (SMALL, LARGE, ANY):
        return lowered
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise _invalid("hw:mem_page_size must be small, large, any or a size "
                       "such as 2048, 2MB or 1GB; got %r", text)
    return int(match.group(1)) * _UNITS_KB[match.group(2).upper()]


def parse_cpu_spec(text, what="CPU list"):
    """Nova's CPU list syntax: ``0-3,^2,5`` -> {0, 1, 3, 5}."""
    include, exclude = set(), set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        target = include
        if part.startswith("^"):
            target, part = exclude, part[1:]
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if low > high:
                    raise ValueError(part)
                target.update(range(low, high + 1))
            else:
                target.add(int(part))
        except ValueError:
            raise _invalid("invalid %s %r", what, text) from None
    return include - exclude


def _positive(value, what):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise _invalid("%s must be a positive integer, got %r", what, value)
    return number


def _choice(value, allowed, what):
    if value is not None and value not in allowed:
        raise _invalid("%s %r is not supported (%s)", what, value,
                       ", ".join(allowed))
    return value


def _cpu_policy(specs, image_props):
    flavor = _choice(_clean(specs.get("hw:cpu_policy")), CPU_POLICIES,
                     "hw:cpu_policy")
    image = _choice(_clean(image_props.get("hw_cpu_policy")), CPU_POLICIES,
                    "hw_cpu_policy")
    # what a flavor's policy forbids an image to ask for (images are the
    # users', flavors the operator's: Nova's ImageCPUPinningForbidden)
    forbidden = {SHARED: (DEDICATED, MIXED), MIXED: (DEDICATED,)}
    if flavor in forbidden and image in forbidden[flavor]:
        raise _invalid("image property hw_cpu_policy=%s is not allowed with "
                       "the flavor's hw:cpu_policy=%s", image, flavor)
    return flavor if flavor is not None else image


def _thread_policy(specs, image_props):
    flavor = _choice(_clean(specs.get("hw:cpu_thread_policy")),
                     THREAD_POLICIES, "hw:cpu_thread_policy")
    image = _choice(_clean(image_props.get("hw_cpu_thread_policy")),
                    THREAD_POLICIES, "hw_cpu_thread_policy")
    if flavor in (None, PREFER):
        return image or flavor
    if image is not None and image != flavor:
        raise _invalid("image property hw_cpu_thread_policy=%s is not "
                       "allowed with the flavor's hw:cpu_thread_policy=%s",
                       image, flavor)
    return flavor


def _realtime_cpus(flavor, image_props, emulator):
    """The realtime vCPUs (``hw:cpu_realtime``), or None."""
    specs = flavor.extra_specs
    if not strutils.bool_from_string(specs.get("hw:cpu_realtime")):
        return None
    # the image's mask first, as in Nova
    mask = (_clean(image_props.get("hw_cpu_realtime_mask"))
            or _clean(specs.get("hw:cpu_realtime_mask")))
    every = set(range(flavor.vcpus))
    realtime = every
    if mask:
        realtime = parse_cpu_spec("0-%d,%s" % (flavor.vcpus - 1, mask),
                                  "hw:cpu_realtime_mask")
    if not realtime or not realtime <= every:
        raise _invalid("hw:cpu_realtime_mask %r must name some of vCPUs "
                       "0-%d", mask, flavor.vcpus - 1)
    if realtime == every and emulator is None:
        raise _invalid("hw:cpu_realtime_mask %r leaves no vCPU for the "
                       "emulator threads; exclude one (^0) or set "
                       "hw:emulator_threads_policy", mask)
    return frozenset(realtime)


def _dedicated_mask(flavor):
    """The vCPUs of ``hw:cpu_dedicated_mask``, or None."""
    mask = _clean(flavor.extra_specs.get("hw:cpu_dedicated_mask"))
    if mask is None:
        return None
    vcpus = flavor.vcpus
    text = "0-%d,%s" % (vcpus - 1, mask) if mask.startswith("^") else mask
    pinned = parse_cpu_spec(text, "hw:cpu_dedicated_mask")
    every = set(range(vcpus))
    if not pinned <= every:
        raise _invalid("hw:cpu_dedicated_mask %r names vCPU(s) %s; the "
                       "flavor has vCPUs 0-%d", mask,
                       ",".join(map(str, sorted(pinned - every))), vcpus - 1)
    if not pinned or pinned == every:
        raise _invalid("hw:cpu_dedicated_mask %r must leave at least one "
                       "dedicated and one shared vCPU", mask)
    return frozenset(pinned)


def _explicit_policy(specs, policy, emulator, vcpus):
    """``(policy, translate)`` once ``resources[N]:VCPU/PCPU`` are read."""
    amounts = {"VCPU": 0, "PCPU": 0}
    for key, value in specs.items():
        match = _CPU_RESOURCES.match(key)
        if match:
            try:
                amounts[match.group(2)] += int(value)
            except (TypeError, ValueError):
                pass        # request.py names the bad amount
    vcpu, pcpu = amounts["VCPU"], amounts["PCPU"]
    if policy is not None and (vcpu or pcpu):
        raise _invalid("resources:%s cannot be combined with a CPU policy "
                       "(hw:cpu_policy / hw_cpu_policy=%s); use one or the "
                       "other", "VCPU" if vcpu else "PCPU", policy)
    if vcpu and pcpu:
        raise _invalid("resources:VCPU=%d and resources:PCPU=%d cannot be "
                       "combined; use one or the other", vcpu, pcpu)
    if pcpu:
        want = vcpus + int(emulator == ISOLATE)
        if pcpu != want:
            raise _invalid("resources:PCPU=%d must be the flavor's %d vCPUs"
                           "%s", pcpu, vcpus,
                           " plus one for hw:emulator_threads_policy=isolate"
                           if emulator == ISOLATE else "")
        return DEDICATED, False
    if vcpu:
        return SHARED, False
    return policy, True


def _thread_from_trait(specs, thread):
    for key, value in specs.items():
        if not _HT_TRAIT.match(key):
            continue
        if thread is not None:
            raise _invalid("%s cannot be combined with a CPU thread policy "
                           "(hw:cpu_thread_policy=%s); use one or the other",
                           key, thread)
        return {"forbidden": ISOLATE, "required": REQUIRE}.get(value)
    return thread


def _dedicated_cpus(policy, thread, emulator, realtime, mask, vcpus):
    """The pinned guest vCPUs, once the combination is checked."""
    if policy in (None, SHARED):
        wrong = [what for what, bad in (
            ("CPU thread policy %s" % thread, thread is not None),
            ("hw:emulator_threads_policy=isolate", emulator == ISOLATE),
            ("hw:cpu_dedicated_mask", mask is not None),
            ("hw:cpu_realtime", realtime is not None)) if bad]
        if wrong:
            raise _invalid("%s needs hw:cpu_policy=dedicated or mixed",
                           wrong[0])
        return frozenset()
    if policy == DEDICATED:
        if mask is not None:
            raise _invalid("hw:cpu_dedicated_mask needs hw:cpu_policy=mixed, "
                           "not dedicated")
        return frozenset(range(vcpus))
    if realtime is not None and mask is not None:
        raise _invalid("hw:cpu_policy=mixed takes hw:cpu_dedicated_mask or "
                       "a realtime mask, not both")
    if realtime is None and mask is None:
        raise _invalid("hw:cpu_policy=mixed needs hw:cpu_dedicated_mask (or "
                       "hw:cpu_realtime with a realtime mask)")
    return mask if mask is not None else realtime


def cpu_request(flavor, image_props):
    """The :class:`CpuRequest` of a flavor and image.

    :raises: InvalidRequest for specs Nova would refuse
    """
    specs = flavor.extra_specs
    policy = _cpu_policy(specs, image_props)
    thread = _thread_policy(specs, image_props)
    emulator = _choice(_clean(specs.get("hw:emulator_threads_policy")),
                       EMULATOR_POLICIES, "hw:emulator_threads_policy")
    realtime = _realtime_cpus(flavor, image_props, emulator)
    mask = _dedicated_mask(flavor)
    policy, translate = _explicit_policy(specs, policy, emulator,
                                         flavor.vcpus)
    trait = None
    if thread in (ISOLATE, REQUIRE):
        # Nova asks Placement for hosts without / with SMT as well
        trait = (HYPERTHREADING,
                 "forbidden" if thread == ISOLATE else "required")
    thread = _thread_from_trait(specs, thread)
    dedicated = _dedicated_cpus(policy, thread, emulator, realtime, mask,
                                flavor.vcpus)
    return CpuRequest(policy=policy, thread_policy=thread,
                      emulator_isolate=emulator == ISOLATE,
                      dedicated=dedicated, translate=translate, trait=trait)


def _explicit_cells(extra_specs, nodes, vcpus, memory_mb):
    """``hw:numa_cpus.N``/``hw:numa_mem.N`` for every cell as ``(vCPU
    numbers, memory)``, or None."""
    keys = [k for k in extra_specs
            if k.startswith(("hw:numa_cpus.", "hw:numa_mem."))]
    if not keys:
        return None
    cells = []
    seen = set()
    for node in range(nodes):
        cpus = extra_specs.get("hw:numa_cpus.%d" % node)
        mem = extra_specs.get("hw:numa_mem.%d" % node)
        if cpus is None or mem is None:
            raise _invalid("hw:numa_cpus.%d and hw:numa_mem.%d are required "
                           "for every one of the %d NUMA nodes",
                           node, node, nodes)
        cpu_set = parse_cpu_spec(cpus, "hw:numa_cpus.%d" % node)
        if seen & cpu_set:
            raise _invalid("vCPU(s) %s are in more than one NUMA node",
                           sorted(seen & cpu_set))
        seen |= cpu_set
        cells.append((frozenset(cpu_set),
                      _positive(mem, "hw:numa_mem.%d" % node)))
    if seen != set(range(vcpus)) or sum(m for _c, m in cells) != memory_mb:
        raise _invalid("hw:numa_cpus.N must cover vCPUs 0-%d once and "
                       "hw:numa_mem.N must add up to %d MB", vcpus - 1,
                       memory_mb)
    return cells


def _even_cells(nodes, vcpus, memory_mb):
    if vcpus % nodes or memory_mb % nodes:
        raise _invalid("%d vCPUs and %d MB cannot be split evenly over %d "
                       "NUMA nodes; give hw:numa_cpus.N and hw:numa_mem.N",
                       vcpus, memory_mb, nodes)
    per = vcpus // nodes
    return [(frozenset(range(k * per, (k + 1) * per)), memory_mb // nodes)
            for k in range(nodes)]


def guest_topology(flavor, image_props, cpu=None):
    """The :class:`GuestTopology` a request asks for, or None.

    :param cpu: the request's :class:`CpuRequest` (derived when None)
    :raises: InvalidRequest for specs Nova would refuse
    """
    cpu = cpu or cpu_request(flavor, image_props)
    specs = flavor.extra_specs
    nodes = _setting(specs, image_props, "hw:numa_nodes", "hw_numa_nodes")
    page = _setting(specs, image_props, "hw:mem_page_size",
                    "hw_mem_page_size")
    if nodes is None and not cpu.pinned and page is None:
        return None
    count = _positive(nodes, "hw:numa_nodes") if nodes is not None else 1
    vcpus, memory = flavor.vcpus, flavor.memory_mb
    if count > max(vcpus, 1):
        raise _invalid("hw:numa_nodes=%d exceeds the flavor's %d vCPUs",
                       count, vcpus)
    layout = (_explicit_cells(specs, count, vcpus, memory)
              or _even_cells(count, vcpus, memory))
    cells = []
    for node, (numbers, mem) in enumerate(layout):
        # a mixed guest node may have no dedicated vCPU (or no shared
        # one): Nova accepts it, and pins nothing on its host cell
        pinned = len(numbers & cpu.dedicated)
        cells.append(GuestCell(len(numbers), mem, pinned,
                               int(cpu.emulator_isolate and node == 0)))
    return GuestTopology(
        cells=tuple(cells), cpu_policy=cpu.policy,
        page_size=None if page is None else parse_page_size(page),
        thread_policy=cpu.thread_policy,
        emulator_isolate=cpu.emulator_isolate)


# -- one host -----------------------------------------------------------------


def _page_candidates(cell, page_size):
    sizes = [p.size_kb for p in cell.pages]          # ascending
    if page_size == SMALL:
        return sizes[:1]
    if page_size == LARGE:
        return sizes[1:]
    if page_size == ANY:
        return sizes
    return [page_size] if page_size in sizes else []


def _page_choice(cell, memory_mb, page_size):
    """The pool (size in KiB) the memory takes pages of, largest first as
    Nova picks it, or None."""
    memory_kb = memory_mb * 1024
    pools = {p.size_kb: p for p in cell.pages}
    for size in reversed(_page_candidates(cell, page_size)):
        if memory_kb % size == 0 and pools[size].free * size >= memory_kb:
            return size
    return None


def _on_siblings(cores, count, threads, fewest):
    """``count`` pCPUs as Nova packs them: ``t`` threads of each core that
    has ``t`` free, the most threads per core first, down to ``fewest``."""
    for t in range(threads, fewest - 1, -1):
        usable = [sorted(core)[:t] for core in cores if len(core) >= t]
        if t * len(usable) >= count:
            return list(itertools.chain.from_iterable(usable))[:count]
    return None


def _isolated(cell, cores, count, reserved):
    """``count`` pCPUs on wholly free cores (plus ``reserved`` more on
    other cores), with the whole of each core they touch."""
    threads = cell.threads
    if threads > 1 and not cell.legacy:
        return None
    whole = [core for core in cores if len(core) >= threads][:count]
    if len(whole) < count:
        return None
    rest = [cpu for core in cores if core not in whole
            for cpu in sorted(core)]
    if len(rest) < reserved:
        return None
    taken = {min(core) for core in whole} | set(rest[:reserved])
    return frozenset().union(*(core & cell.pcpuset for core in cell.siblings
                               if core & taken))


def _reserved_alone(count, reserved):
    """Emulator pCPUs asked for on a cell that pins no vCPU (a mixed
    guest's all-shared node 0): Nova's ``_get_reserved`` finds none
    without a pinned vCPU, so such a guest cell fits no host cell."""
    return bool(reserved) and not count


def pin(cell, count, reserved=0, thread_policy=None):
    """The host CPUs that ``count`` pinned vCPUs and ``reserved`` emulator
    pCPUs take on ``cell`` under ``thread_policy``, as Nova's
    ``_pack_instance_onto_cores`` picks them, or None if they do not fit.
    """
    free = cell.free
    if count + reserved > len(free) or _reserved_alone(count, reserved):
        return None
    cores = cell.free_cores()
    if thread_policy == ISOLATE:
        return _isolated(cell, cores, count, reserved)
    fewest = 2 if thread_policy == REQUIRE else 1
    chosen = _on_siblings(cores, count, cell.threads, fewest)
    if chosen is None:
        if thread_policy == REQUIRE:
            return None
        chosen = sorted(free)[:count]    # prefer: any free pCPUs
    extra = sorted(free - set(chosen))[:reserved]
    return frozenset(chosen) | frozenset(extra)


def cell_fit(cell, guest, topology, cpu_ratio, ram_ratio):
    """What guest cell ``guest`` takes of host cell ``cell``
    (:class:`CellUsage`), or None if it does not fit."""
    page = None
    if topology.page_size is not None:
        page = _page_choice(cell, guest.memory_mb, topology.page_size)
        if page is None:
            return None
    elif guest.memory_mb > cell.memory_mb:
        return None
    if guest.shared > len(cell.cpuset):
        return None
    if topology.pinned:
        if guest.memory_mb > cell.memory_mb - cell.memory_usage_mb:
            return None
        cpus = pin(cell, guest.pinned, guest.reserved,
                   topology.thread_policy)
        if cpus is None:
            return None
    else:
        if cell.cpu_usage + guest.shared > len(cell.cpuset) * cpu_ratio:
            return None
        if page is None and (cell.memory_usage_mb + guest.memory_mb
                             > cell.memory_mb * ram_ratio):
            return None
        cpus = frozenset()
    return CellUsage(cell.id, cpus, guest.shared, guest.memory_mb, page)


def cell_fits(cell, guest, topology, cpu_ratio, ram_ratio):
    """Whether guest cell ``guest`` fits host cell ``cell``."""
    return cell_fit(cell, guest, topology, cpu_ratio, ram_ratio) is not None


def place(cells, topology, cpu_ratio=1.0, ram_ratio=1.0):
    """Where ``topology`` goes on the host cells ``cells``: a
    :class:`CellUsage` per guest cell, on distinct host cells (the first
    way in host cell order, as Nova tries them), or None."""
    wanted = len(topology.cells)
    if wanted > len(cells):
        return None
    known = {}

    def fit(guest, j):
        if (guest, j) not in known:
            known[guest, j] = cell_fit(cells[j], guest, topology, cpu_ratio,
                                       ram_ratio)
        return known[guest, j]

    if topology.symmetric:
        guest = topology.cells[0]
        usage = [u for u in (fit(guest, j) for j in range(len(cells)))
                 if u is not None][:wanted]
        return tuple(usage) if len(usage) == wanted else None
    for perm in itertools.islice(
            itertools.permutations(range(len(cells)), wanted),
            MAX_PERMUTATIONS):
        pairs = list(zip(topology.cells, perm, strict=True))
        if all(fit(g, j) is not None for g, j in pairs):
            return tuple(fit(g, j) for g, j in pairs)
    return None


def host_fits(cells, topology, cpu_ratio=1.0, ram_ratio=1.0):
    """Whether ``topology`` fits the host cells ``cells`` (distinct cells
    for distinct guest cells; any order)."""
    return place(cells, topology, cpu_ratio, ram_ratio) is not None


def consumed(cells, usages):
    """``cells`` once ``usages`` (:class:`CellUsage`) are taken, as Nova's
    ``numa_usage_from_instance_numa`` counts them."""
    if not usages:
        return cells
    by_cell = collections.defaultdict(list)
    for usage in usages:
        by_cell[usage.cell_id].append(usage)
    return tuple(_cell_with(c, by_cell[c.id]) if c.id in by_cell else c
                 for c in cells)


def _cell_with(cell, usages):
    pinned = set(cell.pinned)
    used = {p.size_kb: p.used for p in cell.pages}
    smallest = min(used, default=None)
    for usage in usages:
        pinned |= usage.pinned
        size = usage.page_size or smallest
        if size in used:
            used[size] += usage.memory_mb * 1024 // size
    return dataclasses.replace(
        cell, pinned=frozenset(pinned),
        cpu_usage=cell.cpu_usage + sum(u.shared for u in usages),
        memory_usage_mb=cell.memory_usage_mb + sum(
            u.memory_mb for u in usages),
        pages=tuple(dataclasses.replace(p, used=used[p.size_kb])
                    for p in cell.pages))


# -- all hosts ----------------------------------------------------------------


class NumaColumns:
    """Every row's NUMA cells as ``rows x cells`` matrices.

    Cell ``j`` of a row is the row's ``j``-th reported cell (``present``
    says which exist). Page pools are kept per page size in KiB, and free
    cores per thread count: ``cores[t]`` counts the cores with at least
    ``t`` free dedicated threads.
    """

    _INT_FIELDS = ("cpus", "free_pcpus", "cpu_usage", "memory",
                   "memory_usage", "threads")
    _BOOL_FIELDS = ("legacy", "present")      # present last: see _widen
    # keyed matrices: name -> fill of a cell without such an entry
    _KEYED = {"pages": -1, "cores": 0}

    def __init__(self, rows, cols=2):
        for name in self._BOOL_FIELDS:
            setattr(self, name, np.zeros((rows, cols), dtype=bool,
                                         order="F"))
        for name in self._INT_FIELDS:
            setattr(self, name, np.zeros((rows, cols), dtype=np.int64,
                                         order="F"))
        # page size -> free pages (rows x cols), -1 = no pool of that size
        self.pages = {}
        # t -> cores with at least t free dedicated threads (rows x cols)
        self.cores = {}

    def _arrays(self):
        for name in self._INT_FIELDS:
            yield name, getattr(self, name), 0
        for name in self._BOOL_FIELDS:
            yield name, getattr(self, name), False

    def grown(self, rows=None, cols=None):
        rows = rows or self.present.shape[0]
        cols = max(cols or 0, self.present.shape[1])
        new = NumaColumns.__new__(NumaColumns)
        for name, fill in self._KEYED.items():
            setattr(new, name, {
                key: _resized(array, rows, cols, fill)
                for key, array in getattr(self, name).items()})
        for name, array, fill in self._arrays():
            setattr(new, name, _resized(array, rows, cols, fill))
        return new

    def _ensure(self, name, keys):
        """Matrices for every key of ``keys`` in keyed ``name`` (a new
        dict, never one a reader holds, is swapped in)."""
        matrices = getattr(self, name)
        missing = [k for k in keys if k not in matrices]
        if missing:
            matrices = dict(matrices)
            for key in missing:
                matrices[key] = np.full(self.present.shape,
                                        self._KEYED[name], dtype=np.int64,
                                        order="F")
            setattr(self, name, matrices)

    def write(self, row, cells):
        """Replace row ``row`` with ``cells`` (HostCell tuple)."""
        if len(cells) > self.present.shape[1]:
            self._widen(len(cells))
        self._ensure("pages", {p.size_kb for c in cells for p in c.pages})
        self._ensure("cores", {t for c in cells
                               for t in range(1, c.threads + 1)})
        self.present[row] = False
        self.legacy[row] = False
        for name in self._INT_FIELDS:
            getattr(self, name)[row] = 0
        for name, fill in self._KEYED.items():
            for matrix in getattr(self, name).values():
                matrix[row] = fill
        for j, cell in enumerate(cells):
            self._write_cell(row, j, cell)

    def _write_cell(self, row, j, cell):
        self.cpus[row, j] = len(cell.cpuset)
        self.free_pcpus[row, j] = cell.free_pcpus
        self.cpu_usage[row, j] = cell.cpu_usage
        self.memory[row, j] = cell.memory_mb
        self.memory_usage[row, j] = cell.memory_usage_mb
        self.threads[row, j] = cell.threads
        self.legacy[row, j] = cell.legacy
        for pool in cell.pages:
            self.pages[pool.size_kb][row, j] = pool.free
        sizes = [len(core) for core in cell.free_cores()]
        for t in range(1, cell.threads + 1):
            self.cores[t][row, j] = sum(1 for s in sizes if s >= t)
        self.present[row, j] = True

    def _widen(self, cols):
        wider = self.grown(cols=max(cols, 2 * self.present.shape[1]))
        # NOTE: keyed matrices first, ``present`` last: a reader that sees
        # the wider ``present`` finds every other matrix wide enough
        for name in self._KEYED:
            setattr(self, name, getattr(wider, name))
        for name, _array, _fill in self._arrays():
            setattr(self, name, getattr(wider, name))


def _resized(array, rows, cols, fill):
    out = np.full((rows, cols), fill, dtype=array.dtype, order="F")
    r = min(rows, array.shape[0])
    out[:r, :array.shape[1]] = array[:r]
    return out


def _pages_fit_columns(pages, memory_mb, page_size):
    """Rows x cells: guest memory fits one eligible page pool.

    :param pages: ``{size: free pages}``, each cut to the rows and cells
    """
    memory_kb = memory_mb * 1024
    sizes = sorted(pages)
    fits = None
    # the smallest pool each cell has: "small" uses only that one
    smallest = None
    for size in reversed(sizes):
        base = np.zeros(pages[size].shape, dtype=np.int64)
        smallest = np.where(pages[size] >= 0, size,
                            base if smallest is None else smallest)
    for size in sizes:
        has = pages[size] >= 0
        if fits is None:
            fits = np.zeros(has.shape, dtype=bool)
        if page_size == SMALL:
            eligible = has & (smallest == size)
        elif page_size == LARGE:
            eligible = has & (smallest != size)
        elif page_size in (ANY, size):
            eligible = has
        else:
            continue
        if memory_kb % size:
            continue
        fits |= eligible & (pages[size] * size >= memory_kb)
    return fits


def _threads_fit_columns(m, guest, policy):
    """Rows x cells: the pinned vCPUs can be placed as ``policy`` says
    (``m``: the cut matrices)."""
    threads, cores = m["threads"], m["cores"]
    if policy == REQUIRE:
        ok = np.zeros(threads.shape, dtype=bool)
        for t, free in cores.items():
            if t >= 2:
                ok |= (threads >= t) & (t * free >= guest.pinned)
        return ok
    if policy != ISOLATE:
        return np.ones(threads.shape, dtype=bool)
    whole = np.zeros(threads.shape, dtype=np.int64)
    for t, free in cores.items():
        whole = np.where(threads == t, free, whole)
    any_free = cores.get(1, np.zeros(threads.shape, dtype=np.int64))
    return (((threads <= 1) | m["legacy"]) & (whole >= guest.pinned)
            & (any_free - guest.pinned >= guest.reserved))


def _cell_fits_columns(m, guest, topology, cpu_ratio, ram_ratio):
    """Rows x cells: :func:`cell_fit` on the cut matrices ``m``."""
    cpus, memory, usage = m["cpus"], m["memory"], m["memory_usage"]
    ok = m["present"] & (guest.shared <= cpus)
    if topology.page_size is not None:
        pages = _pages_fit_columns(m["pages"], guest.memory_mb,
                                   topology.page_size)
        ok &= pages if pages is not None else False
    else:
        ok &= guest.memory_mb <= memory
    if topology.pinned:
        ok &= memory - usage >= guest.memory_mb
        ok &= m["free_pcpus"] >= guest.pinned + guest.reserved
        ok &= not _reserved_alone(guest.pinned, guest.reserved)
        ok &= _threads_fit_columns(m, guest, topology.thread_policy)
    else:
        ok &= m["cpu_usage"] + guest.shared <= cpus * cpu_ratio[:, None]
        if topology.page_size is None:
            ok &= usage + guest.memory_mb <= memory * ram_ratio[:, None]
    return ok


def _cut(columns, n):
    """The first ``n`` rows of every matrix, all as wide as ``present``
    (a reader never mixes widths while a writer widens)."""
    present = columns.present[:n]
    width = present.shape[1]
    m = {name: getattr(columns, name)[:n, :width]
         for name in NumaColumns._INT_FIELDS + NumaColumns._BOOL_FIELDS}
    m["present"] = present
    for name in NumaColumns._KEYED:
        m[name] = {key: matrix[:n, :width]
                   for key, matrix in getattr(columns, name).items()}
    return m


def fits_columns(columns, n, topology, cpu_ratio, ram_ratio):
    """Boolean array over the first ``n`` rows: ``topology`` fits.

    :param cpu_ratio, ram_ratio: per-row allocation ratios (arrays)
    """
    m = _cut(columns, n)
    cells = m["present"].shape[1]
    wanted = len(topology.cells)
    if wanted > cells:
        return np.zeros(n, dtype=bool)
    fit = {guest: _cell_fits_columns(m, guest, topology, cpu_ratio,
                                     ram_ratio)
           for guest in set(topology.cells)}
    if topology.symmetric:
        return fit[topology.cells[0]].sum(axis=1) >= wanted
    out = np.zeros(n, dtype=bool)
    for perm in itertools.islice(itertools.permutations(range(cells), wanted),
                                 MAX_PERMUTATIONS):
        ok = np.ones(n, dtype=bool)
        for i, j in enumerate(perm):
            ok &= fit[topology.cells[i]][:, j]
        out |= ok
    return out
