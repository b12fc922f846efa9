"""ComputeCapabilitiesFilter: flavor extra specs match what the host reports.

As in Nova, every extra spec scoped ``capabilities:`` (or not scoped at
all: no ``:`` in the key) names a host attribute and holds an expression in
the syntax of :mod:`extra_specs_ops`. ``capabilities:cpu_info:features``
is looked up as the flat capability ``cpu_info:features`` first, then as
the key ``features`` inside the JSON capability ``cpu_info``; a name the
capabilities lack is looked up the same way in the host's ``stats``. A host
without the attribute fails. Other scopes (``hw:``, ``trait:``…) are
ignored.
"""

import json

import numpy as np

from gantt.scheduler import filters
from gantt.scheduler.filters import extra_specs_ops

SCOPE = "capabilities"
_MISSING = -1


def wanted(extra_specs):
    """``{path tuple: expression}``: the specs this filter checks."""
    out = {}
    for key, expr in extra_specs.items():
        scope = key.split(":")
        if len(scope) > 1:
            if scope[0] != SCOPE:
                continue
            scope = scope[1:]
        out[tuple(scope)] = expr
    return out


def navigate(text, path):
    """The value at ``path`` inside the JSON text ``text``, as the string
    Nova compares (``str()`` of it), or None."""
    value = text
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
    return str(value)


def lookup(detail, path):
    """The value of ``path`` in one dict of a host (capabilities, stats)."""
    flat = detail.get(":".join(path))
    if flat is not None:
        return str(flat)
    if len(path) > 1 and path[0] in detail:
        return navigate(detail[path[0]], path[1:])
    return None


def _verdict(value, expr):
    if value is None:
        return _MISSING
    return int(extra_specs_ops.match(value, expr))


class ComputeCapabilitiesFilter(filters.BaseFilter):
    name = "ComputeCapabilitiesFilter"

    def applies(self, request):
        return bool(wanted(request.extra_specs))

    def host_passes(self, host, request):
        for path, expr in wanted(request.extra_specs).items():
            value = lookup(host.capabilities, path)
            if value is None:
                value = lookup(host.stats, path)
            if value is None or not extra_specs_ops.match(value, expr):
                return False
        return True

    def passes_columns(self, view, request):
        mask = np.ones(view.n, dtype=bool)
        for path, expr in wanted(request.extra_specs).items():
            sources = list(self._sources(view, path))
            if len(sources) == 1:
                # the common case: one place to look, straight to booleans
                source, key, sub = sources[0]
                mask &= source(key, lambda v, s=sub, e=expr: _verdict(
                    navigate(v, s) if s else v, e) == 1, False,
                    meaning=("passes", sub, expr))
                continue
            verdict = np.full(view.n, _MISSING, dtype=np.int8)
            # in lookup order; the first source that has a value decides
            for source, key, sub in sources:
                found = source(key, lambda v, s=sub, e=expr: _verdict(
                    navigate(v, s) if s else v, e), _MISSING, np.int8,
                    meaning=("verdict", sub, expr))
                verdict = np.where(verdict == _MISSING, found, verdict)
            mask &= verdict == 1
        return mask

    @staticmethod
    def _sources(view, path):
        """(lookup, key, JSON sub-path) in lookup order, for the keys some
        host reports (the others would find nothing)."""
        flat = ":".join(path)
        for source, family in ((view.capability,
                                view.table.capability_columns),
                               (view.stat, view.table.stat_columns)):
            if family.keys.get(flat) is not None:
                yield source, flat, ()
            if len(path) > 1 and family.keys.get(path[0]) is not None:
                yield source, path[0], path[1:]
