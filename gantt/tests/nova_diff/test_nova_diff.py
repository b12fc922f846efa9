"""Gantt's filters and weighers against the real Nova 34's.

Seeded worlds (``worlds.py``) go through Nova's own HostManager, filters
and weighers and through Gantt's host cache and scheduler (``compare.py``
says what is compared). One test per world (``w<SEED>``); a failure
prints each unexpected difference (which filter or weigher, which host,
both values) and the world and request. Run with ``tools/nova_diff.sh``
or ``tox -e nova-diff`` (doc/source/admin/nova-diff.rst).

Sizes: GANTT_NOVA_DIFF_WORLDS (default 40) worlds from seed
GANTT_NOVA_DIFF_SEED (default 0), GANTT_NOVA_DIFF_REQUESTS (default 4)
requests each.
"""

import os

import pytest

from gantt.tests.nova_diff import compare
from gantt.tests.nova_diff import deviations

WORLDS = int(os.environ.get("GANTT_NOVA_DIFF_WORLDS", "40"))
FIRST = int(os.environ.get("GANTT_NOVA_DIFF_SEED", "0"))
SEEDS = list(range(FIRST, FIRST + WORLDS))

#: filters that pass every host
TRIVIAL_FILTERS = {"AllHostsFilter"}


def _all_outcomes():
    return [o for seed in SEEDS for o in compare.run_world(seed)]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: "w%d" % s)
def test_world(seed):
    outcomes = compare.run_world(seed)
    failed = [o.report() for o in outcomes if o.unexpected]
    assert not failed, "\n\n".join(failed)


def test_no_stale_deviation():
    """Every entry of deviations.DEVIATIONS is still needed by some case:
    once a fix makes both sides agree, its entry must go."""
    stale = compare.stale(_all_outcomes())
    assert not stale, (
        "stale deviation(s), remove them from deviations.DEVIATIONS: "
        + "; ".join("%s %s (%s)" % (d.kind, d.name, d.reason)
                    for d in stale))


@pytest.mark.parametrize(
    "k", range(len(deviations.DEVIATIONS)),
    ids=lambda k: "%s-%s-%d" % (deviations.DEVIATIONS[k].kind,
                                deviations.DEVIATIONS[k].name, k))
def test_deviation_example(k):
    """Each deviation's example case still shows it (the reproduction
    to look at when fixing it; a fix makes this fail: drop the entry)."""
    dev = deviations.DEVIATIONS[k]
    seed, index = dev.example
    outcome = compare.run_world(seed)[index]
    assert k in outcome.covered, (
        "stale deviation %s %s (%s): its example w%d-r%d agrees now (if "
        "the generator changed, python -m gantt.tests.nova_diff.examples "
        "finds new examples)" % (dev.kind, dev.name, dev.reason, seed,
                                 index))


def test_not_vacuous():
    """Each compared filter keeps some hosts and removes others in some
    case, each weigher tells hosts apart in some case, and the default
    chain leaves several hosts to weigh in a fair share of the cases."""
    outcomes = _all_outcomes()
    hosts = {o.label: {h.name for h in o.world.hosts} for o in outcomes}
    decisive = {name for o in outcomes for name, passed in o.passed.items()
                if passed and passed != hosts[o.label]}
    names = set(compare.NOVA_FILTERS) | {compare.ZONE, compare.RESOURCES}
    assert names - TRIVIAL_FILTERS <= decisive, sorted(
        names - TRIVIAL_FILTERS - decisive)
    weighing = {name for o in outcomes for name, moved in o.weighed.items()
                if moved}
    assert len(weighing) == 13, sorted(weighing)
    chosen = sum(1 for o in outcomes if o.chain_left >= 2)
    assert chosen >= 0.1 * len(outcomes), (chosen, len(outcomes))
