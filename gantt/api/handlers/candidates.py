"""``GET /allocation_candidates`` (from 1.10): Gantt's own solver
(:mod:`gantt.scheduler.pipeline.allocation_candidates`, which keeps
Placement's rules for trees, sharing providers and request groups) over
the stored providers (an index kept between requests while the
database's change stamp holds, :mod:`gantt.api.index_cache`), answered
in Placement's shape for the microversion asked
(:mod:`gantt.api.candidates_body`).

A request of one unsuffixed group on a flat cloud (no provider with
children, no sharing provider) is answered over numpy columns instead,
stopping at ``limit`` (:mod:`gantt.api.flat_candidates`); the same
candidates in the same order as the solver's."""

import collections
import dataclasses
import functools
import itertools

from gantt.api import candidate_query
from gantt.api import candidates_body as body
from gantt.api import errors
from gantt.api import flat_candidates
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
        held = services.candidates_index.held(conn)
    shape = body.Shape.of(req)
    summary = functools.partial(services.candidates_index.summaries, shape,
                                asked=parsed.resources)
    text = _flat(held.columns, parsed, shape, summary)
    if text is None:
        text = _general(req, held.index, parsed, shape, summary)
    return w.json_text_response(req, text)


def _flat(columns, parsed, shape, summary):
    """The answer over the flat columns, or None when they do not
    apply."""
    if columns is None or not flat_candidates.applies(parsed.query):
        return None
    found = flat_candidates.select(columns, parsed.query, parsed.limit)
    if found is None:
        return None
    providers = [columns.providers[i] for i in found]
    render = body.request_template(shape,
                                   parsed.query.plan.unsuffixed.amounts)
    return body.body([render(p.uuid) for p in providers],
                     [(p.uuid, summary(p)) for p in providers])


def _general(req, index, parsed, shape, summary):
    """The solver's answer."""
    found = _solve(index, parsed.query)
    found = _nested_filter(req, index, found)
    found = with_swapped_twins(parsed.query, found)
    summaries = _summarized(req, index, found)
    if parsed.limit is not None:
        found = found[:parsed.limit]
        roots = {index.get(u).root_uuid for c in found
                 for u in c.allocations}
        summaries = [p for p in summaries if p.root_uuid in roots]
    return body.body(
        [body.request_text(shape, c.allocations, c.mappings)
         for c in found],
        [(p.uuid, summary(p)) for p in summaries])


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
