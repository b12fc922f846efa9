"""Known, deliberate differences from Cinder.

Every entry is a row of ``doc/source/admin/cinder-diff.rst``.

``DEVIATIONS`` are recognised in the seeded worlds by a rule that gets the
case (``(plugin, backend name or None)``), the world and the volume; the
generator avoids them today, so it is empty, and a difference in a world
is a failure. ``EXPRESSIONS`` are the evaluator's deviations, each shown
by one expression that ``test_cinder_diff`` runs on both sides to prove
the two still differ (a row whose example agrees is stale).
"""

DEVIATIONS = {}

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


def explain(case, world, vol):
    """The name of the deviation that explains ``case``, or None."""
    for name, rule in DEVIATIONS.items():
        if rule(case, world, vol):
            return name
    return None
