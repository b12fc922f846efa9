"""``GET /allocation_candidates`` (from 1.10): Gantt's own solver
(:mod:`gantt.scheduler.pipeline.allocation_candidates`, which keeps
Placement's rules for trees, sharing providers and request groups) over
the stored providers, answered in Placement's shape for the microversion
asked."""

import collections

from gantt.api import candidate_query
from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.db import provider_index
from gantt.scheduler.pipeline import allocation_candidates as ac


@w.Wsgify
@w.since(10)
@w.check_accept("application/json")
def list_candidates(req):
    w.authorize(req, "placement:allocation_candidates:list")
    w.validate_query(req, schemas.for_version(schemas.CANDIDATES_QUERY,
                                              req))
    parsed = candidate_query.parse(req)
    with w.services(req).db.begin() as conn:
        _check_names(conn, parsed.query)
        index = provider_index.load(conn)
    found = _solve(index, parsed.query)
    found = _nested_filter(req, index, found)
    summaries = _summarized(req, index, found)
    if parsed.limit is not None:
        found = found[:parsed.limit]
        roots = {index.get(u).root_uuid for c in found
                 for u in c.allocations}
        summaries = [p for p in summaries if p.root_uuid in roots]
    return w.json_response(req, {
        "allocation_requests": [_request(req, c) for c in found],
        "provider_summaries": {p.uuid: _summary(req, p, parsed.resources)
                               for p in summaries}})


def _check_names(conn, query):
    classes = {rc for g in query.groups for rc in g.resources}
    unknown = classes - names.CLASSES.known(conn, classes)
    if unknown:
        raise errors.bad_request(
            "Invalid resource class in resources parameter: No such "
            "resource class %s." % sorted(unknown)[0])
    traits = set(query.root_required | query.root_forbidden)
    for g in query.groups:
        traits |= g.required_traits | g.forbidden_traits
        traits |= {t for s in g.any_traits for t in s}
    unknown = traits - names.TRAIT_NAMES.known(conn, traits)
    if unknown:
        raise errors.bad_request("No such trait(s): %s." %
                                 ", ".join(sorted(unknown)))


def _solve(index, query):
    """Every candidate; none when a named in_tree provider is unknown."""
    for g in query.groups:
        if g.in_tree is not None and index.get(g.in_tree) is None:
            return []
    return ac.allocation_candidates(index, query)


def _nested_filter(req, index, found):
    """Before 1.29, only candidates taking from one provider per tree
    (Placement's ``exclude_nested_providers``), when trees exist."""
    if microversion.at_least(req, 29) or not any(
            len(index.tree(r)) > 1 for r in index.roots()):
        return found
    return [c for c in found if len({index.get(u).root_uuid
                                     for u in c.allocations}) ==
            len(c.allocations)]


def _summarized(req, index, found):
    """The providers summarized: every provider of each tree a candidate
    takes from (before 1.29 with trees: those the candidates name)."""
    if not microversion.at_least(req, 29) and any(
            len(index.tree(r)) > 1 for r in index.roots()):
        named = {u for c in found for u in c.allocations}
        return [index.get(u) for u in sorted(named)]
    roots = collections.OrderedDict()
    for c in found:
        for uuid in c.allocations:
            roots[index.get(uuid).root_uuid] = None
        for uuids in c.mappings.values():
            for uuid in uuids:
                roots[index.get(uuid).root_uuid] = None
    return [p for root in roots for p in index.tree(root)]


def _request(req, candidate):
    if not microversion.at_least(req, 12):
        return {"allocations": [
            {"resource_provider": {"uuid": uuid}, "resources": dict(used)}
            for uuid, used in candidate.allocations.items()]}
    body = {"allocations": {uuid: {"resources": dict(used)}
                            for uuid, used in candidate.allocations.items()}}
    if microversion.at_least(req, 34):
        body["mappings"] = {suffix: list(uuids)
                            for suffix, uuids in candidate.mappings.items()}
    return body


def _summary(req, provider, asked):
    every = microversion.at_least(req, 27)
    resources = {}
    for rc, inv in provider.inventories.items():
        if every or rc in asked:
            total, reserved, ratio = inv[0], inv[1], inv[5]
            resources[rc] = {"capacity": int((total - reserved) * ratio),
                             "used": int(provider.usage.get(rc, 0))}
    body = {"resources": resources}
    if microversion.at_least(req, 17):
        body["traits"] = sorted(provider.traits)
    if microversion.at_least(req, 29):
        body["parent_provider_uuid"] = provider.parent_uuid
        body["root_provider_uuid"] = provider.root_uuid
    return body
