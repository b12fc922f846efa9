"""ComputeCapabilitiesFilter: flavor extra specs match what the host reports.

As in Nova (``nova/scheduler/filters/compute_capabilities_filter.py``),
every extra spec scoped ``capabilities:`` names a host attribute and holds
an expression in the syntax of :mod:`extra_specs_ops`:

* ``capabilities:cpu_info:features`` is looked up as the flat capability
  ``cpu_info:features`` first, then as the key ``features`` inside the JSON
  capability ``cpu_info``; a name the capabilities lack is looked up the
  same way in the host's ``stats``. A host without the attribute fails.
* ``capabilities:stats:X`` is the stat ``X`` (Nova's ``HostState.stats``).
* an unscoped key (no ``:``) is checked the same way when it names an
  attribute of Nova's ``HostState`` (:data:`HOST_STATE_ATTRIBUTES`: a host
  that does not report it fails); any other unscoped key is checked on the
  hosts that report it as a capability or a stat, and ignored on the
  others.
* ``hw:maxphysaddr_bits: N`` is the check ``capabilities:cpu_info:
  maxphysaddr:bits: >= N``.

Other scopes (``hw:``, ``trait:``…) are ignored.
"""

import dataclasses
import json

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline.filters import extra_specs_ops

SCOPE = "capabilities"
STATS = "stats"
MAXPHYSADDR = "hw:maxphysaddr_bits"
_MISSING = -1

#: the attributes of Nova's ``HostState`` (nova/scheduler/host_manager.py):
#: an unscoped extra spec naming one is always checked
HOST_STATE_ATTRIBUTES = frozenset((
    "aggregates", "allocation_candidates", "cell_uuid",
    "cpu_allocation_ratio", "cpu_info", "disk_allocation_ratio",
    "disk_mb_used", "failed_builds", "free_disk_mb", "free_ram_mb", "host",
    "host_ip", "hypervisor_hostname", "hypervisor_type",
    "hypervisor_version", "instances", "limits", "metrics", "nodename",
    "num_instances", "num_io_ops", "numa_topology", "pci_stats",
    "ram_allocation_ratio", "service", "stats", "supported_instances",
    "total_usable_disk_gb", "total_usable_ram_mb", "updated", "uuid",
    "vcpus_total", "vcpus_used"))


@dataclasses.dataclass(frozen=True)
class Spec:
    """One extra spec this filter checks."""

    path: tuple
    expr: str
    # unscoped: hosts that report no such attribute are not checked
    optional: bool = False


def wanted(extra_specs):
    """The :class:`Spec` list of the extra specs this filter checks."""
    specs = dict(extra_specs)
    bits = specs.pop(MAXPHYSADDR, None)
    if bits is not None:
        specs["%s:cpu_info:maxphysaddr:bits" % SCOPE] = ">= %s" % bits
    out = []
    for key, expr in specs.items():
        scope = key.split(":")
        if len(scope) == 1:
            out.append(Spec(tuple(scope), expr,
                            optional=key not in HOST_STATE_ATTRIBUTES))
        elif scope[0] == SCOPE:
            out.append(Spec(tuple(scope[1:]), expr))
    return out


def navigate(value, path):
    """The value at ``path`` inside ``value`` (a dict or JSON text), or
    None."""
    for item in path:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(item)
        if value is None:
            return None
    return value


def lookup(detail, path):
    """The value of ``path`` in one dict of a host (capabilities, stats)."""
    flat = detail.get(":".join(path))
    if flat is not None:
        return flat
    if len(path) > 1 and path[0] in detail:
        return navigate(detail[path[0]], path[1:])
    return None


def host_value(host, path):
    """What ``path`` names on one host (a HostRecord), or None."""
    if path[0] == STATS and len(path) > 1:
        return lookup(host.stats, path[1:])
    value = lookup(host.capabilities, path)
    return lookup(host.stats, path) if value is None else value


def _verdict(value, expr):
    if value is None:
        return _MISSING
    return int(extra_specs_ops.match(value, expr))


class ComputeCapabilitiesFilter(filters.BaseFilter):
    name = "ComputeCapabilitiesFilter"
    provider_kinds = filters.COMPUTE

    def applies(self, request):
        return bool(wanted(request.extra_specs))

    def host_passes(self, host, request):
        for spec in wanted(request.extra_specs):
            value = host_value(host, spec.path)
            if value is None and spec.optional:
                continue
            if value is None or not extra_specs_ops.match(value, spec.expr):
                return False
        return True

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for spec in wanted(request.extra_specs):
            mask &= _spec_passes(view, spec)
        return mask


def _spec_passes(view, spec):
    sources = list(_sources(view, spec.path))
    expr = spec.expr
    if len(sources) == 1:
        # the common case: one place to look, straight to booleans
        source, key, sub = sources[0]
        return source(key, lambda v, s=sub, e=expr: _verdict(
            navigate(v, s) if s else v, e) == 1, spec.optional,
            meaning=("passes", sub, expr))
    verdict = np.full(view.n, _MISSING, dtype=np.int8)
    # in lookup order; the first source that has a value decides
    for source, key, sub in sources:
        found = source(key, lambda v, s=sub, e=expr: _verdict(
            navigate(v, s) if s else v, e), _MISSING, np.int8,
            meaning=("verdict", sub, expr))
        verdict = np.where(verdict == _MISSING, found, verdict)
    passes = verdict == 1
    if spec.optional:
        passes |= verdict == _MISSING
    return passes


def _sources(view, path):
    """(lookup, key, JSON sub-path) in lookup order, for the keys some
    host reports (the others would find nothing)."""
    families = ((view.capability, view.table.capability_columns),
                (view.stat, view.table.stat_columns))
    if path[0] == STATS and len(path) > 1:
        families, path = families[1:], path[1:]
    flat = ":".join(path)
    for source, family in families:
        if family.keys.get(flat) is not None:
            yield source, flat, ()
        if len(path) > 1 and family.keys.get(path[0]) is not None:
            yield source, path[0], path[1:]
