"""One world on both sides: every filter, every weigher, the final order.

A difference is either one of :data:`.deviations.DEVIATIONS` (each a row of
``doc/source/admin/cinder-diff.rst``, recognised by its own rule) or a
failure.
"""

import math

from gantt.tests.cinder_diff import cinder_side
from gantt.tests.cinder_diff import deviations
from gantt.tests.cinder_diff import gantt_side

TOLERANCE = 1e-9


def _close(a, b):
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _order(totals):
    # descending, ties in row order (Cinder's sort is stable)
    return sorted(range(len(totals)), key=lambda i: -totals[i])


def _same_order(want, got):
    for i, j in zip(_order(want), _order(got), strict=True):
        if i != j and not _close(want[i], want[j]):
            return False
    return True


def run(world):
    """``(differences, explained)``: lists of readable lines."""
    states = [cinder_side.pool_state(b) for b in world.backends]
    hosts = gantt_side.view(world)
    cfg = gantt_side.conf(world)
    bad, known = [], []

    def note(case, what, vol, rows=None):
        reason = deviations.explain(case, world, vol, rows)
        line = "seed %d %s: %s (volume %s)" % (world.seed, case, what, vol)
        (known if reason else bad).append(
            line + (" [%s]" % reason if reason else ""))

    with cinder_side.multipliers(world), cinder_side.volume_counts(world):
        for vol in world.volumes:
            passed = [True] * len(states)
            for name in gantt_side.FILTERS:
                want = cinder_side.passes(name, states, vol)
                passed = [p and bool(w) for p, w in zip(passed, want,
                                                        strict=True)]
                columns, per_host = gantt_side.passes(name, hosts, vol, cfg)
                if columns != per_host:
                    bad.append("seed %d %s: paths differ %s %s" % (
                        world.seed, name, columns, per_host))
                for row, (w, g) in enumerate(zip(want, per_host, strict=True)):
                    if w != g:
                        note((name, world.backends[row].name),
                             "cinder %s gantt %s" % (w, g), vol)
            # the backends Cinder's filters pass are weighed (all of them
            # when none passes), as Cinder's scheduler does
            rows = [i for i, p in enumerate(passed) if p] or list(
                range(len(states)))
            chosen = [states[i] for i in rows]
            totals, parts = gantt_side.weights(gantt_side.WEIGHERS, hosts,
                                               vol, cfg, rows)
            want_totals = [0.0] * len(chosen)
            for name in gantt_side.WEIGHERS:
                want = cinder_side.weights(name, chosen, vol)
                if want is None:
                    note((name, None), "cinder raised", vol, rows)
                    continue
                want_totals = [a + b for a, b in zip(want_totals, want,
                                                     strict=True)]
                if not all(map(_close, want, parts[name])):
                    note((name, None), "cinder %s gantt %s" % (
                        want, parts[name]), vol, rows)
            if not _same_order(want_totals, totals):
                note(("order", None), "cinder %s gantt %s" % (
                    _order(want_totals), _order(totals)), vol, rows)
    return bad, known
