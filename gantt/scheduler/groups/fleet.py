"""From the host table to a :class:`~.problem.Problem`: each member
shape through its profile's filters, once, on one view.

The levels a policy may name are ``host``, ``zone`` (the reported
availability zone, as for server groups) and every configured topology
level (``[topology] levels``, see :mod:`gantt.scheduler.state.topology`).
Hosts that are provider trees or take resources from a sharing provider
are left out: a plan is one host per member, from that host's own
inventory (not yet: nested allocations in a group plan).
"""

import dataclasses

import numpy as np
from oslo_utils import uuidutils

from gantt import exception
from gantt.scheduler import claims as claims_mod
from gantt.scheduler.groups import problem as problem_mod
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import translate
from gantt.scheduler.state import topology as topology_mod


@dataclasses.dataclass(frozen=True, eq=False)
class Fleet:
    """A problem and what it was read from."""

    problem: problem_mod.Problem
    view: object                 # the HostView the rows index
    requests: tuple              # per shape: its ResourceRequest


def level_domains(view, level):
    """Each row's domain id at ``level`` (-1 unknown).

    :raises: InvalidRequest for a level this scheduler does not know
    """
    levels = view.table.topology.levels
    if level != topology_mod.ZONE and level not in levels:
        raise exception.InvalidRequest(
            reason="group: level %r is not known here (known: %s)" % (
                level, ", ".join(dict.fromkeys(
                    (topology_mod.HOST, topology_mod.ZONE) + levels))))
    return np.asarray(view.domains(level), dtype=np.int64)


def read(view, routes, lookup, shapes, policies, *, objective,
         held=None):
    """The :class:`Fleet` of a group on ``view``.

    :param shapes: ``[(name, count, RequestSpec)]``
    :param policies: :class:`~.problem.Policy` records
    :param held: ``{provider uuid: members}`` the group holds now
    """
    requests, eligible = [], []
    for name, _count, spec in shapes:
        request, mask = _filtered(view, routes, lookup, spec, name)
        requests.append(request)
        eligible.append(mask)
    classes = sorted({rc for r in requests for rc in r.resources})
    free = np.stack([_free(view, rc) for rc in classes], axis=1) if (
        classes) else np.zeros((view.n, 0))
    built = tuple(problem_mod.Shape(
        name, count, np.array([r.resources.get(rc, 0) for rc in classes],
                              dtype=float), mask)
        for (name, count, _), r, mask in zip(shapes, requests, eligible,
                                             strict=True))
    levels = {p.level for p in policies} - {problem_mod.HOST}
    problem = problem_mod.Problem(
        free=free, domains={lv: level_domains(view, lv) for lv in levels},
        shapes=built, policies=tuple(policies),
        fixed=_held_rows(view, held or {}), objective=objective)
    return Fleet(problem, view, tuple(requests))


def member_request(routes, lookup, spec, name):
    """The ResourceRequest of one member of shape ``spec``.

    :raises: InvalidRequest (a member naming a server group; a spec the
        translation refuses)
    """
    if spec.instance_group is not None:
        raise exception.InvalidRequest(
            reason="group: member %s names a server group; the group's "
                   "policies say where its members go" % name)
    return translate.from_spec(spec, [uuidutils.generate_uuid()], lookup,
                               routes.profiles)


def _filtered(view, routes, lookup, spec, name):
    """(ResourceRequest, rows passing the shape's filters)."""
    request = member_request(routes, lookup, spec, name)
    cycle = cycle_mod.CycleState(request, view,
                                 owner=claims_mod.owner_of(request))
    ranking = routes.for_request(request).pipeline.rank(cycle)
    return request, ranking.outcome.mask & ~view.tree_rows()


def _free(view, resource_class):
    col = view.rc_column(resource_class)
    if col is None:
        return np.zeros(view.n)
    return np.asarray(view.free(col), dtype=float)


def _held_rows(view, held):
    fixed = np.zeros(view.n, dtype=np.int64)
    for uuid, members in held.items():
        row = view.row_of(uuid)
        if row is not None:
            fixed[row] += members
    return fixed
