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

Only trees held in the provider index are remembered: a host that is one
provider (solved because a pool serves it) keeps its room in its row,
claims in flight included, which no identity here would show changing.
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
    solves: the tree's providers, the aggregate membership version, the
    cloud's list of sharing providers and those of them ``source`` (the
    request's HostProviders) serves this tree from. A change after this is
    read makes the entry stale, never wrong."""
    return (index.tree(root_uuid), membership.version,
            source.sharing_layout, tuple(source.sharing_for(root_uuid)))


def unchanged(seen, index, membership, source, root_uuid):
    """Whether :func:`inputs` would still give ``seen``, without working
    out again which sharing providers serve the tree (which costs more
    than the rest of the walk over a full cloud's best-weighed misfits).

    Which pools serve a tree follows from the tree's and the pools'
    aggregates: the tree's are covered by its providers and the membership
    version; a pool's aggregates change only with a report of the pool,
    which replaces the cloud's list of sharing providers. So with the same
    list, the pools serving the tree are the same, and only their usage
    can have moved (each change is a new object)."""
    tree, version, layout, pools = seen
    return (index.tree(root_uuid) is tree and membership.version == version
            and source.sharing_layout is layout
            and all(index.get(p.uuid) is p for p in pools))


class MisfitMemo:
    """Per request shape: root uuid -> the :func:`inputs` under which
    the tree had no layout. Thread-safe; bounded to ``shapes`` request
    shapes (least recently used dropped)."""

    def __init__(self, shapes=64):
        self._shapes = shapes
        self._by_shape = collections.OrderedDict()
        self._lock = threading.Lock()

    def known_unfit(self, shape, root_uuid, still):
        """True if the tree had no layout for ``shape`` and
        ``still(seen)`` says what it was solved under holds; else the
        entry, if any, is dropped."""
        with self._lock:
            trees = self._by_shape.get(shape)
            seen = trees.get(root_uuid) if trees else None
        if seen is None:
            return False
        if still(seen):
            return True
        with self._lock:
            if trees.get(root_uuid) is seen:
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

