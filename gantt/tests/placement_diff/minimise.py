"""Shrink a disagreeing case to a small world and request, and print it as
a ready-to-paste pytest case.

    .venv-placement/bin/python -m gantt.tests.placement_diff.minimise \\
        SEED INDEX [PER_WORLD]

takes case INDEX of world SEED (the ids of test_placement_diff.py are
``w<SEED>-r<INDEX>``), then greedily drops request features (root traits,
same_subtree sets, groups, traits, aggregates, in_tree), trees, providers,
consumers, traits, aggregates and inventory details while the two sides
still disagree, and prints the result.
"""

import dataclasses
import sys

from gantt.tests.placement_diff import compare
from gantt.tests.placement_diff import gantt_side
from gantt.tests.placement_diff import placement_side
from gantt.tests.placement_diff import worlds


def disagrees(placement, world, request):
    """The outcome when the sides disagree, else None (a request either
    side refuses counts as agreeing)."""
    try:
        placement.load(world)
        out = compare.run_case(placement, gantt_side.build_index(world),
                               world, request)
    except (placement_side.PlacementError, ValueError):
        return None
    return out if out.problems else None


def _world(world, providers=None, consumers=None):
    """``world`` with other providers and/or consumers (allocations on
    providers or classes no longer there dropped)."""
    providers = list(world.providers if providers is None else providers)
    by_uuid = {p.uuid: p for p in providers}
    kept = []
    for c in world.consumers if consumers is None else consumers:
        c2 = {}
        for rp, amounts in c.items():
            p = by_uuid.get(rp)
            if p is None:
                continue
            a = {rc: n for rc, n in amounts.items() if rc in p.inventories}
            if a:
                c2[rp] = a
        if c2:
            kept.append(c2)
    return worlds.World(world.seed, providers, kept, dict(world.aggregates))


def _request_variants(r):
    """Smaller requests, one change each."""
    for t in sorted(r.root_required):
        yield dataclasses.replace(r, root_required=r.root_required - {t})
    for t in sorted(r.root_forbidden):
        yield dataclasses.replace(r, root_forbidden=r.root_forbidden - {t})
    for i in range(len(r.same_subtree)):
        yield dataclasses.replace(
            r, same_subtree=r.same_subtree[:i] + r.same_subtree[i + 1:])
    if len(r.groups) > 1:
        for i, g in enumerate(r.groups):
            groups = r.groups[:i] + r.groups[i + 1:]
            subtree = tuple(s - {g.suffix} for s in r.same_subtree)
            subtree = tuple(s for s in subtree if s)
            yield dataclasses.replace(r, groups=groups, same_subtree=subtree)
    if r.group_policy:
        yield dataclasses.replace(r, group_policy=None)
        if r.group_policy == "isolate":
            yield dataclasses.replace(r, group_policy="none")
    for i, g in enumerate(r.groups):
        for g2 in _group_variants(g):
            yield dataclasses.replace(
                r, groups=r.groups[:i] + (g2,) + r.groups[i + 1:])


def _group_variants(g):
    yield from _trait_variants(g)
    yield from _aggregate_variants(g)
    if g.in_tree:
        yield dataclasses.replace(g, in_tree=None)
    for i in range(len(g.resources)):
        if len(g.resources) > 1:
            yield dataclasses.replace(
                g, resources=g.resources[:i] + g.resources[i + 1:])
        rc, n = g.resources[i]
        if n > 1:
            yield dataclasses.replace(
                g, resources=g.resources[:i] + ((rc, 1),)
                + g.resources[i + 1:])


def _trait_variants(g):
    for i in range(len(g.required)):
        yield dataclasses.replace(
            g, required=g.required[:i] + g.required[i + 1:])
        if len(g.required[i]) > 1:
            for t in sorted(g.required[i]):
                yield dataclasses.replace(g, required=g.required[:i] + (
                    g.required[i] - {t},) + g.required[i + 1:])
    for t in sorted(g.forbidden):
        yield dataclasses.replace(g, forbidden=g.forbidden - {t})


def _aggregate_variants(g):
    for i in range(len(g.member_of)):
        yield dataclasses.replace(
            g, member_of=g.member_of[:i] + g.member_of[i + 1:])
        for a in sorted(g.member_of[i]):
            if len(g.member_of[i]) > 1:
                yield dataclasses.replace(g, member_of=g.member_of[:i] + (
                    g.member_of[i] - {a},) + g.member_of[i + 1:])
    for a in sorted(g.forbidden_aggs):
        yield dataclasses.replace(g, forbidden_aggs=g.forbidden_aggs - {a})


def _subtree(world, uuid):
    out = {uuid}
    changed = True
    while changed:
        changed = False
        for p in world.providers:
            if p.parent in out and p.uuid not in out:
                out.add(p.uuid)
                changed = True
    return out


def _world_variants(w):
    """Smaller worlds, one change each."""
    # whole subtrees (trees first, then leaves and inner nodes)
    for p in sorted(w.providers, key=lambda p: p.parent is not None):
        gone = _subtree(w, p.uuid)
        yield _world(w, [q for q in w.providers if q.uuid not in gone])
    for i in range(len(w.consumers)):
        yield _world(w, consumers=w.consumers[:i] + w.consumers[i + 1:])
    for i, p in enumerate(w.providers):
        for p2 in _provider_variants(p):
            yield _world(w, w.providers[:i] + [p2] + w.providers[i + 1:])


def _provider_variants(p):
    for t in sorted(p.traits):
        yield dataclasses.replace(p, traits=p.traits - {t})
    for a in sorted(p.aggregates):
        yield dataclasses.replace(p, aggregates=p.aggregates - {a})
    for rc, inv in sorted(p.inventories.items()):
        inv_less = dict(p.inventories)
        del inv_less[rc]
        yield dataclasses.replace(p, inventories=inv_less)
        plain = worlds.Inventory(inv.total)
        for change in ({"reserved": 0}, {"allocation_ratio": 1.0},
                       {"step_size": 1}, {"min_unit": 1}, {"max_unit": 0},
                       dataclasses.asdict(plain)):
            inv2 = dataclasses.replace(inv, **change)
            if inv2 != inv:
                yield dataclasses.replace(
                    p, inventories={**p.inventories, rc: inv2})


def shrink(placement, world, request, log=None):
    """The smallest (world, request) found that still disagrees."""
    assert disagrees(placement, world, request), "the sides agree"
    progress = True
    while progress:
        progress = False
        for r2 in _request_variants(request):
            if disagrees(placement, world, r2):
                request, progress = r2, True
                break
        if progress:
            continue
        for w2 in _world_variants(world):
            if disagrees(placement, w2, request):
                world, progress = w2, True
                if log:
                    log("%d providers" % len(world.providers))
                break
    return world, request


def renumbered(world, request):
    """The same case with short readable uuids."""
    mapping = {}
    for k, p in enumerate(world.providers):
        mapping[p.uuid] = "00000000-0000-4000-8000-%012d" % (k + 1)
    for k, uuid in enumerate(sorted(world.aggregates.values())):
        mapping[uuid] = "00000000-0000-4000-a000-%012d" % (k + 1)

    def m(u):
        return mapping.get(u, u)

    providers = [dataclasses.replace(
        p, uuid=m(p.uuid), parent=m(p.parent) if p.parent else None,
        aggregates=frozenset(m(a) for a in p.aggregates))
        for p in world.providers]
    consumers = [{m(rp): a for rp, a in c.items()} for c in world.consumers]
    used_aggs = {a for p in world.providers for a in p.aggregates} | {
        a for g in request.groups for s in g.member_of for a in s} | {
        a for g in request.groups for a in g.forbidden_aggs}
    aggregates = {n: m(u) for n, u in world.aggregates.items()
                  if u in used_aggs}
    groups = tuple(dataclasses.replace(
        g, member_of=tuple(frozenset(m(a) for a in s) for s in g.member_of),
        forbidden_aggs=frozenset(m(a) for a in g.forbidden_aggs),
        in_tree=m(g.in_tree) if g.in_tree else None)
        for g in request.groups)
    return (worlds.World(0, providers, consumers, aggregates),
            dataclasses.replace(request, groups=groups))


_PROVIDER = "00000000-0000-4000-8000-"
_AGGREGATE = "00000000-0000-4000-a000-"


def _lit(value):
    """Python source for ``value`` (renumbered uuids as _uuid(n) and
    _agg(n), as test_placement_diff.py defines them)."""
    if isinstance(value, str):
        for prefix, func in ((_PROVIDER, "_uuid"), (_AGGREGATE, "_agg")):
            if value.startswith(prefix):
                return "%s(%d)" % (func, int(value[len(prefix):]))
        return '"%s"' % value
    if isinstance(value, frozenset):
        if not value:
            return "frozenset()"
        return "frozenset([%s])" % ", ".join(sorted(map(_lit, value)))
    if isinstance(value, tuple):
        return "(%s%s)" % (", ".join(map(_lit, value)),
                           "," if len(value) == 1 else "")
    if isinstance(value, list):
        return "[%s]" % ", ".join(map(_lit, value))
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (_lit(k), _lit(v))
                                  for k, v in sorted(value.items()))
    if dataclasses.is_dataclass(value):
        return _dataclass(value)
    return repr(value)


def _dataclass(value):
    """``Cls(a, b, name=c)``: the leading required fields by position,
    then the ones that differ from their defaults by name."""
    args = []
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        required = f.default is dataclasses.MISSING and (
            f.default_factory is dataclasses.MISSING)
        if required:
            args.append(_lit(v))
        elif v != (f.default if f.default is not dataclasses.MISSING
                   else f.default_factory()):
            args.append("%s=%s" % (f.name, _lit(v)))
    return "%s(%s)" % (type(value).__name__, ", ".join(args))


def _wrap(text, indent, width=79):
    """Break ``text`` after commas so that its lines fit ``width``."""
    lines, line = [], " " * indent
    for i, piece in enumerate(text.split(", ")):
        add = piece if i == 0 else ", " + piece
        if len(line) + len(add) > width - 1 and line.strip():
            lines.append(line + ",")
            line = " " * (indent + 4) + piece
        else:
            line += add
    lines.append(line)
    return "\n".join(lines)


def as_pytest(name, world, request, note=""):
    """Source of a pytest case for test_placement_diff.py."""
    lines = ["def test_%s(placement):" % name]
    if note:
        lines.append('    """%s"""' % note)
    lines.append("    world = World(0, [")
    for p in world.providers:
        lines.append(_wrap(_lit(p) + ",", 8))
    lines.append(_wrap("], %s, %s)" % (_lit(world.consumers),
                                       _lit(world.aggregates)), 4))
    lines.append(_wrap("request = " + _lit(request), 4))
    lines.append("    assert_agree(placement, world, request)")
    return "\n".join(lines)


def main(argv):
    seed, index = int(argv[1]), int(argv[2])
    per_world = int(argv[3]) if len(argv) > 3 else 5
    world, requests = worlds.case(seed, per_world)
    placement = placement_side.Placement()
    try:
        world, request = shrink(placement, world, requests[index],
                                log=lambda m: print("...", m,
                                                    file=sys.stderr))
        world, request = renumbered(world, request)
        out = disagrees(placement, world, request)
        print(out.report() if out else "(no longer disagrees renumbered)")
        print()
        print(as_pytest("w%d_r%d" % (seed, index), world, request))
    finally:
        placement.close()


if __name__ == "__main__":
    main(sys.argv)
