"""HostProviders: a view's hosts as the allocation-candidates solver sees
them.

Hosts that are provider trees, and standalone providers, live in the
cache's :class:`~gantt.scheduler.state.provider_tree.ProviderIndex`. A
host that is one provider is not copied there (100k copies would cost
memory for nothing): when the solver asks for it, it is built from its
columns. The root's aggregates are always those of its row, which include
the aggregates operators list the host in, not only those its agent
reports.
"""

import dataclasses

import numpy as np

from gantt.scheduler.state import provider_tree


class HostProviders:
    """The provider source the solver reads, for one request's view."""

    def __init__(self, view):
        self._view = view
        table = view.table
        self._index = table.providers
        #: the cloud's sharing providers (uuids); a new tuple whenever
        #: one is added, removed or reported (see misfits.unchanged)
        self.sharing_layout = table.sharing_providers
        self._sharing = tuple(p for p in map(self._index.get,
                                             table.sharing_providers)
                              if p is not None)
        # root -> its providers: the solver asks for a tree, then for the
        # sharing providers of that tree (which needs the tree again)
        self._trees = {}
        self._sharing_for = {}    # root -> the sharing providers serving it
        self._by_aggregate = None

    def get(self, uuid):
        node = self._index.get(uuid)
        if node is not None:
            return node
        row = self._view.row_of(uuid)
        return None if row is None else self._plain(row)

    def tree(self, root_uuid):
        providers = self._trees.get(root_uuid)
        if providers is None:
            providers = self._trees[root_uuid] = self._tree(root_uuid)
        return providers

    def _tree(self, root_uuid):
        row = self._view.row_of(root_uuid)
        providers = self._index.tree(root_uuid)
        if providers:
            if row is None:
                return providers   # a standalone provider
            root = providers[0]
            aggregates = self._aggregates(row)
            if aggregates != root.aggregates:
                root = dataclasses.replace(root, aggregates=aggregates)
            return (root,) + tuple(providers[1:])
        if row is None:
            return ()
        return (self._plain(row),)

    def sharing_for(self, root_uuid):
        found = self._sharing_for.get(root_uuid)
        if found is None:
            by_aggregate = self._sharing_by_aggregate()
            hits = set()
            for p in self.tree(root_uuid):
                for aggregate in p.aggregates:
                    hits.update(by_aggregate.get(aggregate, ()))
            # in the order of the view's sharing providers, as before
            found = self._sharing_for[root_uuid] = tuple(
                self._sharing[i] for i in sorted(hits)
                if self._sharing[i].root_uuid != root_uuid)
        return found

    def _sharing_by_aggregate(self):
        """aggregate -> positions in ``_sharing`` of the providers in it
        (built once per view: a tree has few aggregates, a cloud may have
        hundreds of pools)."""
        if self._by_aggregate is None:
            by_aggregate = {}
            for i, p in enumerate(self._sharing):
                for aggregate in p.aggregates:
                    by_aggregate.setdefault(aggregate, []).append(i)
            self._by_aggregate = by_aggregate
        return self._by_aggregate

    def roots(self):
        return list(self._view.uuids) + [
            p.uuid for p in self._sharing]

    def is_simple(self, root_uuid):
        return len(self.tree(root_uuid)) == 1 and not self.sharing_for(
            root_uuid)

    # -- plain hosts ----------------------------------------------------------

    def _aggregates(self, row):
        return self._view.table.aggregates.members(row)

    def _plain(self, row):
        t = self._view.table
        names = t.resource_classes.names
        consumed = self._view.consumed_at(row)
        inventories = {}
        usage = {}
        for col in np.flatnonzero(t.has_inventory[row, :len(names)]):
            rc = names[col]
            inventories[rc] = (
                int(t.total[row, col]), int(t.reserved[row, col]),
                int(t.min_unit[row, col]), int(t.max_unit[row, col]),
                int(t.step_size[row, col]),
                float(t.allocation_ratio[row, col]))
            used = (int(t.used[row, col]) + int(t.pending[row, col])
                    + consumed.get(col, 0))
            if used:
                usage[rc] = used
        width = min(len(t.traits_index), t.traits.shape[1])
        traits = frozenset(t.traits_index.names[c] for c in np.flatnonzero(
            t.traits[row, :width]))
        uuid = t.uuids[row]
        return provider_tree.Provider(
            uuid=uuid, name=t.nodenames[row], parent_uuid=None,
            root_uuid=uuid, generation=int(t.generation[row]),
            inventories=inventories, usage=usage, traits=traits,
            aggregates=self._aggregates(row))
