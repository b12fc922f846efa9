"""The topology levels the workers started with, and the stored
locations outside a list of levels.

Changing ``[topology] levels`` is an operator's act: every worker writes
the levels it starts with into the one row of ``topology_levels``
(migration 0014) and gets back the ones written before, so that it can
say "levels changed: old -> new". ``gantt-status upgrade check`` reads
the same row and the stored locations (:func:`locations`).

A worker that starts with other levels than its peers writes its own:
the next start of a peer logs the change back, which is what an operator
running workers of two configurations needs to read.
"""

import datetime

from oslo_db import exception as db_exc
import sqlalchemy as sa

from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TOPOLOGY_LEVELS

_ROW = 1


def _text(levels):
    return ",".join(levels)


def _levels(text):
    return tuple(text.split(",")) if text else ()


def recorded(conn):
    """The levels last written (a tuple, ``host`` left out), or None."""
    text = conn.execute(sa.select(TOPOLOGY_LEVELS.c.levels).where(
        TOPOLOGY_LEVELS.c.id == _ROW)).scalar()
    return None if text is None else _levels(text)


def record(db, levels, now=None):
    """Write ``levels`` (outermost first, ``host`` left out) as the ones
    in force; return those written before (None: the first time)."""
    now = now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    values = {"levels": _text(levels), "updated_at": now}
    try:
        with db.begin() as conn:
            previous = recorded(conn)
            if previous is None:
                conn.execute(TOPOLOGY_LEVELS.insert().values(id=_ROW,
                                                             **values))
            elif previous != tuple(levels):
                conn.execute(TOPOLOGY_LEVELS.update().where(
                    TOPOLOGY_LEVELS.c.id == _ROW).values(**values))
            return previous
    except db_exc.DBDuplicateEntry:
        # another worker wrote the first row at the same moment
        return record(db, levels, now)


def locations(conn):
    """``[(host name, location text)]`` of every stored location, compute
    nodes' and standalone providers' (reported ones; aggregates name
    configured levels only)."""
    compute = sa.select(REPORTS.c.host, REPORTS.c.location).where(
        REPORTS.c.location.is_not(None))
    standalone = (sa.select(RP.c.name, PROVIDER_REPORTS.c.location)
                  .join(RP, RP.c.id == PROVIDER_REPORTS.c.resource_provider_id)
                  .where(PROVIDER_REPORTS.c.location.is_not(None)))
    return [tuple(row) for row in conn.execute(sa.union_all(compute,
                                                            standalone))]
