"""``GET /allocation_candidates``'s query string as a
:class:`gantt.scheduler.pipeline.allocation_candidates.CandidateQuery`,
with Placement's checks (and messages, and error codes) on the way:
request groups by suffix (numbers until 1.33, names after), group_policy,
root_required (1.35), same_subtree and resourceless groups (1.36)."""

import dataclasses
import re

from gantt.api import errors
from gantt.api import microversion
from gantt.api import query
from gantt.scheduler.pipeline import allocation_candidates as ac
from gantt.scheduler.pipeline import request as request_mod

_KINDS = "resources|required|member_of|in_tree"
_KEY = re.compile(r"^(%s)([1-9][0-9]*)?$" % _KINDS)
_KEY_1_33 = re.compile(r"^(%s)([a-zA-Z0-9_-]{1,64})?$" % _KINDS)


@dataclasses.dataclass
class _Group:
    resources: dict = dataclasses.field(default_factory=dict)
    traits: query.Traits = query.Traits()
    member_of: list = dataclasses.field(default_factory=list)
    forbidden_aggs: set = dataclasses.field(default_factory=set)
    in_tree: str | None = None


@dataclasses.dataclass(frozen=True)
class Parsed:
    query: ac.CandidateQuery
    limit: int | None
    resources: frozenset      # every class asked for


def parse(req):
    """The request's CandidateQuery and limit (400 on bad input)."""
    wide = _request_wide(req)
    groups = _groups(req)
    if microversion.at_least(req, 36):
        _check_subtrees(groups, wide["same_subtree"])
    else:
        _check_orphans(groups)
    if microversion.at_least(req, 22):
        _check_forbidden(groups)
    if not wide["group_policy"] and sum(1 for s in groups if s) > 1:
        raise errors.bad_request(
            'The "group_policy" parameter is required when specifying '
            'more than one "resources{N}" parameter.')
    return Parsed(ac.CandidateQuery(
        groups=tuple(_resource_group(s, g) for s, g in groups.items()),
        group_policy=wide["group_policy"],
        same_subtree=tuple(frozenset(s) for s in wide["same_subtree"]),
        root_required=wide["root_required"],
        root_forbidden=wide["root_forbidden"]), wide["limit"],
        frozenset(rc for g in groups.values() for rc in g.resources))


def _groups(req):
    pattern = _KEY_1_33 if microversion.at_least(req, 33) else _KEY
    groups = {}
    for key, value in req.GET.items():
        match = pattern.match(key)
        if not match:
            continue
        kind, suffix = match.group(1), match.group(2) or ""
        group = groups.setdefault(suffix, _Group())
        if kind == "resources":
            group.resources = query.resources(value)
        elif kind == "required":
            group.traits = query.traits(req, suffix)
        elif kind == "member_of":
            group.member_of, group.forbidden_aggs = query.member_of(
                req, suffix)
        else:
            group.in_tree = query.in_tree(value)
    return groups


def _request_wide(req):
    get = req.GET
    limits = get.getall("limit")
    policies = get.getall("group_policy")
    wide = {"limit": int(limits[0]) if limits else None,
            "group_policy": policies[0] if policies else None,
            "root_required": frozenset(), "root_forbidden": frozenset(),
            "same_subtree": []}
    roots = get.getall("root_required")
    if len(roots) > 1:
        raise errors.bad_request(
            "Query parameter 'root_required' may be specified only once.",
            errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    if roots:
        wide.update(_root_traits(roots[0]))
    for value in get.getall("same_subtree"):
        suffixes = {s.strip() for s in value.split(",")}
        if "" in suffixes:
            raise errors.bad_request(
                "Empty string (unsuffixed group) can not be specified in "
                "`same_subtree` ", errors.QUERYPARAM_BAD_VALUE)
        wide["same_subtree"].append(suffixes)
    return wide


def _root_traits(value):
    required, forbidden = query.trait_value(value, True, False)
    required = {t for s in required for t in s}
    conflicts = required & forbidden
    if conflicts:
        raise errors.bad_request(
            "Conflicting required and forbidden traits found in "
            "root_required: %s" % ", ".join(sorted(conflicts)),
            errors.QUERYPARAM_BAD_VALUE)
    return {"root_required": frozenset(required),
            "root_forbidden": frozenset(forbidden)}


def _check_subtrees(groups, subtrees):
    resourceless = [s for s, g in groups.items() if not g.resources]
    if len(resourceless) == len(groups):
        raise errors.bad_request(
            "There must be at least one resources or resources[$S] "
            "parameter.", errors.QUERYPARAM_MISSING_VALUE)
    named = set().union(*subtrees) if subtrees else set()
    bad = [s for s in resourceless if s not in named]
    if bad:
        raise errors.bad_request(
            "Resourceless suffixed group request should be specified in "
            "`same_subtree` query param: bad group(s) - %s." % bad,
            errors.QUERYPARAM_BAD_VALUE)
    unknown = [s for s in named if s not in groups]
    if unknown:
        raise errors.bad_request(
            "Real suffixes should be specified in `same_subtree`: %s not "
            "found in %s." % (unknown, list(groups)),
            errors.QUERYPARAM_BAD_VALUE)


def _check_orphans(groups):
    orphans = ["required%s" % s for s, g in groups.items()
               if g.traits.required and not g.resources]
    if orphans:
        raise errors.bad_request(
            "All traits parameters must be associated with resources.  "
            "Found the following orphaned traits keys: %s" %
            ", ".join(orphans))
    orphans = ["member_of%s" % s for s, g in groups.items()
               if not g.resources and (g.member_of or g.forbidden_aggs)]
    if orphans:
        raise errors.bad_request(
            "All member_of parameters must be associated with resources. "
            "Found the following orphaned member_of keys: %s" %
            ", ".join(orphans))
    if not all(g.resources for g in groups.values()):
        raise errors.bad_request("All request groups must specify "
                                 "resources.")
    if not groups:
        raise errors.bad_request(
            "At least one request group (`resources` or `resources{$S}`) "
            "is required.")


def _check_forbidden(groups):
    conflicts = sorted(
        "required%s: (%s)" % (s, ", ".join(sorted(anyof)))
        for s, g in groups.items() for anyof in g.traits.required
        if all(t in g.traits.forbidden for t in anyof))
    if conflicts:
        raise errors.bad_request(
            "Conflicting required and forbidden traits found in the "
            "following traits keys: %s" % ", ".join(conflicts))


def _resource_group(suffix, g):
    single = [next(iter(s)) for s in g.traits.required if len(s) == 1]
    return request_mod.ResourceGroup(
        suffix=suffix, resources=dict(g.resources),
        required_traits=frozenset(single),
        forbidden_traits=frozenset(g.traits.forbidden),
        any_traits=tuple(frozenset(s) for s in g.traits.required
                         if len(s) > 1),
        member_of=tuple(frozenset(s) for s in g.member_of),
        forbidden_aggregates=frozenset(g.forbidden_aggs),
        in_tree=g.in_tree)
