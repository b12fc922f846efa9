"""Explain a request: what each pre-filter and filter removed, and how the
best hosts weighed, without claiming anything (``gantt explain``).

It runs the very :class:`~.pipeline.pipeline.Pipeline` that
``select_destinations`` runs for the first instance, with each step's
removed rows recorded, and returns an
:class:`~gantt.objects.explain.Explanation`.
"""

import numpy as np

from gantt.objects import explain as explain_obj
from gantt.scheduler.pipeline import domains

#: hosts named per step (the count is always complete)
HOSTS_PER_STEP = 20


def _hosts(view, mask, limit):
    return sorted(str(h) for h in view.hosts[mask])[:limit]


def _steps(view, stage, recorded, limit):
    for step in recorded:
        yield explain_obj.FilterStep(
            stage=stage, name=step.name,
            reason=", ".join("%d %s" % (r.count, r.label)
                             for r in step.removals),
            removed=int(step.rows.sum()),
            hosts=_hosts(view, step.rows, limit))


def explain(pipeline, cycle, limit=10, hosts_per_step=HOSTS_PER_STEP):
    """The :class:`Explanation` of ``cycle``'s request.

    :param limit: how many of the best hosts to return, weighed
    """
    ranking = pipeline.rank(cycle, record=True)
    view, outcome = cycle.view, ranking.outcome
    rows, totals, parts = _weighed(ranking)
    count = min(max(int(limit), 0), len(rows))
    if count and len(rows) > count:
        best = np.argpartition(-totals, count - 1)[:count]
    else:
        best = np.arange(count)
    best = best[np.argsort(-totals[best], kind="stable")]
    return explain_obj.Explanation(
        considered=view.n, passed=len(rows), summary=outcome.summary(),
        resources=dict(cycle.request.resources),
        filters=pipeline.filter_names, weighers=pipeline.weigher_names,
        profile=pipeline.profile, packing=pipeline.packing,
        steps=list(_steps(view, "candidates", ranking.candidates.steps,
                          hosts_per_step))
        + list(_steps(view, "filters", outcome.steps, hosts_per_step)),
        weighed=[explain_obj.WeighedHost(
            host=view.hosts[rows[i]], nodename=view.nodenames[rows[i]],
            uuid=view.uuids[rows[i]], weight=float(totals[i]),
            weights=dict({name: float(part[i])
                          for name, part in parts.items()},
                         **_distance(cycle, rows[i])))
            for i in best])


#: the key of a candidate's distance to its server group in ``weights``
DISTANCE = "distance to the group (levels)"


def _distance(cycle, row):
    """``{DISTANCE: d}`` when the request's group has policies per level
    and members (see :func:`.pipeline.domains.distances`); else {}."""
    group = cycle.request.instance_group
    if group is None or not group.levels or not group.hosts:
        return {}
    levels = cycle.view.table.topology.levels
    return {DISTANCE: float(domains.distances(
        cycle.view, group, levels, np.array([row]))[0])}


def _weighed(ranking):
    """(rows, their totals, each weigher's part) of the hosts that
    passed."""
    if ranking.weighing is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0), {}
    return ranking.weighing.rows, ranking.weighing.totals, ranking.parts
