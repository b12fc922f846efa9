"""Operator actions on one compute node's identity, and its boot ids.

A compute node is known by its host name (one name, one provider: the
unique key of ``host_reports.host``) and guards its reports with a
sequence that restarts with every boot of its agent (``boot_id``; see
``gantt.scheduler.intake.report_rules.supersedes``). Here an operator:

* resets the stored sequence of a host, so that its agent's next report
  is stored whatever its sequence (an agent that sends no boot id, locked
  out by a forged report of a huge sequence);
* deletes a compute node that is no longer in service, so that a
  re-installed host may report under the same name with a new uuid.
"""

import sqlalchemy as sa

from gantt import exception
from gantt.db.models import ALLOC
from gantt.db.models import REPORTS
from gantt.db.models import RP

#: the stored sequence after a reset: below any an agent sends
RESET_SEQUENCE = -2 ** 63


def boot_ids(db):
    """``{compute node uuid: boot id}`` of the hosts whose agents say."""
    with db.begin() as conn:
        return dict(conn.execute(
            sa.select(RP.c.uuid, REPORTS.c.boot_id)
            .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
            .where(REPORTS.c.boot_id.is_not(None))).all())


def _host_row(conn, host, locking=False):
    query = (sa.select(RP.c.id, RP.c.uuid)
             .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
             .where(REPORTS.c.host == host))
    if locking:
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise exception.HostNotFound(hosts=host)
    return row


def reset_sequence(db, host):
    """Let the next report of ``host`` be stored whatever its sequence and
    boot id.

    :returns: the uuid of the host's compute node
    :raises: HostNotFound
    """
    with db.begin() as conn:
        row = _host_row(conn, host)
        conn.execute(REPORTS.update()
                     .where(REPORTS.c.resource_provider_id == row.id)
                     .values(report_sequence=RESET_SEQUENCE, boot_id=None))
    return row.uuid


def delete_host(db, host):
    """Delete the compute node ``host`` and its provider tree, which must
    hold no allocation (migrate or delete its instances first, as Nova
    asks before it deletes a compute service).

    :returns: the uuid of the deleted compute node
    :raises: HostNotFound; ProviderInUse while allocations remain
    """
    with db.begin() as conn:
        row = _host_row(conn, host, locking=True)
        tree = sa.select(RP.c.id).where(RP.c.root_provider_id == row.id)
        consumers = conn.execute(
            sa.select(sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
            .where(ALLOC.c.resource_provider_id.in_(tree))).scalar_one()
        if consumers:
            raise exception.ProviderInUse(uuid=row.uuid,
                                          consumers=int(consumers))
        ids = conn.execute(tree).scalars().all()
        # children first: their parent_provider_id names the others
        conn.execute(RP.delete().where(RP.c.id.in_(ids))
                     .where(RP.c.id != row.id))
        conn.execute(RP.delete().where(RP.c.id == row.id))
    return row.uuid
