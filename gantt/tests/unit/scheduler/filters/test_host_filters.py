"""Host-attribute filters: image properties, isolated hosts, metrics, JSON
queries and the Nova scoping rules of ComputeCapabilitiesFilter."""

import json

import pytest

from gantt import exception
from gantt.objects import request_spec
from gantt.scheduler.pipeline.filters import compute_capabilities
from gantt.scheduler.pipeline.filters import image_properties
from gantt.scheduler.pipeline.filters import isolated_hosts
from gantt.scheduler.pipeline.filters import json_filter
from gantt.scheduler.pipeline.filters import metrics
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

X86_QEMU = '[["x86_64", "qemu", "hvm"], ["i686", "qemu", "hvm"]]'
ARM_KVM = '[["aarch64", "kvm", "hvm"]]'


def _image(**props):
    return request_spec.ImageMeta(id="img-1", properties=props)


# -- ImagePropertiesFilter-----------------------------------------------------

@pytest.mark.parametrize("props, expected", [
    ({"hw_architecture": "x86_64"}, [True, False, False, False]),
    ({"hw_architecture": "aarch64", "img_hv_type": "kvm"},
     [False, True, False, False]),
    # aliases are canonicalised: amd64 is x86_64, i386 is i686
    ({"hw_architecture": "amd64"}, [True, False, False, False]),
    ({"hw_architecture": "i386", "hw_vm_mode": "hvm"},
     [True, False, False, False]),
    # all three must be in one triple
    ({"hw_architecture": "x86_64", "img_hv_type": "kvm"},
     [False, False, False, False]),
    # legacy names
    ({"architecture": "aarch64"}, [False, True, False, False]),
    # version predicates against hypervisor_version (6.2.0 and 8.0.0)
    ({"hw_architecture": "x86_64", "img_hv_requested_version": ">=6.0"},
     [True, False, False, False]),
    ({"hw_architecture": "x86_64", "img_hv_requested_version": ">= 7.0"},
     [False, False, False, False]),
    ({"hw_architecture": "aarch64", "img_hv_requested_version": ">=7,<9"},
     [False, True, False, False]),
])
def test_image_properties(conf, props, expected):
    view = helpers.make_view(
        helpers.node("x86", capabilities={
            "supported_instances": X86_QEMU, "hypervisor_version": "6002000"}),
        helpers.node("arm", capabilities={
            "supported_instances": ARM_KVM, "hypervisor_version": "8000000"}),
        helpers.node("none", capabilities={"supported_instances": "[]"}),
        helpers.node("silent"))
    request = helpers.make_request(image=_image(**props))
    flt = image_properties.ImagePropertiesFilter(conf)
    assert flt.applies(request)
    helpers.assert_both_paths(flt, view, request, expected)


def test_images_without_those_properties_go_anywhere(conf):
    flt = image_properties.ImagePropertiesFilter(conf)
    assert not flt.applies(helpers.make_request(
        image=_image(os_distro="ubuntu")))
    conf.set_override("image_properties_default_architecture", "x86_64",
                      "filter_scheduler")
    request = helpers.make_request(image=_image(os_distro="ubuntu"))
    assert flt.applies(request)
    view = helpers.make_view(helpers.node("x86", capabilities={
        "supported_instances": X86_QEMU}), helpers.node("other"))
    helpers.assert_both_paths(flt, view, request, [True, False])


@pytest.mark.parametrize("version, requirement, expected", [
    ("6002000", ">=6.2", True), ("6002000", ">6.2", False),
    ("6002000", "==6.2.0", True), ("2000", ">=2.0", True),
    (None, ">=99", True),          # no version reported: not checked
    ("6002000", "nonsense", False),
])
def test_version_predicates(version, requirement, expected):
    assert image_properties.version_satisfies(version,
                                              requirement) is expected


# -- IsolatedHostsFilter-------------------------------------------------------

@pytest.mark.parametrize("restrict, image, expected", [
    # isolated image: only on isolated hosts
    (True, "iso", [True, False]),
    (False, "iso", [True, False]),
    # other images: not on isolated hosts when restricted
    (True, "plain", [False, True]),
    (False, "plain", [True, True]),
    # boot from volume (no image) is not isolated
    (True, None, [False, True]),
])
def test_isolated_hosts(conf, restrict, image, expected):
    conf.set_override("isolated_images", ["iso"], "filter_scheduler")
    conf.set_override("isolated_hosts", ["island"], "filter_scheduler")
    conf.set_override("restrict_isolated_hosts_to_isolated_images", restrict,
                      "filter_scheduler")
    view = helpers.make_view(helpers.node("island"), helpers.node("main"))
    request = helpers.make_request(
        image=request_spec.ImageMeta(id=image) if image else None)
    helpers.assert_both_paths(isolated_hosts.IsolatedHostsFilter(conf),
                              view, request, expected)


def test_isolated_hosts_without_images_only_restrict(conf):
    flt = isolated_hosts.IsolatedHostsFilter(conf)
    assert not flt.applies(helpers.make_request())    # nothing isolated
    conf.set_override("isolated_hosts", ["island"], "filter_scheduler")
    assert flt.applies(helpers.make_request())
    view = helpers.make_view(helpers.node("island"), helpers.node("main"))
    helpers.assert_both_paths(flt, view, helpers.make_request(),
                              [False, True])
    conf.set_override("restrict_isolated_hosts_to_isolated_images", False,
                      "filter_scheduler")
    helpers.assert_both_paths(flt, view, helpers.make_request(),
                              [True, True])


# -- MetricsFilter-------------------------------------------------------------

def test_metrics_filter_wants_every_weighed_metric(conf):
    conf.set_override("weight_setting", ["cpu=1.0", "mem=-2", "bad"],
                      "metrics")
    view = helpers.make_view(
        helpers.node("both", metrics={"cpu": 1.0, "mem": 0.0}),
        helpers.node("one", metrics={"cpu": 1.0}),
        helpers.node("other", metrics={"mem": 0.0}),
        helpers.node("none"))
    flt = metrics.MetricsFilter(conf)
    assert flt.applies(helpers.make_request())
    helpers.assert_both_paths(flt, view, helpers.make_request(),
                              [True, False, False, False])
    conf.set_override("weight_setting", [], "metrics")
    assert not flt.applies(helpers.make_request())


# -- JsonFilter----------------------------------------------------------------

def _json_view():
    return helpers.make_view(
        helpers.node("big", memory_mb=65536, vcpus=32, num_instances=2,
                     reserved_memory_mb=512,
                     capabilities={"hypervisor_type": "QEMU"}),
        helpers.node("small", memory_mb=2048, vcpus=4, num_instances=9),
        usages={"small": {"MEMORY_MB": 1024, "VCPU": 2}})


COLUMNS, HOST_BY_HOST = True, False


@pytest.mark.parametrize("query, expected, on_columns", [
    ([">=", "$free_ram_mb", 2048], [True, False], COLUMNS),
    (["<", "$free_ram_mb", 2048], [False, True], COLUMNS),
    # free is total - reserved - used
    (["=", "$free_ram_mb", 65024, 1024], [False, False], COLUMNS),
    (["in", "$free_ram_mb", 65024, 1024], [True, True], COLUMNS),
    (["=", "$total_usable_ram_mb", 65536], [True, False], COLUMNS),
    (["=", "$vcpus_used", 2], [False, True], COLUMNS),
    (["=", "$vcpus_used", 0], [True, False], COLUMNS),
    (["and", [">", "$vcpus_total", 8], ["<", "$num_instances", 5]],
     [True, False], COLUMNS),
    (["or", [">", "$vcpus_total", 8], [">", "$num_instances", 5]],
     [True, True], COLUMNS),
    # the first argument against every other one
    ([">", "$vcpus_total", 8, 2], [True, False], COLUMNS),
    (["in", "$num_instances", 1, 2, 3], [True, False], COLUMNS),
    (["in", "$num_instances", 2, 7], [True, False], COLUMNS),
    # literals in and/or
    (["and", True, [">", "$vcpus_total", 8]], [True, False], COLUMNS),
    (["or", 0, [">", "$vcpus_total", 8]], [True, False], COLUMNS),
    # one argument is not enough for a comparison
    ([">", 5], [False, False], COLUMNS),
    (["not", ["=", "$host", "big"]], [False, True], HOST_BY_HOST),
    (["not", 0], [True, True], HOST_BY_HOST),
    (["=", "$capabilities.hypervisor_type", "QEMU"], [True, False],
     HOST_BY_HOST),
    (["=", "$hypervisor_type", "QEMU"], [True, False], HOST_BY_HOST),
    # free_disk_mb is in MB, total_usable_disk_gb in GB
    ([">=", "$free_disk_mb", 1024000], [True, True], COLUMNS),
    (["=", "$free_disk_mb", 1024000], [True, True], COLUMNS),
    (["=", "$total_usable_disk_gb", 1000], [True, True], COLUMNS),
    # an unknown variable is dropped, leaving one argument: false
    (["=", "$nope", 1], [False, False], HOST_BY_HOST),
    # so is an empty string
    (["=", "$host", "", "big"], [True, False], HOST_BY_HOST),
    # a string is true (per host, as "$x" may be dropped)
    (["or", "$host", ["<", "$num_instances", 0]], [True, True],
     HOST_BY_HOST),
    # a string against a number is false, not an error
    (["<", "$host", 5], [False, False], HOST_BY_HOST),
    ([], [True, True], COLUMNS),
])
def test_json_filter(conf, query, expected, on_columns):
    """Numeric queries run on columns, the others host by host; both give
    Nova's answer."""
    request = helpers.make_request(
        scheduler_hints={"query": [json.dumps(query)]})
    flt = json_filter.JsonFilter(conf)
    assert flt.applies(request)
    assert not flt.applies(helpers.make_request())
    columns, per_host = helpers.both_paths(flt, _json_view(), request)
    assert per_host == expected
    assert columns == (expected if on_columns else None)


def test_a_host_without_the_class_has_no_such_attribute(conf):
    # a diskless host (its disk comes from a pool) has no free_disk_mb:
    # the argument is dropped there and the comparison is false, as it is
    # for an unknown attribute, not a comparison against 0
    diskless = helpers.node("diskless")
    diskless.inventories = [i for i in diskless.inventories
                            if i.resource_class != "DISK_GB"]
    view = helpers.make_view(helpers.node("disk"), diskless)
    request = helpers.make_request(scheduler_hints={"query": [json.dumps(
        ["<", "$free_disk_mb", 2048000])]})
    columns, per_host = helpers.both_paths(json_filter.JsonFilter(conf),
                                           view, request)
    assert per_host == [True, False]
    assert columns in (None, per_host)


@pytest.mark.parametrize("query, reason", [
    ("not json", "scheduler hint query is not JSON: Expecting value"),
    ('{"a": 1}', "scheduler hint query must be a JSON list"),
    ('["xor", 1, 2]', "unknown query operator 'xor'"),
    ('["and", ["xor", 1, 2]]', "unknown query operator 'xor'"),
])
def test_bad_json_queries_are_invalid_requests(conf, query, reason):
    request = helpers.make_request(scheduler_hints={"query": [query]})
    with pytest.raises(exception.InvalidRequest) as raised:
        json_filter.JsonFilter(conf).applies(request)
    assert str(raised.value).startswith("Invalid request: " + reason)


# -- ComputeCapabilitiesFilter: Nova's scoping---------------------------------

@pytest.mark.parametrize("specs, expected", [
    # unscoped keys are capabilities too (Nova)
    ({"hypervisor_type": "QEMU"}, [True, False]),
    # a nested key inside a JSON capability
    ({"capabilities:cpu_info:arch": "x86_64"}, [True, False]),
    ({"capabilities:cpu_info:features": "<in> avx2"}, [True, False]),
    # a name the capabilities lack is looked up in the stats
    ({"capabilities:gpu_count": ">= 2"}, [False, True]),
    # other scopes are ignored
    ({"aggregate_instance_extra_specs:x": "y", "hypervisor_type": "QEMU"},
     [True, False]),
    # every spec must hold, the first as much as the last
    ({"capabilities:gpu_count": ">= 2", "gpu_count": ">= 1"},
     [False, True]),
])
def test_capability_lookups(conf, specs, expected):
    view = helpers.make_view(
        helpers.node("h1", capabilities={
            "hypervisor_type": "QEMU",
            "cpu_info": '{"arch": "x86_64", "features": ["avx", "avx2"]}'},
            stats={"gpu_count": "1"}),
        helpers.node("h2", stats={"gpu_count": "4"}))
    request = helpers.make_request(factories.flavor(extra_specs=specs))
    helpers.assert_both_paths(
        compute_capabilities.ComputeCapabilitiesFilter(conf), view, request,
        expected)


@pytest.mark.parametrize("specs, expected", [
    # a capability decides before a stat of the same name
    ({"capabilities:gpu_count": ">= 2"}, [False, True, False]),
    # flat, nested in JSON, or a stat: whichever the host reports
    ({"capabilities:cpu_info:arch": "x86_64"}, [True, False, True]),
])
def test_hosts_reporting_a_value_in_different_places(conf, specs, expected):
    view = helpers.make_view(
        helpers.node("h1", capabilities={
            "gpu_count": "1", "cpu_info": '{"arch": "x86_64"}'},
            stats={"gpu_count": "4"}),
        helpers.node("h2", capabilities={"cpu_info:arch": "aarch64"},
                     stats={"gpu_count": "4"}),
        helpers.node("h3", stats={"cpu_info:arch": "x86_64"}))
    request = helpers.make_request(factories.flavor(extra_specs=specs))
    helpers.assert_both_paths(
        compute_capabilities.ComputeCapabilitiesFilter(conf), view, request,
        expected)
