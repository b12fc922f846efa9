"""CapabilitiesFilter: volume-type extra specs against backend capabilities.

As Cinder's ``cinder/scheduler/filters/capabilities_filter.py``: every
extra spec of the volume type (the request's ``capabilities``) that is
unscoped or scoped ``capabilities:`` names a capability of the backend
(``capabilities:a:b`` is the key ``b`` inside the capability ``a``, a dict
as JSON text); other scopes (``provisioning:``, vendor ones) are
ignored. A backend lacking the capability fails. Values are compared as
text (``str()`` of a typed value, as the host table holds them); a JSON
list inside a capability passes when one of its items matches. The
expression syntax is Gantt's (:mod:`.extra_specs_ops`) plus Cinder's
``<is> True`` / ``<is> False``, which compares booleans (``True``,
``"true"``, ``"1"``, ``"yes"``...).
"""

import dataclasses

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import pools
from gantt.scheduler.pipeline.filters import compute_capabilities
from gantt.scheduler.pipeline.filters import extra_specs_ops

SCOPE = "capabilities"


@dataclasses.dataclass(frozen=True)
class Spec:
    """One extra spec this filter checks: where, and the expression."""

    path: tuple
    expr: str


def wanted(specs):
    """The :class:`Spec` list of the volume type's extra specs."""
    out = []
    for key, expr in specs.items():
        scope = key.split(":")
        if len(scope) > 1 and scope[0] != SCOPE:
            continue
        if scope[0] == SCOPE:
            scope = scope[1:]
        out.append(Spec(tuple(scope), str(expr)))
    return out


def match(value, expr):
    """Whether one capability value (or any item of a list) matches."""
    if value is None:
        return False
    items = value if isinstance(value, (list, tuple)) else [value]
    return any(_match_one(item, expr) for item in items)


def _match_one(value, expr):
    words = expr.split()
    if words and words[0] == "<is>":
        return len(words) > 1 and (
            pools.truthy(value) is pools.truthy(words[1]))
    return extra_specs_ops.match(value, expr)


def _value(capabilities, path):
    # as the host table's columns hold it: the text of a typed value
    value = capabilities.get(path[0])
    if value is None:
        return None
    value = str(value)
    return compute_capabilities.navigate(value, path[1:]) if path[1:] else (
        value)


class CapabilitiesFilter(filters.BaseFilter):
    name = "CapabilitiesFilter"
    provider_kinds = frozenset({"volume"})

    def applies(self, request):
        return bool(wanted(pools.volume_type_specs(request)))

    def host_passes(self, host, request):
        return all(match(_value(host.capabilities, spec.path), spec.expr)
                   for spec in wanted(pools.volume_type_specs(request)))

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for spec in wanted(pools.volume_type_specs(request)):
            sub = spec.path[1:]
            mask &= view.capability(
                spec.path[0],
                lambda v, s=sub, e=spec.expr: match(
                    compute_capabilities.navigate(v, s) if s else v, e),
                False, meaning=("volume capability", sub, spec.expr))
        return mask
