"""Compute nodes made through the Placement REST API, as hosts.

A worker's host is a root provider with a ``host_reports`` row (see
:mod:`gantt.db.host_load`). Agents write that row with their reports;
Nova's computes write only Placement's rows (provider, inventories,
traits, aggregates). So in the transaction of every REST write to a
provider tree, :func:`refresh` keeps the root's row as the API's rows
say, when the API owns it (``source`` is :data:`SOURCE`):

* a root with the ``COMPUTE_NODE`` trait and no row (no agent reports
  it; not a standalone provider) gets one: host and nodename its name,
  the cell ``cell_uuid`` (the API's ``[nova] default_cell_uuid``: Nova's
  computes name no cell to Placement, and the Selections name that cell
  for them; None when unset), no zone (the aggregates' zones apply),
  disabled while it has ``COMPUTE_STATUS_DISABLED`` (the
  trait Nova sets on a disabled compute service), ``report_sequence`` the
  lowest there is, so that an agent's first report of the node
  supersedes it and from then on owns the row. A name another compute
  node holds as its host gives no row (one host name, one compute node);
* a row the API owns follows the root: its nodename the root's name, its
  cell ``cell_uuid``, its disabled flag the trait, ``received_at`` the
  time of this write (a sign of life, see ``[api]
  compute_node_down_time``); it is deleted when the root loses
  ``COMPUTE_NODE``;
* a row an agent wrote is left alone: the agent's reports describe the
  node (the REST write changed its contents until the next report).

:func:`seen` stores a sign of life that came another way (Nova's
instance-info casts), at most once per ``interval`` whatever the number
of workers that heard it.
"""

import datetime
import logging

from oslo_db import exception as db_exc
import sqlalchemy as sa

from gantt.db import hosts as db_hosts
from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS

LOG = logging.getLogger(__name__)

#: ``host_reports.source`` of a row the REST API keeps
SOURCE = "placement-api"
#: the trait that makes a root provider a compute host
COMPUTE_NODE = "COMPUTE_NODE"
#: the trait Nova sets on the node of a disabled compute service
DISABLED = "COMPUTE_STATUS_DISABLED"


def refresh(conn, root_id, now, cell_uuid=None):
    """Bring root provider ``root_id``'s host row to the API's rows (see
    the module's docstring); inside the REST write's transaction.

    :returns: what was done: "created", "updated", "deleted" or None
    """
    root = conn.execute(sa.select(RP.c.name, RP.c.root_provider_id).where(
        RP.c.id == root_id)).first()
    if root is None or _standalone(conn, root_id):
        return None
    traits = set(conn.execute(sa.select(TRAITS.c.trait).where(
        TRAITS.c.resource_provider_id == root_id)).scalars())
    # (a root moved under another provider is a root no longer)
    compute = COMPUTE_NODE in traits and root.root_provider_id == root_id
    row = conn.execute(sa.select(REPORTS.c.source).where(
        REPORTS.c.resource_provider_id == root_id)).first()
    if row is None:
        return _create(conn, root_id, root.name, traits, now,
                       cell_uuid) if compute else None
    if row.source != SOURCE:
        return None
    mine = REPORTS.c.resource_provider_id == root_id
    if not compute:
        conn.execute(REPORTS.delete().where(mine))
        return "deleted"
    conn.execute(REPORTS.update().where(mine).values(
        nodename=root.name, cell_uuid=cell_uuid,
        disabled=DISABLED in traits, received_at=now))
    return "updated"


def _standalone(conn, root_id):
    held = PROVIDER_REPORTS.c.resource_provider_id
    return conn.execute(sa.select(held).where(
        held == root_id)).first() is not None


def _create(conn, root_id, name, traits, now, cell_uuid):
    holder = conn.execute(sa.select(REPORTS.c.resource_provider_id).where(
        REPORTS.c.host == name)).first()
    if holder is not None:
        LOG.warning("Compute node provider %s: another compute node is "
                    "host %s already; not a host to the scheduler", name,
                    name)
        return None
    try:
        with conn.begin_nested():
            conn.execute(REPORTS.insert().values(
                resource_provider_id=root_id, host=name, nodename=name,
                cell_uuid=cell_uuid, disabled=DISABLED in traits,
                report_sequence=db_hosts.RESET_SEQUENCE, num_instances=0,
                num_io_ops=0, details="{}", received_at=now,
                source=SOURCE))
    except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
        # another write made the name a host at the same moment
        LOG.warning("Compute node provider %s: host %s taken meanwhile; "
                    "not a host to the scheduler", name, name)
        return None
    return "created"


def seen(db, uuid, now, interval):
    """Store ``now`` as the last sign of life of the API-made host
    ``uuid`` unless one within ``interval`` seconds is stored: every
    worker hears a fanout cast, one of them writes.

    :returns: True if this call wrote it
    """
    with db.begin() as conn:
        rp_id = sa.select(RP.c.id).where(RP.c.uuid == uuid).scalar_subquery()
        return conn.execute(
            REPORTS.update()
            .where(REPORTS.c.resource_provider_id == rp_id)
            .where(REPORTS.c.source == SOURCE)
            .where(REPORTS.c.received_at
                   < now - datetime.timedelta(seconds=interval))
            .values(received_at=now)).rowcount == 1
