"""Typed image properties are read canonical, as Nova's ImageMetaProps
holds them: filters, weighers and pre-filters see ``x86_64`` for an image
that says ``amd64``."""

import numpy as np
import pytest

from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import image_meta
from gantt.scheduler.pipeline import prefilters
from gantt.scheduler.pipeline.filters import aggregate_image_props
from gantt.scheduler.pipeline.weighers import image_props
from gantt.scheduler.state import aggregates
from gantt.tests.unit.scheduler import helpers

AGG = "a0a0a0a0-0000-4000-8000-0000000000a1"


def _request(**props):
    return helpers.make_request(
        image=request_spec.ImageMeta(properties=props))


@pytest.mark.parametrize("props, canonical", [
    ({"hw_architecture": "amd64"}, {"hw_architecture": "x86_64"}),
    ({"hw_architecture": "I386"}, {"hw_architecture": "i686"}),
    ({"hw_emulation_architecture": "x86_32p"},
     {"hw_emulation_architecture": "i686"}),
    ({"architecture": "AMD64"}, {"architecture": "x86_64"}),
    ({"img_hv_type": "xapi"}, {"img_hv_type": "xen"}),
    ({"hw_vm_mode": "hv", "vm_mode": "baremetal"},
     {"hw_vm_mode": "hvm", "vm_mode": "hvm"}),
    ({"hw_vm_mode": "pv"}, {"hw_vm_mode": "xen"}),
    # canonical values and untyped properties stay as they are
    ({"hw_architecture": "aarch64", "os_distro": "Ubuntu"},
     {"hw_architecture": "aarch64", "os_distro": "Ubuntu"}),
])
def test_a_request_holds_canonical_image_properties(props, canonical):
    assert image_meta.canonical(props) == canonical
    assert _request(**props).image_properties == canonical


def test_an_aliased_architecture_passes_the_canonical_aggregate(conf):
    cache = helpers.make_cache(helpers.node("h0"), helpers.node("h1"))
    cache.apply_aggregates(aggregates.AggregateSet([
        aggregate_obj.Aggregate(uuid=AGG, name="x86", hosts=["h0"],
                                metadata={"hw_architecture": "x86_64"})]))
    view = helpers.view_of(cache)
    flt = aggregate_image_props.AggregateImagePropertiesIsolation(conf)
    helpers.assert_both_paths(flt, view, _request(hw_architecture="amd64"),
                              [True, True])
    helpers.assert_both_paths(flt, view, _request(hw_architecture="aarch64"),
                              [False, True])


def test_an_aliased_architecture_weighs_the_canonical_instances(conf):
    conf.set_override("image_props_weight_multiplier", 1.0,
                      "filter_scheduler")
    view = helpers.make_view(
        helpers.node("h0", stats={"image_props:hw_architecture=x86_64": "2"}),
        helpers.node("h1"))
    weigher = image_props.ImagePropertiesWeigher(conf)
    request = _request(hw_architecture="amd64")
    rows = np.arange(view.n)
    assert list(weigher.weigh_columns(view, request, rows)) == [2.0, 0.0]
    assert weigher.weigh_host(view.record(0), request) == 2.0


def test_an_aliased_architecture_requires_the_canonical_trait():
    request = _request(hw_architecture="amd64")
    assert prefilters.image_traits(request.image_properties) == [
        "HW_ARCH_X86_64"]
