"""ImagePropertiesFilter's rules: the legacy property names, a host's
list of supported instances that does not parse, and Nova's comparison of
``img_hv_requested_version`` with the reported version. (Written to kill
mutants: see doc/source/contributor/mutation.rst.)
"""

import pytest

from gantt.objects import request_spec
from gantt.scheduler.pipeline.filters import image_properties
from gantt.tests.unit.scheduler import helpers


@pytest.mark.parametrize("props, expected", [
    # the legacy names, when the new ones are missing
    ({"hypervisor_type": "qemu"}, (None, "qemu", None)),
    ({"vm_mode": "hvm"}, (None, None, "hvm")),
    # the new name first
    ({"hw_vm_mode": "hvm", "vm_mode": "xen"}, (None, None, "hvm")),
    ({"hw_vm_mode": "hvm"}, (None, None, "hvm")),
])
def test_wanted_reads_the_legacy_names(conf, props, expected):
    assert image_properties.wanted(conf, props) == expected


@pytest.mark.parametrize("supported", ["not json", '{"a": 1}'])
def test_supported_instances_that_do_not_parse_support_nothing(supported):
    assert not image_properties.supports(supported, (None, None, None))


@pytest.mark.parametrize("version, requirement, expected", [
    # version 1 is a version (only 0 or none means "not reported")
    ("1", ">=2", False),
    # versions of more than three parts compare every part...
    ("1002003000", "==1.2.3", True),
    ("2000", "==2.0.0.0", True),
    # ...padded with zeros
    ("2000", "==2.0", True),
    ("2000", "==2.0.1", False),
    # an empty part is left out
    ("2000", "==2.0.", True),
])
def test_requested_hypervisor_version(version, requirement, expected):
    assert image_properties.version_satisfies(version, requirement) is (
        expected)


def test_a_host_that_reports_no_version_meets_any_requested_one(conf):
    # Nova: a missing version does not refuse the host
    view = helpers.make_view(helpers.node("h0", capabilities={
        "supported_instances": '[["x86_64", "qemu", "hvm"]]'}))
    request = helpers.make_request(image=request_spec.ImageMeta(properties={
        "img_hv_type": "qemu", "img_hv_requested_version": ">=6.0"}))
    helpers.assert_both_paths(image_properties.ImagePropertiesFilter(conf),
                              view, request, [True])
