"""ImagePropertiesFilter: the host supports the image's architecture,
hypervisor type, VM mode and hypervisor version.

The host reports, as capabilities, ``supported_instances`` (a JSON list of
``[architecture, hypervisor_type, vm_mode]`` triples) and
``hypervisor_version`` (an integer: major * 1000000 + minor * 1000 +
micro). The image's ``hw_architecture``, ``img_hv_type`` and ``hw_vm_mode``
(or their legacy names ``architecture``, ``hypervisor_type``, ``vm_mode``)
must all appear in one triple, and ``img_hv_requested_version`` (e.g.
``>=6.0,<7``) must hold for the host's version. An image that sets none of
the three passes everywhere; a host that reports no supported instances
fails any image that sets one.
"""

import json
import operator
import re

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import image_meta

_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq,
        "!=": operator.ne, ">=": operator.ge, ">": operator.gt}
_CLAUSE = re.compile(r"^\s*(<=|>=|==|!=|<|>)\s*([0-9][0-9.]*)\s*$")


def wanted(conf, props):
    """(arch, hv_type, vm_mode) the image asks for, canonical, or Nones."""
    arch = props.get("hw_architecture") or props.get("architecture") or (
        conf.filter_scheduler.image_properties_default_architecture)
    canonical = image_meta.canonical_value
    return (canonical(arch, image_meta.ARCH_ALIASES),
            canonical(props.get("img_hv_type") or props.get("hypervisor_type"),
                      image_meta.HV_ALIASES),
            canonical(props.get("hw_vm_mode") or props.get("vm_mode"),
                      image_meta.MODE_ALIASES))


def supports(supported_instances, props):
    """Whether one triple of the JSON list matches every wanted value."""
    try:
        triples = json.loads(supported_instances)
    except ValueError:
        return False
    if not isinstance(triples, list):
        return False
    for triple in triples:
        if isinstance(triple, list) and all(
                v is None or v in triple for v in props):
            return True
    return False


def _version_tuple(text):
    return tuple(int(p) for p in text.split(".") if p != "")


def version_satisfies(hypervisor_version, requirement):
    """``img_hv_requested_version`` against a reported integer version;
    True when either is missing (Nova), False when unparsable."""
    try:
        number = int(hypervisor_version)
    except (TypeError, ValueError):
        number = 0
    if number <= 0 or not requirement:
        return True
    # Nova's convert_version_to_str: base-1000 digits, most significant
    # first (6002000 -> 6.2.0, but 2000 -> 2.0)
    digits = []
    while number:
        digits.insert(0, number % 1000)
        number //= 1000
    for clause in requirement.split(","):
        match = _CLAUSE.match(clause)
        if not match:
            return False
        want = _version_tuple(match.group(2))
        width = max(len(digits), len(want), 3)
        have = tuple(digits) + (0,) * (width - len(digits))
        want = want + (0,) * (width - len(want))
        if not _OPS[match.group(1)](have, want):
            return False
    return True


class ImagePropertiesFilter(filters.BaseFilter):
    name = "ImagePropertiesFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return any(wanted(self.conf, request.image_properties))

    def host_passes(self, host, request):
        props = wanted(self.conf, request.image_properties)
        required = request.image_properties.get("img_hv_requested_version")
        instances = host.capabilities.get("supported_instances")
        return (instances is not None and supports(instances, props)
                and version_satisfies(
                    host.capabilities.get("hypervisor_version"), required))

    def passes_columns(self, view, request):
        props = wanted(self.conf, request.image_properties)
        required = request.image_properties.get("img_hv_requested_version")
        ok = view.capability("supported_instances",
                             lambda v: supports(v, props), False,
                             meaning=("supports", props))
        if required:
            ok = ok & view.capability(
                "hypervisor_version",
                lambda v: version_satisfies(v, required), True,
                meaning=("version_satisfies", required))
        return ok
