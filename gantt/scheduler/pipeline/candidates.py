"""Candidates: the hosts a request may consider at all, before filtering.

The first step keeps the providers of the kinds the request asks for
(``ResourceRequest.provider_kinds``: compute nodes, unless its profile
says otherwise). Then comes the work Placement does for Nova (resource
classes offered, traits, aggregates, trees) plus the caller's explicit
choices (forced, ignored and requested destinations, the instance a
container request names), and Nova's request pre-filters
(``nova/scheduler/request_filter.py``) that apply to Gantt's model: tenant
aggregates, availability zone, image type, disabled computes, isolated
aggregates, image properties as traits, accelerators and packed
virtqueues. Every host removed here is counted with its cause.
"""

import numpy as np

from gantt.scheduler.pipeline import containers
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import prefilters
from gantt.scheduler.pipeline import zones


def for_request(view, request, conf=None, record=False):
    """The candidate mask of ``view`` for ``request``, with its tally.

    :param conf: the configuration of the pre-filters; without it only
        those that are always on (disabled computes…) run
    :param record: keep each step's removed rows in ``outcome.steps``
    :returns: a :class:`~gantt.scheduler.pipeline.filters.FilterOutcome`
    """
    outcome = filters_base.FilterOutcome(
        mask=np.ones(view.n, dtype=bool), considered=view.n)
    # forced hosts skip the filters, not the pre-filters (Nova asks
    # Placement with its request filters for them too)
    steps = _chain(_steps(view, request),
                   prefilters.steps(view, request, conf))
    left = view.n
    for label, keep in steps:
        before = outcome.mask
        outcome.mask = before & keep
        # counted from what is left; the rows gone are found only if any
        removed = left - int(np.count_nonzero(outcome.mask))
        left -= removed
        if removed:
            gone = before & ~keep
            removal = filters_base.Removal(label, removed)
            outcome.removed.append(removal)
            if record:
                outcome.steps.append(
                    filters_base.Step(label, [removal], gone))
    return outcome


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable


def _steps(view, request):
    """(label, rows kept) pairs, cheapest and most selective first."""
    kinds = view.of_kinds(request.provider_kinds)
    if kinds is not None:
        # volume backends are no candidates for an instance, compute
        # nodes none for a volume (nor retired providers for anything)
        yield "not of kind %s" % ",".join(sorted(request.provider_kinds)), (
            kinds)
    if request.force_hosts:
        yield "not forced", view.rows_of_hosts_any_case(request.force_hosts)
    if request.force_nodes:
        yield "not forced", np.isin(view.nodenames,
                                    list(request.force_nodes))
    if request.ignore_hosts:
        yield "ignored", ~view.rows_of_hosts_any_case(
            request.ignore_hosts)
    dest = request.destination
    if dest is not None:
        if dest.host:
            yield "not the requested host", view.rows_of_hosts([dest.host])
        if dest.node:
            yield "not the requested node", view.nodenames == dest.node
        if dest.cell_uuid and not prefilters.cross_cell_allowed(request):
            yield "not in the requested cell", (
                view.column("cell") == view.cell_code(dest.cell_uuid))
        for any_of in dest.aggregates:
            yield "not in the requested aggregates", _any_aggregate(
                view, any_of.split(","))
    yield from containers.on_instance_steps(view, request)
    yield from zones.zone_steps(view, request)
    yield from _group_steps(view, request)


def _group_steps(view, request):
    """Placement's request-group semantics, on what columns can tell.

    A host that is one provider (no children, no sharing provider serving
    it) must satisfy every group itself, so its columns decide exactly, and
    ``group_policy=isolate`` with more than one resource group cannot be
    met. A host that is a tree, or that sharing providers serve, may find a
    trait or an aggregate on another provider: the columns narrow those
    only by what no layout can do without (a required trait that no
    provider of the tree has, and no sharing provider of the cloud), and
    the allocation-candidates solver decides the rest when they are picked
    (see :mod:`.layouts`).
    """
    tree = view.tree_rows()
    for trait in sorted(request.root_required):
        yield "root lacked trait %s" % trait, view.has_trait(trait)
    for trait in sorted(request.root_forbidden):
        yield "root had forbidden trait %s" % trait, ~view.has_trait(trait)
    groups = [g for g in request.groups if g.resources]
    if request.group_policy == "isolate" and len(groups) > 1:
        yield "cannot isolate request groups", tree.copy()
    for label, keep, in_tree in _group_columns(view, request):
        yield label, keep | (tree if in_tree is None else tree & in_tree)


def _group_columns(view, request):
    """(label, rows kept, tree rows kept or None for all of them)."""
    for group in request.groups:
        for trait in sorted(group.required_traits):
            yield "lacked trait %s" % trait, view.has_trait(trait), (
                _somewhere_in_tree(view, (trait,)))
        for trait in sorted(group.forbidden_traits):
            yield ("had forbidden trait %s" % trait, ~view.has_trait(trait),
                   None)
        for any_of in group.any_traits:
            keep = np.zeros(view.n, dtype=bool)
            for trait in any_of:
                keep |= view.has_trait(trait)
            yield ("lacked any of traits %s" % ",".join(sorted(any_of)),
                   keep, _somewhere_in_tree(view, any_of))
        for any_of in group.member_of:
            yield "not in aggregates %s" % ",".join(sorted(any_of)), (
                _any_aggregate(view, any_of)), None
        for agg in sorted(group.forbidden_aggregates):
            yield ("in forbidden aggregate %s" % agg,
                   ~view.in_aggregate(agg), None)
        if group.in_tree:
            yield "not in tree %s" % group.in_tree, (
                view.uuids == view.root_of(group.in_tree)), None


def _somewhere_in_tree(view, any_of):
    """Tree rows that may meet "one of ``any_of``" at all: a provider of
    the tree has one of the traits. None (all may) if a sharing provider
    has one, since it may serve any tree. A group's traits must all be on
    one provider, the unsuffixed group's on the providers it uses: either
    way each trait is on some provider of the tree or a sharing one."""
    if view.sharing_traits().intersection(any_of):
        return None
    keep = np.zeros(view.n, dtype=bool)
    for trait in any_of:
        keep |= view.in_tree_has_trait(trait)
    return keep


def _any_aggregate(view, aggregates):
    return view.in_any_aggregate([agg.strip() for agg in aggregates])
