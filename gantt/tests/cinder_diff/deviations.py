"""Known, deliberate differences from Cinder.

Every entry is a row of ``doc/source/admin/cinder-diff.rst``.

``DEVIATIONS`` are recognised in the seeded worlds by a rule that gets the
case (``(plugin, backend name or None)``), the world, the volume and the
rows weighed; a difference no rule explains is a failure. ``EXPRESSIONS``
are the evaluator's deviations, each shown by one expression that
``test_cinder_diff`` runs on both sides to prove the two still differ (a
row whose example agrees is stale).
"""


def _unknown(backend):
    return isinstance(backend.total, str) or isinstance(backend.free, str)


def _all_unknown_stacking(case, world, vol, rows):
    """Cinder's CapacityWeigher takes ``max()`` of no known value when
    every candidate is infinite/unknown and the multiplier is not
    positive: the request fails there, Gantt weighs them all 0."""
    multiplier = dict(world.multipliers)["capacity_weight_multiplier"]
    return (case == ("CapacityWeigher", None) and multiplier <= 0
            and all(_unknown(world.backends[r]) for r in rows))


DEVIATIONS = {
    "all candidates infinite/unknown under a negative "
    "capacity_weight_multiplier": _all_unknown_stacking,
}

#: (row name in the doc, expression): Cinder and Gantt must still differ
EXPRESSIONS = (
    ("chained and/or", "1 and 1 and 0"),
    ("bare word before a keyword", "stats.word == abc or 0"),
    ("chained ?:", "1 ? 2 : 0 ? 4 : 5"),
    ("a function without parentheses", "abs stats.x"),
    ("a top-level comma", "1, 2"),
    ("string repetition", "'ab' * 3"),
    ("a sign on a string", "-abc"),
    ("a power beyond 4096 bits", "2 ^ 5000"),
    ("a negative exponent", "2 ^ -1"),
)


def explain(case, world, vol, rows=None):
    """The name of the deviation that explains ``case``, or None."""
    for name, rule in DEVIATIONS.items():
        if rule(case, world, vol, rows):
            return name
    return None
