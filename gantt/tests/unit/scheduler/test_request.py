"""RequestSpec validation and its translation into a ResourceRequest."""

import pytest

from gantt import exception
from gantt.objects import request_spec
from gantt.scheduler import vocabulary
from gantt.scheduler.pipeline import translate
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"


def _build(flavor=None, lookup=None, instance_uuids=None, **spec_fields):
    spec = factories.request(flavor, **spec_fields)
    if instance_uuids is None:
        instance_uuids = factories.uuids(1)
    return translate.from_spec(spec, instance_uuids,
                                 lookup or helpers.FakeLookup())


def _group(suffix, request):
    [group] = [g for g in request.groups if g.suffix == suffix]
    return group


# -- flavor -> resources ------------------------------------------------------


@pytest.mark.parametrize("flavor_fields, resources", [
    ({"vcpus": 2, "memory_mb": 4096, "root_gb": 20},
     {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}),
    ({"vcpus": 1, "memory_mb": 512, "root_gb": 10, "ephemeral_gb": 5},
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 15}),
    # swap is in MB, rounded up to whole GB
    ({"vcpus": 1, "memory_mb": 512, "root_gb": 10, "swap": 1},
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 11}),
    ({"vcpus": 1, "memory_mb": 512, "root_gb": 10, "swap": 1024},
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 11}),
    ({"vcpus": 1, "memory_mb": 512, "root_gb": 10, "swap": 1025},
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 12}),
    # zero amounts are not requested at all (a diskless flavor)
    ({"vcpus": 1, "memory_mb": 512, "root_gb": 0},
     {"VCPU": 1, "MEMORY_MB": 512}),
    ({"vcpus": 0, "memory_mb": 0, "root_gb": 0, "swap": 512},
     {"DISK_GB": 1}),
])
def test_flavor_to_resources(flavor_fields, resources):
    request = _build(request_spec.Flavor(**flavor_fields))
    assert request.resources == resources
    assert _group("", request).resources == resources


@pytest.mark.parametrize("extra_specs, resources, required, forbidden", [
    ({"resources:VCPU": "0"},
     {"MEMORY_MB": 2048, "DISK_GB": 20}, set(), set()),
    ({"resources:VCPU": "4"},
     {"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 20}, set(), set()),
    ({"resources:CUSTOM_FOO": "2"},
     {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20, "CUSTOM_FOO": 2},
     set(), set()),
    ({"resources:CUSTOM_FOO": "0"},
     {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20}, set(), set()),
    ({"trait:HW_CPU_X86_AVX2": "required"},
     {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20},
     {"HW_CPU_X86_AVX2"}, set()),
    ({"trait:HW_CPU_X86_AVX2": "forbidden", "trait:CUSTOM_GOLD": "required"},
     {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20},
     {"CUSTOM_GOLD"}, {"HW_CPU_X86_AVX2"}),
    # other extra specs are for other filters, not resources
    ({"capabilities:hypervisor_type": "QEMU"},
     {"VCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20}, set(), set()),
    # pinned vCPUs are PCPU, as Nova asks Placement since Train (no VCPU
    # fallback: Nova dropped [workarounds] disable_fallback_pcpu_query)
    ({"capabilities:hypervisor_type": "QEMU", "hw:cpu_policy": "dedicated"},
     {"PCPU": 1, "MEMORY_MB": 2048, "DISK_GB": 20}, set(), set()),
])
def test_extra_specs_shape_the_unsuffixed_group(extra_specs, resources,
                                                required, forbidden):
    request = _build(factories.flavor(extra_specs=extra_specs))
    group = _group("", request)
    assert group.resources == resources
    assert group.required_traits == required
    assert group.forbidden_traits == forbidden
    assert request.extra_specs == extra_specs


def test_suffixed_extra_specs_make_their_own_group():
    request = _build(factories.flavor(extra_specs={
        "resources1:CUSTOM_FPGA": "1", "trait1:CUSTOM_FAST": "required",
        "resources_gpu:VGPU": "2", "group_policy": "isolate"}))
    assert [g.suffix for g in request.groups] == ["", "1", "_gpu"]
    # the flavor's group_policy extra spec, as Nova reads it
    assert request.group_policy == "isolate"
    assert _group("1", request).resources == {"CUSTOM_FPGA": 1}
    assert _group("1", request).required_traits == {"CUSTOM_FAST"}
    assert _group("_gpu", request).resources == {"VGPU": 2}
    assert request.resources == {"VCPU": 1, "MEMORY_MB": 2048,
                                 "DISK_GB": 20, "CUSTOM_FPGA": 1, "VGPU": 2}


def test_explicit_request_group_merges_with_the_same_suffix():
    request = _build(request_groups=[
        request_spec.RequestGroup(resources={"VCPU": 1},
                                  required_traits=["CUSTOM_A"],
                                  member_of=[["agg1", "agg2"]]),
        request_spec.RequestGroup(suffix="2", resources={"CUSTOM_NIC": 1})])
    group = _group("", request)
    assert group.resources["VCPU"] == 2
    assert group.required_traits == {"CUSTOM_A"}
    assert group.member_of == (frozenset(["agg1", "agg2"]),)
    assert _group("2", request).resources == {"CUSTOM_NIC": 1}


@pytest.mark.parametrize("fields, check", [
    ({"availability_zone": "az1"},
     lambda r: r.availability_zone == "az1"),
    ({"force_hosts": ["h1"]},
     lambda r: r.forced and r.force_hosts == {"h1"}),
    ({"force_nodes": ["n1"]}, lambda r: r.forced),
    ({"ignore_hosts": ["h9"]},
     lambda r: not r.forced and r.ignore_hosts == {"h9"}),
    ({"group_policy": "isolate"}, lambda r: r.group_policy == "isolate"),
    ({}, lambda r: r.group_policy == "none" and r.instance_group is None),
    ({"image": request_spec.ImageMeta(properties={"hw_arch": "x86_64"})},
     lambda r: r.image_properties == {"hw_arch": "x86_64"}),
])
def test_spec_fields_reach_the_request(fields, check):
    assert check(_build(**fields))


def test_hint_hosts_come_from_the_lookup():
    a, b, c = factories.uuids(3)
    lookup = helpers.FakeLookup(consumer_hosts={a: "h1", b: "h2"})
    request = _build(lookup=lookup, scheduler_hints={
        "same_host": [a, c], "different_host": [b]})
    assert request.same_host == {"h1"}
    assert request.different_host == {"h2"}


def test_no_hints_mean_no_hint_filtering():
    request = _build()
    assert request.same_host is None
    assert request.different_host is None


# -- invalid requests ---------------------------------------------------------


def _extra(specs):
    return {"flavor": factories.flavor(extra_specs=specs)}


@pytest.mark.parametrize("kwargs, named", [
    (_extra({"resources:FOO": "1"}), "'FOO'"),
    (_extra({"resources:custom_foo": "1"}), "'custom_foo'"),
    (_extra({"resources:VCPU": "-1"}), "-1"),
    (_extra({"resources:VCPU": "two"}), "'two'"),
    (_extra({"trait:NOT_A_TRAIT": "required"}), "'NOT_A_TRAIT'"),
    (_extra({"trait:HW_CPU_X86_AVX2": "preferred"}), "'preferred'"),
    ({"request_groups": [request_spec.RequestGroup(
        resources={"BOGUS": 1})]}, "'BOGUS'"),
    ({"request_groups": [request_spec.RequestGroup(
        resources={"VCPU": -3})]}, "-3"),
    ({"request_groups": [request_spec.RequestGroup(
        required_traits=["NOPE"])]}, "'NOPE'"),
    ({"request_groups": [request_spec.RequestGroup(
        forbidden_traits=["NOPE2"])]}, "'NOPE2'"),
    ({"request_groups": [request_spec.RequestGroup(
        any_traits=[["CUSTOM_OK", "NOPE3"]])]}, "'NOPE3'"),
    ({"flavor": request_spec.Flavor()}, "no resources"),
    ({"instance_uuids": []}, "no instance uuids"),
    ({"instance_uuids": ["a", "b", "a"]}, "repeat"),
    ({"instance_uuids": [f"u{i}" for i in range(1001)]}, "at most 1000"),
])
def test_invalid_request_names_the_bad_value(kwargs, named):
    with pytest.raises(exception.InvalidRequest) as raised:
        _build(**kwargs)
    assert named in str(raised.value)
    assert str(raised.value).startswith("Invalid request: ")


def test_a_request_without_flavor_nor_groups_is_invalid():
    spec = request_spec.RequestSpec()
    with pytest.raises(exception.InvalidRequest, match="no resources"):
        translate.from_spec(spec, factories.uuids(1), helpers.FakeLookup())


@pytest.mark.parametrize("name, valid", [
    ("VCPU", True), ("MEMORY_MB", True), ("CUSTOM_GPU_A100", True),
    ("CUSTOM_", False), ("CUSTOM_lower", False), ("GPU", False),
    ("", False), (None, False),
])
def test_validate_resource_class(name, valid):
    if valid:
        assert vocabulary.validate_resource_class(name) == name
    else:
        with pytest.raises(exception.InvalidRequest):
            vocabulary.validate_resource_class(name)


@pytest.mark.parametrize("name, valid", [
    ("HW_CPU_X86_AVX2", True), ("COMPUTE_STATUS_DISABLED", True),
    ("CUSTOM_GOLD", True), ("HW_CPU_X86_NOPE", False), ("custom_x", False),
])
def test_validate_trait(name, valid):
    if valid:
        assert vocabulary.validate_trait(name) == name
    else:
        with pytest.raises(exception.InvalidRequest, match=name):
            vocabulary.validate_trait(name)


# -- server groups ------------------------------------------------------------


def _with_group(policy, rules=None, hosts=(), lookup=None):
    return _build(lookup=lookup, instance_group=request_spec.InstanceGroup(
        uuid=GROUP, policy=policy, rules=dict(rules or {}),
        hosts=list(hosts)))


@pytest.mark.parametrize("rules, max_per_host", [
    ({}, 1),
    ({"max_server_per_host": "1"}, 1),
    ({"max_server_per_host": "3"}, 3),
    ({"max_server_per_host": " 2 "}, 2),
])
def test_max_server_per_host_rule(rules, max_per_host):
    group = _with_group("anti-affinity", rules).instance_group
    assert group.max_per_host == max_per_host
    assert group.is_hard


@pytest.mark.parametrize("policy, rules, named", [
    ("anti-affinity", {"max_server_per_host": "0"}, "at least 1"),
    ("anti-affinity", {"max_server_per_host": "-1"}, "-1"),
    ("anti-affinity", {"max_server_per_host": "many"}, "'many'"),
    ("affinity", {"max_server_per_host": "2"}, "only applies to anti"),
    ("soft-anti-affinity", {"max_server_per_host": "2"},
     "only applies to anti"),
])
def test_invalid_max_server_per_host(policy, rules, named):
    with pytest.raises(exception.InvalidRequest) as raised:
        _with_group(policy, rules)
    assert named in str(raised.value)


@pytest.mark.parametrize("policy, hard", [
    ("affinity", True), ("anti-affinity", True),
    ("soft-affinity", False), ("soft-anti-affinity", False),
])
def test_group_policy_hardness(policy, hard):
    assert _with_group(policy).instance_group.is_hard is hard


def test_group_hosts_merge_database_and_caller_knowledge():
    lookup = helpers.FakeLookup(group_hosts={GROUP: {"h1": 2}})
    group = _with_group("anti-affinity", hosts=["h1", "h2"],
                        lookup=lookup).instance_group
    # the database count wins; a host only the caller knows counts once
    assert dict(group.hosts) == {"h1": 2, "h2": 1}
    assert group.uuid == GROUP


# -- what Placement refuses -------------------------------------------------

@pytest.mark.parametrize("groups, extra_specs", [
    # a granular group asking for a trait and its absence
    ([request_spec.RequestGroup(suffix="1", resources={"VCPU": 1},
                                required_traits=["HW_CPU_X86_AVX2"],
                                forbidden_traits=["HW_CPU_X86_AVX2"])], {}),
    # the unsuffixed group: required by the flavor, forbidden by the caller
    ([request_spec.RequestGroup(forbidden_traits=["HW_CPU_X86_AVX2"])],
     {"trait:HW_CPU_X86_AVX2": "required"}),
    # an any-of set whose every trait is forbidden
    ([request_spec.RequestGroup(
        suffix="1", resources={"VCPU": 1},
        any_traits=[["CUSTOM_A", "CUSTOM_B"]],
        forbidden_traits=["CUSTOM_A", "CUSTOM_B"])], {}),
])
def test_requiring_and_forbidding_one_trait_is_invalid(groups, extra_specs):
    with pytest.raises(exception.InvalidRequest,
                       match="both requires and forbids"):
        _build(factories.flavor(extra_specs=extra_specs),
               request_groups=groups)


def test_any_of_traits_with_one_allowed_trait_is_valid():
    request = _build(request_groups=[request_spec.RequestGroup(
        suffix="1", resources={"VCPU": 1},
        any_traits=[["CUSTOM_A", "CUSTOM_B"]],
        forbidden_traits=["CUSTOM_A"])])
    assert _group("1", request).forbidden_traits == {"CUSTOM_A"}


def test_flavor_groups_without_a_policy_are_invalid():
    # Placement answers 400 to two numbered groups and no group_policy
    with pytest.raises(exception.InvalidRequest, match="group_policy"):
        _build(factories.flavor(extra_specs={
            "resources1:CUSTOM_FPGA": "1", "resources2:VGPU": "1"}))


def test_groups_from_ports_default_to_policy_none():
    # as Nova: at most one numbered group from the flavor, the others
    # from the caller (ports), and no policy: Nova sends "none"
    request = _build(
        factories.flavor(extra_specs={"resources1:CUSTOM_FPGA": "1"}),
        request_groups=[request_spec.RequestGroup(
            suffix="port", resources={"NET_BW_EGR_KILOBIT_PER_SEC": 10})])
    assert request.group_policy == "none"


def test_an_unknown_group_policy_is_invalid():
    with pytest.raises(exception.InvalidRequest, match="group_policy"):
        _build(factories.flavor(extra_specs={"group_policy": "spread"}))


def test_an_unreported_custom_trait_is_accepted():
    # Gantt keeps no trait registry (Placement would answer 400): a
    # required one nobody reports matches no host, a forbidden one none
    request = _build(factories.flavor(extra_specs={
        "trait:CUSTOM_NOBODY_HAS_IT": "required"}))
    assert "CUSTOM_NOBODY_HAS_IT" in request.required_traits


def test_an_image_s_required_traits_join_the_flavor_s():
    """Nova's ``traits_required`` image metadata (``trait:T=required``)
    is required of the host, with the flavor's own traits."""
    request = _build(
        factories.flavor(extra_specs={"trait:HW_CPU_X86_SGX": "required"}),
        image=request_spec.ImageMeta(id="img", properties={
            "trait:HW_CPU_X86_VMX": "required", "os": "linux"}))
    assert _group("", request).required_traits == {"HW_CPU_X86_SGX",
                                                   "HW_CPU_X86_VMX"}


def test_an_image_trait_that_is_no_trait_is_invalid():
    with pytest.raises(exception.InvalidRequest):
        _build(image=request_spec.ImageMeta(id="img", properties={
            "trait:not a trait": "required"}))
