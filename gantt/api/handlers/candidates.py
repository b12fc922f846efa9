"""``GET /allocation_candidates`` (from 1.10): Gantt's own solver
(:mod:`gantt.scheduler.pipeline.allocation_candidates`, which keeps
Placement's rules for trees, sharing providers and request groups) over
the stored providers (an index kept between requests while the
database's change stamp holds, :mod:`gantt.api.index_cache`), answered
in Placement's shape for the microversion asked."""

import collections
import dataclasses
import itertools

from gantt.api import candidate_query
from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.scheduler.pipeline import allocation_candidates as ac


@w.Wsgify
@w.since(10)
@w.check_accept("application/json")
def list_candidates(req):
    w.authorize(req, "placement:allocation_candidates:list")
    w.validate_query(req, schemas.for_version(schemas.CANDIDATES_QUERY,
                                              req))
    parsed = candidate_query.parse(req)
    services = w.services(req)
    with services.db.begin() as conn:
        _check_names(conn, parsed.query)
        index = services.candidates_index.index(conn)
    found = _solve(index, parsed.query)
    found = _nested_filter(req, index, found)
    found = with_swapped_twins(parsed.query, found)
    summaries = _summarized(req, index, found)
    if parsed.limit is not None:
        found = found[:parsed.limit]
        roots = {index.get(u).root_uuid for c in found
                 for u in c.allocations}
        summaries = [p for p in summaries if p.root_uuid in roots]
    shape = _Shape(microversion.at_least(req, 27),
                   microversion.at_least(req, 17),
                   microversion.at_least(req, 29))
    return w.json_response(req, {
        "allocation_requests": [_request(req, c) for c in found],
        "provider_summaries": {p.uuid: _summary(shape, p, parsed.resources)
                               for p in summaries}})


@dataclasses.dataclass(frozen=True)
class _Shape:
    """What a provider summary shows at the request's microversion (read
    once: a microversion comparison costs more than a summary)."""

    every_class: bool      # 1.27
    traits: bool           # 1.17
    tree: bool             # 1.29


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


def _twins(query):
    """Sets of suffixed groups asking for exactly the same thing (and in
    the same ``same_subtree`` sets): any of them may take another's
    provider."""
    alike = collections.defaultdict(list)
    for g in query.groups:
        if g.suffix:
            key = (dataclasses.replace(g, suffix=""), frozenset(
                i for i, s in enumerate(query.same_subtree)
                if g.suffix in s))
            alike[repr(key)].append(g.suffix)
    return [suffixes for suffixes in alike.values() if len(suffixes) > 1]


def with_swapped_twins(query, found):
    """Placement lists a candidate once per way of mapping identical
    request groups to its providers (the allocations are the same); the
    solver yields one of them: add the others."""
    twins = _twins(query)
    if not twins:
        return found
    out = []
    for candidate in found:
        seen = set()
        for mappings in _mappings_swapped(candidate.mappings, twins):
            key = tuple(sorted((s, tuple(u)) for s, u in mappings.items()))
            if key not in seen:
                seen.add(key)
                out.append(dataclasses.replace(candidate,
                                               mappings=mappings))
    return out


def _mappings_swapped(mappings, twins):
    per_set = [[dict(zip(suffixes, order, strict=True)) for order in
                itertools.permutations([mappings[s] for s in suffixes])]
               for suffixes in twins]
    for combination in itertools.product(*per_set):
        swapped = dict(mappings)
        for part in combination:
            swapped.update(part)
        yield swapped


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


def _summary(shape, provider, asked):
    every = shape.every_class
    resources = {}
    for rc, inv in provider.inventories.items():
        if every or rc in asked:
            total, reserved, ratio = inv[0], inv[1], inv[5]
            resources[rc] = {"capacity": int((total - reserved) * ratio),
                             "used": int(provider.usage.get(rc, 0))}
    body = {"resources": resources}
    if shape.traits:
        body["traits"] = sorted(provider.traits)
    if shape.tree:
        body["parent_provider_uuid"] = provider.parent_uuid
        body["root_provider_uuid"] = provider.root_uuid
    return body
