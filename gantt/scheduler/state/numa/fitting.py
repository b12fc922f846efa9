"""NUMA fitting on one host: where a guest topology goes on a host's
cells (pinned CPUs as Nova's ``_pack_instance_onto_cores`` picks them,
pages, memory) and what it then takes of them (Nova's
``numa_usage_from_instance_numa``).
"""

import collections
import dataclasses
import itertools

from gantt.scheduler.state.numa.model import ANY
from gantt.scheduler.state.numa.model import ISOLATE
from gantt.scheduler.state.numa.model import LARGE
from gantt.scheduler.state.numa.model import MAX_PERMUTATIONS
from gantt.scheduler.state.numa.model import REQUIRE
from gantt.scheduler.state.numa.model import SMALL
from gantt.scheduler.state.numa.model import CellUsage


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


def reserved_alone(count, reserved):
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
    if count + reserved > len(free) or reserved_alone(count, reserved):
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
