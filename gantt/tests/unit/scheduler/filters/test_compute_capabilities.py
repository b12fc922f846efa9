"""ComputeCapabilitiesFilter: ``capabilities:`` extra specs vs the host."""

import numpy as np
import pytest

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline.filters import compute_capabilities
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

CAPS = {"hypervisor_type": "QEMU", "cpu_arch": "x86_64", "vcpus": "16",
        "cpu_info:features": "avx avx2 sse4.2"}


@pytest.mark.parametrize("extra_specs, expected", [
    ({"capabilities:hypervisor_type": "QEMU"}, True),
    ({"capabilities:hypervisor_type": "s== kvm"}, False),
    ({"capabilities:cpu_arch": "<or> aarch64 <or> x86_64"}, True),
    ({"capabilities:vcpus": ">= 8"}, True),
    ({"capabilities:vcpus": ">= 32"}, False),
    ({"capabilities:cpu_info:features": "<all-in> avx2 sse4.2"}, True),
    ({"capabilities:cpu_info:features": "<all-in> avx512f"}, False),
    # every expression must match
    ({"capabilities:hypervisor_type": "QEMU",
      "capabilities:cpu_arch": "aarch64"}, False),
    # a key the host does not report never matches
    ({"capabilities:numa_nodes": "2"}, False),
    # other extra specs are not this filter's business
    ({"capabilities:cpu_arch": "x86_64", "hw:cpu_policy": "dedicated"}, True),
])
def test_compute_capabilities(conf, extra_specs, expected):
    view = helpers.make_view(
        helpers.node("h1", capabilities=CAPS),
        helpers.node("bare"))
    request = helpers.make_request(factories.flavor(extra_specs=extra_specs))
    flt = compute_capabilities.ComputeCapabilitiesFilter(conf)
    assert flt.applies(request)
    columns, per_host = helpers.both_paths(flt, view, request)
    # the column form (one evaluation per distinct value) agrees
    assert columns == per_host
    assert per_host == [expected, False]
    runner_path = filters.FilterRunner._passes(
        flt, view, request, np.ones(view.n, dtype=bool))
    assert list(runner_path) == [expected, False]


@pytest.mark.parametrize("extra_specs", [
    {}, {"hw:cpu_policy": "dedicated"}, {"trait:HW_CPU_X86_AVX2": "required"},
])
def test_applies_only_with_capability_specs(conf, extra_specs):
    request = helpers.make_request(factories.flavor(extra_specs=extra_specs))
    flt = compute_capabilities.ComputeCapabilitiesFilter(conf)
    assert not flt.applies(request)


def _nova_view():
    """A host reporting a JSON cpu_info with a feature list and the
    physical address bits, and stats; a bare host."""
    cpu_info = ('{"arch": "x86_64", "features": ["avx", "avx2", "sse4.2"],'
                ' "maxphysaddr": {"mode": "passthrough", "bits": 46}}')
    return helpers.make_view(
        helpers.node("h1", capabilities={"cpu_info": cpu_info},
                     stats={"gpu_count": "2", "failed_builds": "0"}),
        helpers.node("bare"))


@pytest.mark.parametrize("extra_specs, expected", [
    # an unscoped key no host reports is ignored, as Nova does
    ({"some_unknown_key": "x"}, [True, True]),
    ({"some_unknown_key": "x", "capabilities:cpu_info:arch": "x86_64"},
     [True, False]),
    # ...but an unscoped key a host reports is checked on that host
    ({"gpu_count": ">= 4"}, [False, True]),
    ({"gpu_count": ">= 2"}, [True, True]),
    # ...and a HostState attribute is checked everywhere
    ({"hypervisor_type": "QEMU"}, [False, False]),
    # capabilities:stats:X is the stat X
    ({"capabilities:stats:gpu_count": ">= 2"}, [True, False]),
    ({"capabilities:stats:gpu_count": ">= 3"}, [False, False]),
    # <all-in> over a JSON list value
    ({"capabilities:cpu_info:features": "<all-in> avx2 sse4.2"},
     [True, False]),
    ({"capabilities:cpu_info:features": "<all-in> avx512f"},
     [False, False]),
    # hw:maxphysaddr_bits asks for at least that many bits
    ({"hw:maxphysaddr_bits": "46"}, [True, False]),
    ({"hw:maxphysaddr_bits": "48"}, [False, False]),
])
def test_nova_s_lookups(conf, extra_specs, expected):
    request = helpers.make_request(factories.flavor(extra_specs=extra_specs))
    flt = compute_capabilities.ComputeCapabilitiesFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, _nova_view(), request, expected)


def test_an_unscoped_key_is_checked_as_a_capability_or_a_stat(conf):
    # hosts report gpu_model in either dict: each is judged on its own
    # value, and a host that reports it in neither is not checked
    view = helpers.make_view(
        helpers.node("cap", capabilities={"gpu_model": "a100"}),
        helpers.node("stat", stats={"gpu_model": "a100"}),
        helpers.node("other", stats={"gpu_model": "t4"}),
        helpers.node("bare"))
    request = helpers.make_request(factories.flavor(
        extra_specs={"gpu_model": "a100"}))
    helpers.assert_both_paths(
        compute_capabilities.ComputeCapabilitiesFilter(conf), view, request,
        [True, True, False, True])


def test_stats_alone_is_a_name_like_any_other(conf):
    # only capabilities:stats:X means the stat X; capabilities:stats is
    # what the host reports under the name "stats"
    view = helpers.make_view(helpers.node("h1", capabilities={"stats": "on"}),
                             helpers.node("h2", stats={"stats": "on"}),
                             helpers.node("bare"))
    request = helpers.make_request(factories.flavor(
        extra_specs={"capabilities:stats": "on"}))
    helpers.assert_both_paths(
        compute_capabilities.ComputeCapabilitiesFilter(conf), view, request,
        [True, True, False])
