"""The provider index ``GET /allocation_candidates`` answers from, kept
between requests (one per application, see :func:`gantt.api.app.make_app`)
and brought up to date only when the database's change stamp moved.

The stamp is read in the request's own transaction, before the index
would be loaded, from aggregates that every write able to change an
answer moves, whoever writes (this API, a worker's claim, an agent's
report, the reshaper: the database is shared):

* ``resource_providers``: count, highest id, sum of generations (every
  inventory, trait, allocation, reshape and, from microversion 1.19,
  aggregate write bumps the generation of the providers it touches) and
  sums of parent and root ids (a reparent does not bump it);
* ``provider_aggregates``: count and sum of provider ids (aggregates
  written before microversion 1.19 leave the generation alone).

A replacement of one aggregate by another on the same provider before
1.19 keeps both sums; this application also forgets its index after
any aggregate write (:meth:`IndexCache.forget`), so only another API
process's pre-1.19 swap can go unseen until the next stamp change.

When only the sum of generations moved (claims, releases, inventory and
trait writes: the common writes), the providers whose generation moved
are found by buckets of ids (:func:`stored_index.generation_sums`) and
read again, and only they (:func:`stored_index.reload`), when they
are at most :data:`INCREMENTAL_SHARE` of the providers (and at least
:data:`INCREMENTAL_MIN`); any other move, or a provider that changed
trees, loads everything again. Reloads take turns (a lock): a request
that finds the stamp moved waits for the reload under way rather than
making its own.
"""

import dataclasses
import threading

import sqlalchemy as sa

from gantt.api import candidates_body
from gantt.api import flat_candidates
from gantt.db.models import AGGS
from gantt.db.models import RP
from gantt.scheduler.state import stored_index

#: the sum of generations, the one part of the stamp a reload of some
#: providers follows
_GENERATIONS = 2
INCREMENTAL_SHARE = 0.25
INCREMENTAL_MIN = 64


def stamp(conn):
    """The change stamp: a tuple of integers (one statement)."""
    def total(column):
        return sa.func.coalesce(sa.func.sum(column), 0)
    aggregates = (
        sa.select(sa.func.count()).select_from(AGGS).scalar_subquery(),
        sa.select(total(AGGS.c.resource_provider_id)).scalar_subquery())
    row = conn.execute(sa.select(
        sa.func.count(), sa.func.coalesce(sa.func.max(RP.c.id), 0),
        total(RP.c.generation), total(RP.c.parent_provider_id),
        total(RP.c.root_provider_id), *aggregates)).one()
    return tuple(int(v) for v in row)


@dataclasses.dataclass(frozen=True)
class Held:
    """The index as of ``stamp`` and, when it is flat, its columns
    (:class:`flat_candidates.FlatColumns`, else None)."""

    stamp: tuple
    loaded: stored_index.Loaded
    columns: object

    @property
    def index(self):
        return self.loaded.index


class IndexCache:
    """The last index held and the stamp it is as of; safe to share
    between a WSGI server's threads (an index changes in place as
    :class:`~gantt.scheduler.state.provider_tree.ProviderIndex` allows,
    its columns never)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held = None
        #: the provider summaries written, kept with the index
        self.summaries = candidates_body.SummaryTexts()

    def held(self, conn):
        """The :class:`Held` as of ``conn``'s view of the database."""
        now = stamp(conn)
        held = self._held
        if held is not None and held.stamp == now:
            return held
        with self._lock:
            held = self._held
            if held is None or held.stamp != now:
                held = self._held = _refreshed(conn, held, now)
        return held

    def forget(self):
        with self._lock:
            self._held = None


def _refreshed(conn, held, now):
    if held is not None and _only_generations_moved(held.stamp, now):
        fresh = _reloaded(conn, held, now)
        if fresh is not None:
            return fresh
    loaded = stored_index.load(conn)
    return Held(now, loaded, flat_candidates.FlatColumns.build(loaded.index))


def _only_generations_moved(before, now):
    return all(a == b for i, (a, b) in enumerate(zip(before, now,
                                                     strict=True))
               if i != _GENERATIONS)


def _reloaded(conn, held, now):
    """``held`` with the providers whose generation moved read again, or
    None when a full load is due."""
    before = held.loaded
    sums = stored_index.generation_sums(conn)
    if sums.keys() != before.sums.keys():
        return None
    buckets = [b for b, s in sums.items() if before.sums[b] != s]
    if any(before.sums[b][0] != sums[b][0] for b in buckets):
        return None
    generations = stored_index.generations(conn, buckets)
    moved = []
    for rp_id, generation in generations.items():
        held_generation = before.generations.get(rp_id)
        if held_generation is None:
            return None
        if held_generation != generation:
            moved.append(rp_id)
    if len(moved) > max(INCREMENTAL_MIN,
                        INCREMENTAL_SHARE * len(before.generations)):
        return None
    uuids = stored_index.reload(conn, before, moved) if moved else []
    if uuids is None:
        return None
    loaded = dataclasses.replace(
        before, generations={**before.generations, **generations},
        sums=sums)
    if held.columns is not None:
        columns = held.columns.patched(loaded.index, uuids)
    else:
        columns = flat_candidates.FlatColumns.build(loaded.index)
    return Held(now, loaded, columns)
