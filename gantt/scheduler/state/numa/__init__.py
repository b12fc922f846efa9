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

The package, along those lines:

* ``model.py``: the records (host cells, guest topologies, CPU requests,
  what a guest cell takes) and the policy names;
* ``constraints.py``: a request's constraints from extra specs and image
  properties (:func:`cpu_request`, :func:`guest_topology`);
* ``fitting.py``: one host (:func:`place`, :func:`host_fits`,
  :func:`consumed`);
* ``columns.py``: all hosts at once (:class:`NumaColumns`,
  :func:`fits_columns`).

Callers use the names re-exported here (``numa.HostCell``,
``numa.place``, ...).
"""

from gantt.scheduler.state.numa.columns import NumaColumns
from gantt.scheduler.state.numa.columns import fits_columns
from gantt.scheduler.state.numa.constraints import cpu_request
from gantt.scheduler.state.numa.constraints import guest_topology
from gantt.scheduler.state.numa.constraints import parse_cpu_spec
from gantt.scheduler.state.numa.constraints import parse_page_size
from gantt.scheduler.state.numa.fitting import cell_fit
from gantt.scheduler.state.numa.fitting import cell_fits
from gantt.scheduler.state.numa.fitting import consumed
from gantt.scheduler.state.numa.fitting import host_fits
from gantt.scheduler.state.numa.fitting import pin
from gantt.scheduler.state.numa.fitting import place
from gantt.scheduler.state.numa.model import ANY
from gantt.scheduler.state.numa.model import CPU_POLICIES
from gantt.scheduler.state.numa.model import DEDICATED
from gantt.scheduler.state.numa.model import EMULATOR_POLICIES
from gantt.scheduler.state.numa.model import HYPERTHREADING
from gantt.scheduler.state.numa.model import ISOLATE
from gantt.scheduler.state.numa.model import LARGE
from gantt.scheduler.state.numa.model import MAX_PERMUTATIONS
from gantt.scheduler.state.numa.model import MIXED
from gantt.scheduler.state.numa.model import PREFER
from gantt.scheduler.state.numa.model import REQUIRE
from gantt.scheduler.state.numa.model import SHARED
from gantt.scheduler.state.numa.model import SMALL
from gantt.scheduler.state.numa.model import THREAD_POLICIES
from gantt.scheduler.state.numa.model import CellUsage
from gantt.scheduler.state.numa.model import CpuRequest
from gantt.scheduler.state.numa.model import GuestCell
from gantt.scheduler.state.numa.model import GuestTopology
from gantt.scheduler.state.numa.model import HostCell
from gantt.scheduler.state.numa.model import PagePool

__all__ = [
    "ANY",
    "CPU_POLICIES",
    "CellUsage",
    "CpuRequest",
    "DEDICATED",
    "EMULATOR_POLICIES",
    "GuestCell",
    "GuestTopology",
    "HYPERTHREADING",
    "HostCell",
    "ISOLATE",
    "LARGE",
    "MAX_PERMUTATIONS",
    "MIXED",
    "NumaColumns",
    "PREFER",
    "PagePool",
    "REQUIRE",
    "SHARED",
    "SMALL",
    "THREAD_POLICIES",
    "cell_fit",
    "cell_fits",
    "consumed",
    "cpu_request",
    "fits_columns",
    "guest_topology",
    "host_fits",
    "parse_cpu_spec",
    "parse_page_size",
    "pin",
    "place",
]
