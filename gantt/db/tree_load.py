"""Reading back the few provider trees a REST write changed.

:func:`load_trees` reads the trees that hold some providers (the roots a
``trees_changed`` cast names, or what a resync found written), with
:mod:`gantt.db.host_load`'s records and contents query;
:func:`changed_since` finds the providers written since a moment (their
``updated_at`` or ``created_at`` stamp: REST writes and reports set it,
claims leave it).
"""

import dataclasses

import numpy as np
import sqlalchemy as sa

from gantt.db import host_load
from gantt.db.models import REPORTS
from gantt.db.models import RP


@dataclasses.dataclass
class StoredHost:
    """One host as :func:`load_trees` reads it back."""

    report: object              # its host_reports row
    root: host_load.StoredProvider    # the compute node itself
    children: list              # its other providers, parents first


def load_trees(db, uuids):
    """The trees holding the providers ``uuids``, read back.

    :returns: ``(hosts, roots)``: every host among those trees'
        roots as a :class:`StoredHost`, and the uuids of all the roots
        found (hosts, standalone providers, plain providers)
    """
    root = RP.alias("root")
    with db.begin() as conn:
        roots = {r.id: r for r in conn.execute(
            sa.select(root.c.id, root.c.uuid, root.c.name,
                      root.c.generation)
            .select_from(RP.join(root, root.c.id == RP.c.root_provider_id))
            .where(RP.c.uuid.in_(sorted(set(uuids))))).all()}
        reports = {r.resource_provider_id: r for r in conn.execute(
            sa.select(REPORTS).where(
                REPORTS.c.resource_provider_id.in_(sorted(roots)))).all()}
        ids = np.array(sorted(reports), dtype=np.int64)
        kids, loaded = host_load.children_of(conn.execute(
            sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                      RP.c.root_provider_id, RP.c.parent_provider_id)
            .where(RP.c.root_provider_id.in_(ids.tolist()))
            .where(RP.c.root_provider_id != RP.c.id)
            .order_by(RP.c.id)).all(), ids,
            [roots[i].uuid for i in ids.tolist()])
        targets = dict(loaded)
        for rp_id in ids.tolist():
            r = roots[rp_id]
            targets[rp_id] = host_load.StoredProvider(
                uuid=r.uuid, name=r.name, parent_uuid=None,
                generation=r.generation)
        if targets:
            host_load.load_contents(conn, targets, sorted(targets))
    hosts = [StoredHost(reports[rp_id], targets[rp_id], kids.get(i, []))
             for i, rp_id in enumerate(ids.tolist())]
    return hosts, [r.uuid for r in roots.values()]


def changed_since(db, since):
    """The providers created or changed through the REST API (or by a
    report) at or after ``since``, a naive UTC datetime (None: none),
    and the newest such stamp of all (None: no provider):
    ``(uuids, newest)``. Claims leave the stamps (``updated_at``)."""
    with db.begin() as conn:
        newest = conn.execute(sa.select(sa.func.max(RP.c.created_at),
                                        sa.func.max(RP.c.updated_at))).one()
        uuids = [] if since is None else conn.execute(
            sa.select(RP.c.uuid).where(sa.or_(
                RP.c.created_at >= since,
                RP.c.updated_at >= since))).scalars().all()
    stamps = [t for t in newest if t is not None]
    return uuids, max(stamps) if stamps else None
