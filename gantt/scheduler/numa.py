"""NUMA fitting: a guest topology from hw: extra specs, and whether it fits
a host's NUMA cells, host by host and for all hosts at once.

The rules follow Nova's ``nova/virt/hardware.py``:

* a request has a NUMA topology when the flavor (or the image) asks for
  ``hw:numa_nodes`` / ``hw_numa_nodes``, ``hw:cpu_policy=dedicated`` /
  ``hw_cpu_policy`` or ``hw:mem_page_size`` / ``hw_mem_page_size``; the
  flavor wins over the image. Without ``numa_nodes`` it is one cell;
* vCPUs and memory are split evenly over the cells (an uneven split is an
  error) unless ``hw:numa_cpus.N`` / ``hw:numa_mem.N`` give every cell;
* each guest cell must fit a distinct host cell: dedicated vCPUs need as
  many free CPUs of the cell's ``pcpuset``; shared vCPUs may not exceed the
  cell's ``cpuset`` and, with the host's VCPU allocation ratio, its free
  capacity; memory without a page size must fit ``memory_mb`` times the
  host's MEMORY_MB allocation ratio; with a page size (``small`` = the
  smallest pool, ``large`` = every other pool, ``any`` = every pool, or a
  size) it must fit the free pages of one such pool, with no overcommit.

What is not modelled: CPU thread policies (``hw:cpu_thread_policy``),
``mixed`` CPU policy, emulator threads and PCI-NUMA affinity policies.
"""

import dataclasses
import itertools
import re

import numpy as np

from gantt import exception

SMALL = "small"
LARGE = "large"
ANY = "any"
_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)
_UNITS_KB = {"": 1, "K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}
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

    @classmethod
    def from_obj(cls, cell):
        return cls(
            id=cell.id, cpuset=frozenset(cell.cpuset),
            pcpuset=frozenset(cell.pcpuset),
            pinned=frozenset(cell.pinned_cpus), cpu_usage=cell.cpu_usage,
            memory_mb=cell.memory_mb, memory_usage_mb=cell.memory_usage_mb,
            pages=tuple(sorted(
                (PagePool(p.size_kb, p.total, p.used, p.reserved)
                 for p in cell.mempages), key=lambda p: p.size_kb)))

    @property
    def free_pcpus(self):
        return len(self.pcpuset - self.pinned)


@dataclasses.dataclass(frozen=True)
class GuestCell:
    cpus: int
    memory_mb: int


@dataclasses.dataclass(frozen=True)
class GuestTopology:
    cells: tuple               # of GuestCell
    dedicated: bool
    page_size: object          # None, SMALL, LARGE, ANY or a size in KiB

    @property
    def symmetric(self):
        return len(set(self.cells)) == 1


# -- the request --------------------------------------------------------------


def _setting(extra_specs, image_props, flavor_key, image_key):
    value = extra_specs.get(flavor_key)
    if value is None or value == "":
        value = image_props.get(image_key)
    return None if value in (None, "") else str(value).strip()


def parse_page_size(text):
    """``small``/``large``/``any`` or a size (``2048``, ``2MB``, ``1GiB``)
    as KiB."""
    lowered = text.lower()
    if lowered in (SMALL, LARGE, ANY):
        return lowered
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise exception.InvalidRequest(
            reason="hw:mem_page_size must be small, large, any or a size "
                   "such as 2048, 2MB or 1GB; got %r" % text)
    return int(match.group(1)) * _UNITS_KB[match.group(2).upper()]


def parse_cpu_spec(text):
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
            raise exception.InvalidRequest(
                reason="invalid CPU list %r" % text) from None
    return include - exclude


def _positive(value, what):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise exception.InvalidRequest(
            reason="%s must be a positive integer, got %r" % (what, value))
    return number


def _explicit_cells(extra_specs, nodes, vcpus, memory_mb):
    """``hw:numa_cpus.N``/``hw:numa_mem.N`` for every cell, or None."""
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
            raise exception.InvalidRequest(
                reason="hw:numa_cpus.%d and hw:numa_mem.%d are required "
                       "for every one of the %d NUMA nodes" % (
                           node, node, nodes))
        cpu_set = parse_cpu_spec(cpus)
        if seen & cpu_set:
            raise exception.InvalidRequest(
                reason="vCPU(s) %s are in more than one NUMA node"
                       % sorted(seen & cpu_set))
        seen |= cpu_set
        cells.append(GuestCell(len(cpu_set),
                               _positive(mem, "hw:numa_mem.%d" % node)))
    if seen != set(range(vcpus)) or sum(
            c.memory_mb for c in cells) != memory_mb:
        raise exception.InvalidRequest(
            reason="hw:numa_cpus.N must cover vCPUs 0-%d once and "
                   "hw:numa_mem.N must add up to %d MB" % (vcpus - 1,
                                                            memory_mb))
    return tuple(cells)


def guest_topology(flavor, image_props):
    """The :class:`GuestTopology` a request asks for, or None.

    :raises: InvalidRequest for specs Nova would refuse
    """
    specs = flavor.extra_specs
    nodes = _setting(specs, image_props, "hw:numa_nodes", "hw_numa_nodes")
    policy = _setting(specs, image_props, "hw:cpu_policy", "hw_cpu_policy")
    page = _setting(specs, image_props, "hw:mem_page_size",
                    "hw_mem_page_size")
    if policy not in (None, "shared", "dedicated"):
        raise exception.InvalidRequest(
            reason="hw:cpu_policy %r is not supported (shared or "
                   "dedicated)" % policy)
    dedicated = policy == "dedicated"
    if nodes is None and not dedicated and page is None:
        return None
    count = _positive(nodes, "hw:numa_nodes") if nodes is not None else 1
    vcpus, memory = flavor.vcpus, flavor.memory_mb
    if count > max(vcpus, 1):
        raise exception.InvalidRequest(
            reason="hw:numa_nodes=%d exceeds the flavor's %d vCPUs"
                   % (count, vcpus))
    cells = _explicit_cells(specs, count, vcpus, memory)
    if cells is None:
        if vcpus % count or memory % count:
            raise exception.InvalidRequest(
                reason="%d vCPUs and %d MB cannot be split evenly over %d "
                       "NUMA nodes; give hw:numa_cpus.N and hw:numa_mem.N"
                       % (vcpus, memory, count))
        cells = (GuestCell(vcpus // count, memory // count),) * count
    return GuestTopology(
        cells=cells, dedicated=dedicated,
        page_size=None if page is None else parse_page_size(page))


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


def _pages_fit(cell, memory_mb, page_size):
    memory_kb = memory_mb * 1024
    pools = {p.size_kb: p for p in cell.pages}
    for size in _page_candidates(cell, page_size):
        pool = pools[size]
        if memory_kb % size == 0 and pool.free * size >= memory_kb:
            return True
    return False


def cell_fits(cell, guest, topology, cpu_ratio, ram_ratio):
    """Whether guest cell ``guest`` fits host cell ``cell``."""
    if topology.dedicated:
        if cell.free_pcpus < guest.cpus:
            return False
    elif (guest.cpus > len(cell.cpuset)
          or cell.cpu_usage + guest.cpus > len(cell.cpuset) * cpu_ratio):
        return False
    if topology.page_size is not None:
        return _pages_fit(cell, guest.memory_mb, topology.page_size)
    return (guest.memory_mb <= cell.memory_mb
            and cell.memory_usage_mb + guest.memory_mb
            <= cell.memory_mb * ram_ratio)


def host_fits(cells, topology, cpu_ratio=1.0, ram_ratio=1.0):
    """Whether ``topology`` fits the host cells ``cells`` (distinct cells
    for distinct guest cells; any order)."""
    wanted = len(topology.cells)
    if wanted > len(cells):
        return False
    fits = [[cell_fits(c, g, topology, cpu_ratio, ram_ratio) for c in cells]
            for g in topology.cells]
    if topology.symmetric:
        return sum(fits[0]) >= wanted
    for perm in itertools.islice(
            itertools.permutations(range(len(cells)), wanted),
            MAX_PERMUTATIONS):
        if all(fits[i][j] for i, j in enumerate(perm)):
            return True
    return False


# -- all hosts ----------------------------------------------------------------


class NumaColumns:
    """Every row's NUMA cells as ``rows x cells`` matrices.

    Cell ``j`` of a row is the row's ``j``-th reported cell (``present``
    says which exist). Page pools are kept per page size in KiB.
    """

    _INT_FIELDS = ("cpus", "free_pcpus", "cpu_usage", "memory",
                   "memory_usage")

    def __init__(self, rows, cols=2):
        self.present = np.zeros((rows, cols), dtype=bool, order="F")
        for name in self._INT_FIELDS:
            setattr(self, name, np.zeros((rows, cols), dtype=np.int64,
                                         order="F"))
        # page size -> free pages (rows x cols), -1 = no pool of that size
        self.pages = {}

    def _arrays(self):
        yield "present", self.present, False
        for name in self._INT_FIELDS:
            yield name, getattr(self, name), 0

    def grown(self, rows=None, cols=None):
        rows = rows or self.present.shape[0]
        cols = max(cols or 0, self.present.shape[1])
        new = NumaColumns.__new__(NumaColumns)
        for name, array, fill in self._arrays():
            setattr(new, name, _resized(array, rows, cols, fill))
        new.pages = {size: _resized(array, rows, cols, -1)
                     for size, array in self.pages.items()}
        return new

    def write(self, row, cells):
        """Replace row ``row`` with ``cells`` (HostCell tuple)."""
        if len(cells) > self.present.shape[1]:
            self._widen(len(cells))
        for size in {p.size_kb for c in cells for p in c.pages}:
            if size not in self.pages:
                pages = dict(self.pages)
                pages[size] = np.full(self.present.shape, -1, dtype=np.int64,
                                      order="F")
                self.pages = pages
        self.present[row] = False
        for name in self._INT_FIELDS:
            getattr(self, name)[row] = 0
        for pages in self.pages.values():
            pages[row] = -1
        for j, cell in enumerate(cells):
            self.present[row, j] = True
            self.cpus[row, j] = len(cell.cpuset)
            self.free_pcpus[row, j] = cell.free_pcpus
            self.cpu_usage[row, j] = cell.cpu_usage
            self.memory[row, j] = cell.memory_mb
            self.memory_usage[row, j] = cell.memory_usage_mb
            for pool in cell.pages:
                self.pages[pool.size_kb][row, j] = pool.free

    def _widen(self, cols):
        wider = self.grown(cols=max(cols, 2 * self.present.shape[1]))
        # NOTE: page matrices first, ``present`` last: a reader that sees
        # the wider ``present`` finds every other matrix wide enough
        self.pages = wider.pages
        for name in self._INT_FIELDS:
            setattr(self, name, getattr(wider, name))
        self.present = wider.present


def _resized(array, rows, cols, fill):
    out = np.full((rows, cols), fill, dtype=array.dtype, order="F")
    r = min(rows, array.shape[0])
    out[:r, :array.shape[1]] = array[:r]
    return out


def _pages_fit_columns(columns, n, memory_mb, page_size):
    """Rows x cells: guest memory fits one eligible page pool."""
    memory_kb = memory_mb * 1024
    sizes = sorted(columns.pages)
    pages = {s: columns.pages[s][:n] for s in sizes}
    fits = np.zeros_like(columns.present[:n])
    # the smallest pool each cell has: "small" uses only that one
    smallest = np.zeros(fits.shape, dtype=np.int64)
    for size in reversed(sizes):
        smallest = np.where(pages[size] >= 0, size, smallest)
    for size in sizes:
        has = pages[size] >= 0
        if page_size == SMALL:
            eligible = has & (smallest == size)
        elif page_size == LARGE:
            eligible = has & (smallest != size)
        elif page_size == ANY:
            eligible = has
        elif page_size == size:
            eligible = has
        else:
            continue
        if memory_kb % size:
            continue
        fits |= eligible & (pages[size] * size >= memory_kb)
    return fits


def fits_columns(columns, n, topology, cpu_ratio, ram_ratio):
    """Boolean array over the first ``n`` rows: ``topology`` fits.

    :param cpu_ratio, ram_ratio: per-row allocation ratios (arrays)
    """
    present = columns.present[:n]
    cells = present.shape[1]
    wanted = len(topology.cells)
    fit = {}
    for guest in set(topology.cells):
        if topology.dedicated:
            cpu_ok = columns.free_pcpus[:n] >= guest.cpus
        else:
            cpus = columns.cpus[:n]
            cpu_ok = ((guest.cpus <= cpus)
                      & (columns.cpu_usage[:n] + guest.cpus
                         <= cpus * cpu_ratio[:, None]))
        if topology.page_size is not None:
            mem_ok = _pages_fit_columns(columns, n, guest.memory_mb,
                                        topology.page_size)
        else:
            memory = columns.memory[:n]
            mem_ok = ((guest.memory_mb <= memory)
                      & (columns.memory_usage[:n] + guest.memory_mb
                         <= memory * ram_ratio[:, None]))
        fit[guest] = present & cpu_ok & mem_ok
    if wanted > cells:
        return np.zeros(n, dtype=bool)
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
