"""Property test of CPU pinning: for random NUMA cells (SMT or not, legacy
or split CPU sets, busy or free) and random pinned, mixed, thread and
emulator threads policies, after random earlier instances of the request,
the NUMATopologyFilter's column path agrees with its per-host path, and
what an instance takes is what Nova's rules allow."""

from hypothesis import HealthCheck
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from gantt import exception
from gantt.objects import numa as numa_obj
from gantt.scheduler.pipeline.filters import numa_topology
from gantt.scheduler.state import numa
from gantt.tests import factories
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.scheduler import helpers

FILTER = numa_topology.NUMATopologyFilter(gantt_fixtures.make_conf())
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cell(draw, cell_id):
    threads = draw(st.sampled_from([1, 2, 4]))
    cores = draw(st.integers(0, 4))
    pcpus = list(range(cores * threads))
    siblings = [pcpus[i:i + threads] for i in range(0, len(pcpus), threads)]
    legacy = draw(st.booleans())
    shared = pcpus if legacy else list(range(100, 100 + draw(
        st.integers(0, 4))))
    reported = draw(st.booleans()) and threads > 1
    pages = draw(st.sampled_from([[], [(4, 524288), (2048, 1024)]]))
    return numa_obj.NUMACell(
        id=cell_id, cpuset=shared, pcpuset=pcpus,
        pinned_cpus=draw(st.lists(st.sampled_from(pcpus), unique=True))
        if pcpus else [],
        cpu_usage=draw(st.integers(0, 6)),
        memory_mb=draw(st.sampled_from([2048, 4096])),
        memory_usage_mb=draw(st.sampled_from([0, 1024, 3072])),
        siblings=siblings if reported else [],
        mempages=[numa_obj.NUMAPagePool(size_kb=s, total=t, used=t // 4)
                  for s, t in pages])


@st.composite
def fleet(draw):
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        cells = [draw(cell(c)) for c in range(draw(st.integers(0, 3)))]
        nodes.append(helpers.node(
            "h%d" % i, numa_cells=cells,
            cpu_ratio=draw(st.sampled_from([1.0, 4.0])),
            ram_ratio=draw(st.sampled_from([1.0, 1.5]))))
    return helpers.make_view(*nodes)


@st.composite
def flavor(draw):
    vcpus = draw(st.sampled_from([1, 2, 3, 4]))
    policy = draw(st.sampled_from(["dedicated", "mixed", None]))
    specs = {}
    if policy == "mixed":
        specs["hw:cpu_dedicated_mask"] = draw(st.sampled_from(
            ["0", "^0", "1,3", "0-1"]))
    if policy:
        specs["hw:cpu_policy"] = policy
        thread = draw(st.sampled_from([None, "prefer", "isolate",
                                       "require"]))
        if thread:
            specs["hw:cpu_thread_policy"] = thread
        if draw(st.booleans()):
            specs["hw:emulator_threads_policy"] = "isolate"
    nodes = draw(st.sampled_from([None, "1", "2"]))
    if nodes or not policy:
        specs["hw:numa_nodes"] = nodes or "1"
    if draw(st.integers(0, 3)) == 0:
        specs["hw:mem_page_size"] = draw(st.sampled_from(["large", "any"]))
    return factories.flavor(vcpus=vcpus, memory_mb=vcpus * 512,
                            extra_specs=specs)


def _request(flavor_obj):
    try:
        return helpers.make_request(flavor_obj)
    except exception.InvalidRequest:
        assume(False)


@SETTINGS
@given(fleet(), flavor(), st.lists(st.integers(0, 5), max_size=3))
def test_both_paths_agree_after_earlier_instances(view, flavor_obj, taken):
    request = _request(flavor_obj)
    for row in taken:
        if row < view.n:
            request.record_placement(view, row)
        columns, per_host = helpers.both_paths(FILTER, view, request)
        assert columns == per_host


@SETTINGS
@given(fleet(), flavor())
def test_what_an_instance_takes(view, flavor_obj):
    request = _request(flavor_obj)
    topology = request.numa
    for row in range(view.n):
        host = view.record(row)
        usage = numa.place(host.numa_cells, topology, host.ratio("VCPU"),
                           host.ratio("MEMORY_MB"))
        if usage is None:
            continue
        assert len({u.cell_id for u in usage}) == len(topology.cells)
        cells = {c.id: c for c in host.numa_cells}
        for guest, used in zip(topology.cells, usage, strict=True):
            _check_cell(cells[used.cell_id], guest, used, topology)


def _check_cell(cell, guest, used, topology):
    assert used.pinned <= cell.pcpuset
    assert used.shared == guest.shared
    if not topology.pinned:
        assert not used.pinned
        return
    wanted = guest.pinned + guest.reserved
    if topology.thread_policy != numa.ISOLATE:
        # exactly its own pCPUs, all of them free
        assert len(used.pinned) == wanted
        assert not used.pinned & cell.pinned
        return
    # isolate: whole cores, one vCPU (or the emulator pCPU) each
    touched = [core for core in cell.siblings if core & used.pinned]
    assert all(core & cell.pcpuset <= used.pinned for core in touched)
    assert len(touched) == wanted
    assert cell.threads == 1 or cell.legacy
