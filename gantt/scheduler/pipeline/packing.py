"""Packing policies: named weigher settings that decide how hosts fill.

A policy is a set of ``[filter_scheduler]`` values laid over the
operator's own: multipliers for the resource weighers, and weighers added
to ``enabled_weighers``. The figures behind each are in
``doc/source/admin/packing.rst`` (``benchmarks/packing.py``).

This module only names the policies; a profile (``packing``, see
:mod:`.profiles`), a request its profile lets choose, or a simulation
applies one with :func:`settings`. Every policy sets the RAM, CPU and
disk multipliers, so that choosing one (a request's ``spread`` in a
profile that stacks) gives the same weighers whatever the profile's own.
"""

import dataclasses
import types

BALANCED = "BalancedAllocationWeigher"


@dataclasses.dataclass(frozen=True)
class PackingPolicy:
    """One way of filling hosts.

    :attr name: what operators and requests call it
    :attr multipliers: ``[filter_scheduler]`` multiplier -> value
    :attr added_weighers: weighers appended to ``enabled_weighers`` when
        missing
    :attr summary: one line for ``--help`` and the docs
    """

    name: str
    multipliers: types.MappingProxyType
    added_weighers: tuple
    summary: str


def _policy(name, summary, added=(), **multipliers):
    return PackingPolicy(name, types.MappingProxyType(multipliers),
                         tuple(added), summary)


_STACK = {"ram_weight_multiplier": -1.0, "cpu_weight_multiplier": -1.0,
          "disk_weight_multiplier": -1.0}
_SPREAD = {name: 1.0 for name in _STACK}

#: every shipped policy, by name
POLICIES = types.MappingProxyType({p.name: p for p in (
    _policy("spread", "Nova's defaults: the host with the most free RAM, "
            "CPU and disk first", **_SPREAD),
    _policy("stack-ram", "Nova's documented stacking: the fullest RAM "
            "first, CPU and disk still spread", ram_weight_multiplier=-1.0),
    _policy("stack", "the fullest host first, in every class", **_STACK),
    _policy("balanced", "spread, and hosts whose classes stay evenly used",
            added=(BALANCED,), balanced_allocation_weight_multiplier=5.0),
    _policy("balanced+stack", "the fullest host whose classes stay evenly "
            "used", added=(BALANCED,),
            balanced_allocation_weight_multiplier=5.0, **_STACK),
)})


def settings(name, enabled_weighers):
    """``[filter_scheduler]`` option -> value that apply policy ``name``
    over ``enabled_weighers``.

    :raises: KeyError for an unknown policy
    """
    policy = POLICIES[name]
    weighers = list(enabled_weighers)
    weighers += [w for w in policy.added_weighers if w not in weighers]
    return {**policy.multipliers, "enabled_weighers": weighers}
