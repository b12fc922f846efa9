"""NUMA fitting for all hosts at once: every row's cells as ``rows x
cells`` matrices (:class:`NumaColumns`, kept in the host table) and the
vectorised form of ``fitting.place`` over them (:func:`fits_columns`).
"""

import itertools

import numpy as np

from gantt.scheduler.state.numa.fitting import reserved_alone
from gantt.scheduler.state.numa.model import ANY
from gantt.scheduler.state.numa.model import ISOLATE
from gantt.scheduler.state.numa.model import LARGE
from gantt.scheduler.state.numa.model import MAX_PERMUTATIONS
from gantt.scheduler.state.numa.model import REQUIRE
from gantt.scheduler.state.numa.model import SMALL


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
        ok &= not reserved_alone(guest.pinned, guest.reserved)
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
