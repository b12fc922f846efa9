"""Gantt's volume filters and weighers against the real Cinder 29 ones.

Run with ``tools/cinder_diff.sh`` (or ``tox -e cinder-diff``): it needs
cinder installed next to Gantt. Each seed is a world of backends and
volumes (:mod:`.worlds`); see ``doc/source/admin/cinder-diff.rst``.
"""

import pytest

from gantt.tests.cinder_diff import compare
from gantt.tests.cinder_diff import deviations
from gantt.tests.cinder_diff import worlds

SEEDS = range(24)


#: seed -> (differences, explained), kept for the stale-deviation check
_RUNS = {}


def _run(seed):
    if seed not in _RUNS:
        _RUNS[seed] = compare.run(worlds.world(seed))
    return _RUNS[seed]


@pytest.mark.parametrize("seed", SEEDS)
def test_gantt_decides_as_cinder(seed):
    bad, _known = _run(seed)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("name", sorted(deviations.DEVIATIONS))
def test_each_world_deviation_still_shows(name):
    """A deviation no world shows any more is stale: drop its row."""
    for seed in SEEDS:
        if any("[%s]" % name in line for line in _run(seed)[1]):
            return
    pytest.fail("stale deviation %r: no world shows it" % name)


#: expressions both evaluators must agree on (value, or both refuse)
AGREED = (
    "1 + 2 * 3", "(1 + 2) * 3", "-2^2", "2^3^2", "10 / 4", "7 / 0",
    "2 * -3", "- - 3", "+5", "1.5 * 2", "max(1, 2, 3)", "min(4, 2)",
    "abs(-3)", "max(5)", "1 < 2 < 3", "3 > 2 > 2", "1 <> 2", "1 ? 2 : 3",
    "0 ? 2 : 3", "1 and 0", "1 && 5", "0 or 7", "not 1", "!0 + 1",
    "not 1 == 0", "NOT 0", "'abc' == 'abc'", "stats.x + 1", "stats.f",
    "stats.s", "stats.b", "stats.word == 'abc'", "stats.word == abc",
    "stats.missing", "nope.x", "stats.none", "foo(3)", "stats.word < 3",
    "capabilities.free / capabilities.total * 100", "volume.size >= 10",
    "stats.x > 1 ? 100 : 0", "max(stats.x, 7)", "'a' + 'b'", "",
    "stats.inf", "stats.inf > 3", "volume.size < 10 or stats.x == 5",
)
VARS = {"stats": {"x": 5, "f": 10.7, "s": "12.5", "word": "abc",
                  "none": None, "b": True, "inf": "infinite"},
        "capabilities": {"free": 30, "total": 100}, "volume": {"size": 50},
        "extra": {}, "qos": {}}


def _both(text):
    from cinder.scheduler.evaluator import evaluator

    from gantt.scheduler.pipeline import expressions
    try:
        want = repr(evaluator.evaluate(text, **VARS))
    except Exception:
        want = "error"
    try:
        got = repr(expressions.evaluate(expressions.parse(text), VARS))
    except expressions.ExpressionError:
        got = "error"
    return want, got


@pytest.mark.parametrize("text", AGREED)
def test_expressions_evaluate_as_in_cinder(text):
    want, got = _both(text)
    assert want == got


@pytest.mark.parametrize("name, text", deviations.EXPRESSIONS)
def test_each_expression_deviation_still_differs(name, text):
    want, got = _both(text)
    assert want != got, "stale deviation %r: both give %s" % (name, want)
