"""Trees known not to fit a request's shape, until one of them changes.

A host that is a provider tree passes the columnar filters on its tree's
sums; whether one of its layouts fits (a NUMA cell with room *and* the
requested physnet, say) only the solver knows. When the best-weighed
trees do not fit, every request of that shape used to solve them again,
and as a cloud fills up the same misfits head the weighing: ten solves a
request at 10k trees in the benchmark. The memo remembers, per request
shape, each tree that had no layout together with exactly what the solver
read: the tree's providers, the sharing providers serving it and the
aggregate membership version. The cache never changes a provider in
place (a change is a new object), so identity says "unchanged"; any
change to the tree, its sharing providers or the aggregates makes the
entry stale and the tree is solved again.
"""

import collections
import threading


def shape_of(query):
    """A hashable key for an allocation-candidates query."""
    return (tuple((g.suffix, tuple(sorted(g.resources.items())),
                   g.required_traits, g.forbidden_traits, g.any_traits,
                   g.member_of, g.forbidden_aggregates, g.in_tree)
                  for g in query.groups),
            query.group_policy, query.same_subtree, query.root_required,
            query.root_forbidden)


def inputs(index, membership, source, root_uuid):
    """What the solver reads for one tree, to be taken *before* it
    solves: the tree's providers, the aggregate membership version and
    the sharing providers ``source`` (the request's HostProviders) serves
    it from. A change after this is read makes the entry stale, never
    wrong."""
    return (index.tree(root_uuid), membership.version,
            tuple(source.sharing_for(root_uuid)))


class MisfitMemo:
    """Per request shape: root uuid -> the :func:`inputs` under which
    the tree had no layout. Thread-safe; bounded to ``shapes`` request
    shapes (least recently used dropped)."""

    def __init__(self, shapes=64):
        self._shapes = shapes
        self._by_shape = collections.OrderedDict()
        self._lock = threading.Lock()

    def known_unfit(self, shape, root_uuid, now):
        """True if the tree had no layout for ``shape`` under inputs the
        same as ``now``."""
        with self._lock:
            trees = self._by_shape.get(shape)
            seen = trees.get(root_uuid) if trees else None
            if seen is None:
                return False
            if _same(seen, now):
                return True
            del trees[root_uuid]
            return False

    def remember(self, shape, root_uuid, seen):
        with self._lock:
            trees = self._by_shape.get(shape)
            if trees is None:
                trees = self._by_shape[shape] = {}
                while len(self._by_shape) > self._shapes:
                    self._by_shape.popitem(last=False)
            else:
                self._by_shape.move_to_end(shape)
            trees[root_uuid] = seen

    def __len__(self):
        with self._lock:
            return sum(len(t) for t in self._by_shape.values())


def _same(a, b):
    tree_a, version_a, sharing_a = a
    tree_b, version_b, sharing_b = b
    return (tree_a is tree_b and version_a == version_b
            and len(sharing_a) == len(sharing_b)
            and all(x is y for x, y in zip(sharing_a, sharing_b,
                                           strict=True)))
