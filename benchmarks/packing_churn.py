"""Churn: what each packing policy holds when instances also go away.

Used by ``packing.py``. Instances arrive one per unit of time on
average, each living an exponential time of mean ``population``, so that
the offered population tends to ``population`` (Little's law); a refused
arrival is dropped. Deletions release the instance's claim through
Gantt's ``ClaimService.release``. The fleet starts with half the
population (placed at time 0: every policy holds that much from empty),
then ``3 x population`` arrive. The steady state is the second half of
the run (time ``1.5 x population`` on, most of the first instances
replaced); over it the table gives the mean of instances held (the
figure to compare), each class's used share, the share stranded (free on
hosts that are full in another class, :mod:`gantt.simulate.metrics`) and
the share of the window's arrivals refused.

The offered population is a share (``--churn-load``, default 1) of the
LP bound of the same mix filled from empty: a perfect packer holds about
what is offered, a poor one refuses.
"""

import dataclasses

from gantt.simulate import metrics
from gantt.simulate import replay
from gantt.simulate import workload

#: (fleet, stream) pairs of the churn table
COMBINATIONS = (("mixed", "mixed"), ("uniform", "mixed"))


@dataclasses.dataclass(frozen=True)
class Churn:
    """One policy under churn, at steady state."""

    steady: metrics.Steady
    refused: float          # share of the window's arrivals refused
    seconds: float


def events_for(mix, population, seed=7):
    return workload.generate(workload.Generator(
        mix=mix, arrivals=3 * population, mean_lifetime=float(population),
        initial=population // 2, seed=seed))


def run(policy, hosts, events, population, conf, mode="sqlite"):
    """Replay ``events`` on ``hosts`` under ``policy`` (SQLite claims by
    default)."""
    result = replay.replay(hosts, events, policy, conf=conf, mode=mode)
    start = 1.5 * population
    arrivals = sum(1 for e in events if e.kind == "create"
                   and e.time >= start)
    refused = sum(1 for t in result.refusal_times if t >= start)
    return Churn(metrics.steady(result.samples, start),
                 refused / max(arrivals, 1), result.seconds)


def _pct(value):
    return "%.0f %%" % (100.0 * value)


def _pct1(value):
    return "%.1f %%" % (100.0 * value)


def table(rows):
    """reStructuredText rows ``(cells...)`` of the churn table.

    :param rows: ``[(fleet, stream, bound, population, {policy: Churn})]``
    """
    head = ("fleet / stream", "offered", "policy", "held", "vs first-fit",
            "refused", "VCPU", "RAM", "disk", "stranded VCPU", "RAM", "disk")
    lines = [head]
    for fleet_name, stream_name, bound, population, runs in rows:
        baseline = runs.get(replay.FIRST_FIT)
        for i, (policy, c) in enumerate(runs.items()):
            versus = ("%+.1f %%" % (100.0 * (c.steady.alive
                                             / baseline.steady.alive - 1))
                      if baseline else "")
            lines.append((
                "%s / %s" % (fleet_name, stream_name) if i == 0 else "",
                "%d (%s)" % (population, _pct(population / bound))
                if i == 0 else "",
                policy, "%.0f" % c.steady.alive, versus, _pct1(c.refused),
                *(_pct(u) for u in c.steady.utilisation),
                *(_pct1(u) for u in c.steady.stranded)))
    return lines


def seeds_table(rows, seeds):
    """Rows of instances held per seed, as the difference to first-fit.

    :param rows: ``[(fleet, stream, {seed: {policy: Churn}})]``
    """
    head = ("fleet / stream", "policy", *("seed %d" % s for s in seeds),
            "mean")
    lines = [head]
    for fleet_name, stream_name, by_seed in rows:
        policies = list(by_seed[seeds[0]])
        for i, policy in enumerate(policies):
            diffs = [100.0 * (by_seed[s][policy].steady.alive
                              / by_seed[s][replay.FIRST_FIT].steady.alive
                              - 1) for s in seeds]
            lines.append(("%s / %s" % (fleet_name, stream_name)
                          if i == 0 else "", policy,
                          *("%+.1f %%" % d for d in diffs),
                          "%+.1f %%" % (sum(diffs) / len(diffs))))
    return lines
