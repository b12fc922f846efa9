"""The provider index ``GET /allocation_candidates`` answers from, kept
between requests (one per application, see :func:`gantt.api.app.make_app`)
and rebuilt only when the database's change stamp moved.

The stamp is read in the request's own transaction, before the index
would be loaded, from aggregates that every write able to change an
answer moves, whoever writes (this API, a worker's claim, an agent's
report, the reshaper: the database is shared):

* ``resource_providers``: count, highest id, sum of generations (every
  inventory, trait, allocation, reshape and, from microversion 1.19,
  aggregate write bumps the generation of the providers it touches) and
  sums of parent and root ids (a reparent does not bump it);
* ``resource_provider_aggregates``: count and sum of provider ids
  (aggregates written before microversion 1.19 leave the generation
  alone).

A replacement of one aggregate by another on the same provider before
1.19 keeps both sums; this application also forgets its index after
any aggregate write (:meth:`IndexCache.forget`), so only another API
process's pre-1.19 swap can go unseen until the next stamp change.
"""

import threading

import sqlalchemy as sa

from gantt.db.models import AGGS
from gantt.db.models import RP
from gantt.scheduler.state import stored_index


def stamp(conn):
    """The change stamp: a tuple of integers."""
    providers = conn.execute(sa.select(
        sa.func.count(), sa.func.coalesce(sa.func.max(RP.c.id), 0),
        sa.func.coalesce(sa.func.sum(RP.c.generation), 0),
        sa.func.coalesce(sa.func.sum(RP.c.parent_provider_id), 0),
        sa.func.coalesce(sa.func.sum(RP.c.root_provider_id), 0))).one()
    aggregates = conn.execute(sa.select(
        sa.func.count(),
        sa.func.coalesce(sa.func.sum(AGGS.c.resource_provider_id),
                         0))).one()
    return tuple(int(v) for v in (*providers, *aggregates))


class IndexCache:
    """The last index loaded and the stamp it was loaded at; safe to share
    between a WSGI server's threads (readers never change an index)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._stamp = None
        self._index = None

    def index(self, conn):
        """The index as of ``conn``'s view of the database."""
        now = stamp(conn)
        with self._lock:
            if self._index is not None and self._stamp == now:
                return self._index
        index = stored_index.load(conn)
        with self._lock:
            self._stamp, self._index = now, index
        return index

    def forget(self):
        with self._lock:
            self._stamp = self._index = None
