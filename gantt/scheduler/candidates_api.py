"""Placement's ``GET /allocation_candidates`` on a worker's cache.

The candidate steps and the resource rule apply (no Nova filters: the
pipeline is built with the resource filter alone), hosts are listed best
weighed first, trees and sharing providers are solved exactly, and
providers that are no host (a sharing pool) can answer alone.
"""

import numpy as np

from gantt.objects import provider as provider_obj
from gantt.scheduler import selections
from gantt.scheduler.pipeline import allocation_candidates
from gantt.scheduler.pipeline import layouts
from gantt.scheduler.pipeline import tree_source


def listing(pipeline, cycle, limit):
    """Every way ``cycle``'s request could be allocated, best hosts first.

    :returns: list of AllocationCandidate objects, at most ``limit``
    """
    view, request = cycle.view, cycle.request
    weighing = pipeline.rank(cycle).weighing
    order = (weighing.rows[np.argsort(-weighing.totals, kind="stable")]
             if weighing is not None else ())
    found = _Found(limit)
    source = tree_source.HostProviders(view)
    query = layouts.candidate_query(request)
    trees = view.tree_rows()
    for row in order:
        if not trees[row]:
            done = found.add(allocation_candidates.AllocationCandidate(
                root_uuid=view.uuids[row],
                allocations={view.uuids[row]: request.resources},
                mappings={g.suffix: (view.uuids[row],)
                          for g in request.groups}))
        else:
            done = found.add_all(allocation_candidates.iter_candidates(
                source, query, view.uuids[row]))
        if done:
            break
    else:
        for uuid in view.table.sharing_providers:
            if found.add_all(allocation_candidates.iter_candidates(
                    source, query, uuid)):
                break
    return [_candidate_obj(c) for c in found.candidates]


class _Found:
    """Candidates found so far, each layout once, up to a limit."""

    def __init__(self, limit):
        self.limit = limit
        self.candidates = []
        self._seen = set()

    def add(self, candidate):
        """Keep ``candidate`` if new; True once the limit is reached."""
        key = _allocation_key(candidate.allocations)
        if key not in self._seen:
            self._seen.add(key)
            self.candidates.append(candidate)
        return len(self.candidates) >= self.limit

    def add_all(self, candidates):
        return any(self.add(c) for c in candidates)


def _allocation_key(allocations):
    return tuple(sorted((uuid, tuple(sorted(amounts.items())))
                        for uuid, amounts in allocations.items()))


def _candidate_obj(candidate):
    return provider_obj.AllocationCandidate(
        root_provider_uuid=candidate.root_uuid,
        allocation_request=selections.tree_allocation_request(
            candidate.allocations),
        mappings={suffix: list(uuids)
                  for suffix, uuids in candidate.mappings.items()})
