"""Host aggregates in SQL: whole-aggregate replace, delete, load all.

An aggregate is small (a name, a host list, a few metadata keys) and
changes rarely, so ``save`` rewrites it whole in one transaction; the last
writer wins, as with Nova's aggregate API.
"""

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt import exception
from gantt.db.models import AGGREGATE_HOSTS
from gantt.db.models import AGGREGATE_META
from gantt.db.models import AGGREGATES
from gantt.db.models import REPORTS
from gantt.objects import aggregate as aggregate_obj


def save(db, aggregate, retries=3):
    """Create or replace ``aggregate`` (an Aggregate object).

    :returns: True if it was created, False if it replaced one
    :raises: HostNotFound when it adds a host that never reported (nothing
        is written)
    """
    for _attempt in range(retries):
        try:
            with db.begin() as conn:
                return _save(conn, aggregate)
        except db_exc.DBDuplicateEntry:
            # another worker created the same uuid first: replace it
            continue
    raise db_exc.DBDuplicateEntry(columns=["uuid"])


def _save(conn, aggregate):
    now = timeutils.utcnow()
    row = conn.execute(sa.select(AGGREGATES.c.id).where(
        AGGREGATES.c.uuid == aggregate.uuid)).first()
    created = row is None
    _refuse_unknown_hosts(conn, None if created else row.id, aggregate.hosts)
    if created:
        agg_id = conn.execute(AGGREGATES.insert().values(
            uuid=aggregate.uuid, name=aggregate.name,
            created_at=now)).inserted_primary_key[0]
    else:
        agg_id = row.id
        conn.execute(AGGREGATES.update()
                     .where(AGGREGATES.c.id == agg_id)
                     .values(name=aggregate.name, updated_at=now))
        _delete_members(conn, agg_id)
    if aggregate.hosts:
        conn.execute(AGGREGATE_HOSTS.insert(), [
            {"aggregate_id": agg_id, "host": h}
            for h in sorted(set(aggregate.hosts))])
    if aggregate.metadata:
        conn.execute(AGGREGATE_META.insert(), [
            {"aggregate_id": agg_id, "key": k, "value": v}
            for k, v in sorted(aggregate.metadata.items())])
    return created


def _refuse_unknown_hosts(conn, agg_id, hosts):
    """Refuse hosts the aggregate adds that no agent ever reported.

    Hosts it already lists stay allowed (a host deleted since must not
    block every later change of its aggregates), as Nova refuses only the
    host being added.
    """
    added = set(hosts)
    if agg_id is not None:
        added -= set(conn.execute(sa.select(AGGREGATE_HOSTS.c.host).where(
            AGGREGATE_HOSTS.c.aggregate_id == agg_id)).scalars())
    if not added:
        return
    known = set(conn.execute(sa.select(REPORTS.c.host).where(
        REPORTS.c.host.in_(sorted(added)))).scalars())
    unknown = sorted(added - known)
    if unknown:
        raise exception.HostNotFound(hosts=", ".join(unknown))


def _delete_members(conn, agg_id):
    """Delete the host list and metadata of aggregate ``agg_id``."""
    for table in (AGGREGATE_HOSTS, AGGREGATE_META):
        conn.execute(table.delete().where(table.c.aggregate_id == agg_id))


def delete(db, uuid):
    """Delete an aggregate; False when there was none."""
    with db.begin() as conn:
        row = conn.execute(sa.select(AGGREGATES.c.id).where(
            AGGREGATES.c.uuid == uuid)).first()
        if row is None:
            return False
        # NOTE: explicit deletes, not ON DELETE CASCADE, which SQLite
        # enforces only with foreign keys on
        _delete_members(conn, row.id)
        conn.execute(AGGREGATES.delete().where(AGGREGATES.c.id == row.id))
        return True


def load_all(db):
    """Every aggregate, as Aggregate objects sorted by name then uuid."""
    with db.begin() as conn:
        aggs = {r.id: (r.uuid, r.name) for r in conn.execute(
            sa.select(AGGREGATES.c.id, AGGREGATES.c.uuid, AGGREGATES.c.name))}
        hosts = {}
        for agg_id, host in conn.execute(
                sa.select(AGGREGATE_HOSTS.c.aggregate_id,
                          AGGREGATE_HOSTS.c.host)):
            hosts.setdefault(agg_id, []).append(host)
        meta = {}
        for agg_id, key, value in conn.execute(
                sa.select(AGGREGATE_META.c.aggregate_id,
                          AGGREGATE_META.c.key, AGGREGATE_META.c.value)):
            meta.setdefault(agg_id, {})[key] = value
    out = [aggregate_obj.Aggregate(uuid=uuid, name=name,
                                   hosts=sorted(hosts.get(agg_id, [])),
                                   metadata=meta.get(agg_id, {}))
           for agg_id, (uuid, name) in aggs.items()]
    return sorted(out, key=lambda a: (a.name, a.uuid))
