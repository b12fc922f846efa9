"""Explain a request: what each pre-filter and filter removed, and how the
best hosts weighed, without claiming anything (``gantt explain``).

It runs the very pipeline ``select_destinations`` runs for the first
instance (same candidates, filters in the same order, same weighers), with
each step's removed rows recorded, and returns an
:class:`~gantt.objects.explain.Explanation`.
"""

import numpy as np
from oslo_utils import uuidutils

from gantt.objects import explain as explain_obj
from gantt.scheduler.pipeline import candidates
from gantt.scheduler.pipeline import request as request_mod

#: hosts named per step (the count is always complete)
HOSTS_PER_STEP = 20


def _hosts(view, mask, limit):
    return sorted(str(h) for h in view.hosts[mask])[:limit]


def _steps(view, stage, recorded, limit):
    for name, labels, mask in recorded:
        yield explain_obj.FilterStep(
            stage=stage, name=name,
            reason=", ".join("%d %s" % (n, label) for label, n in labels),
            removed=int(mask.sum()), hosts=_hosts(view, mask, limit))


def explain(manager, spec, limit=10, hosts_per_step=HOSTS_PER_STEP):
    """The :class:`Explanation` of ``spec`` on ``manager``'s cache.

    :param limit: how many of the best hosts to return, weighed
    :raises: InvalidRequest (as select_destinations would)
    """
    request = request_mod.from_spec(spec, [uuidutils.generate_uuid()],
                                    manager.lookup)
    view = manager._view()
    cands = candidates.for_request(view, request, manager.conf, record=True)
    outcome = manager.filters.run(view, request, cands.mask,
                                  skip_filters=request.forced, record=True)
    outcome.removed = list(cands.removed) + outcome.removed
    rows = np.flatnonzero(outcome.mask)
    totals, parts = manager.weighers.run(view, request, rows,
                                         mask=outcome.mask)
    count = min(max(int(limit), 0), len(rows))
    if count and len(rows) > count:
        best = np.argpartition(-totals, count - 1)[:count]
    else:
        best = np.arange(count)
    best = best[np.argsort(-totals[best], kind="stable")]
    return explain_obj.Explanation(
        considered=view.n, passed=len(rows), summary=outcome.summary(),
        resources=dict(request.resources),
        filters=[f.name for f in manager.filters.filters],
        weighers=[w.name for w in manager.weighers.weighers],
        steps=list(_steps(view, "candidates", cands.steps, hosts_per_step))
        + list(_steps(view, "filters", outcome.steps, hosts_per_step)),
        weighed=[explain_obj.WeighedHost(
            host=view.hosts[rows[i]], nodename=view.nodenames[rows[i]],
            uuid=view.uuids[rows[i]], weight=float(totals[i]),
            weights={name: float(part[i]) for name, part in parts.items()})
            for i in best])
