"""Compute nodes made through the Placement REST API, as hosts.

A worker's host is a root provider with a ``host_reports`` row (see
:mod:`gantt.db.host_load`). Agents write that row with their reports;
Nova's computes write only Placement's rows (provider, inventories,
traits, aggregates). So in the transaction of every REST write to a
provider tree, :func:`refresh` keeps the root's row as the API's rows
say, when the API owns it (``source`` is :data:`SOURCE`):

* a root with the ``COMPUTE_NODE`` trait and no row (no agent reports
  it; not a standalone provider) gets one. What gantt-api knows of Nova
  (a :class:`NovaSide`, from ``[nova]``) fills it in:

  - nodename: the root's name; host: the service host Nova's record of
    the node names (:mod:`gantt.nova.compute_nodes`), else the node's
    name; capabilities: the record's hypervisor capabilities, else none;
  - cell: the cell whose database holds Nova's record, else ``[nova]
    default_cell_uuid`` (Nova's computes name no cell to Placement; the
    Selections name the row's cell, and Nova keeps a move in the
    instance's cell);
  - zone: ``[nova] default_availability_zone``, Nova's zone of a node in
    no zone aggregate (an aggregate's zone still wins, as for any host);
  - disabled while it has ``COMPUTE_STATUS_DISABLED`` (the trait Nova
    sets on a disabled compute service);
  - ``report_sequence`` the lowest there is, so that an agent's first
    report of the node supersedes it and from then on owns the row.

  A host name another compute node holds gives no row (one host name,
  one compute node);
* a row the API owns follows the root and ``[nova]``: nodename, zone,
  disabled flag, ``received_at`` the time of this write (a sign of life,
  see ``[api] compute_node_down_time``); while no record of Nova's
  described it, the default cell, and the record's host, capabilities
  and cell as soon as one is read (a node made before the record could
  be read); it is deleted when the root loses ``COMPUTE_NODE``;
* a row an agent wrote is left alone: the agent's reports describe the
  node (the REST write changed its contents until the next report).

:func:`seen` stores a sign of life that came another way (Nova's
instance-info casts), at most once per ``interval`` whatever the number
of workers that heard it.
"""

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class NovaSide:
    """What gantt-api knows of Nova for the nodes Nova's computes make."""

    cell_uuid: str | None = None
    availability_zone: str | None = None
    # reads Nova's records of its compute nodes (None: none is read)
    nodes: object = None

    @classmethod
    def from_conf(cls, conf, nodes=None):
        return cls(conf.nova.default_cell_uuid,
                   conf.nova.default_availability_zone, nodes)


def refresh(conn, root_id, now, nova=NovaSide()):
    """Bring root provider ``root_id``'s host row to the API's rows (see
    the module's docstring); inside the REST write's transaction.

    :param nova: a :class:`NovaSide`
    :returns: what was done: "created", "updated", "deleted" or None
    """
    root = conn.execute(sa.select(
        RP.c.name, RP.c.uuid, RP.c.root_provider_id).where(
            RP.c.id == root_id)).first()
    if root is None or _standalone(conn, root_id):
        return None
    traits = set(conn.execute(sa.select(TRAITS.c.trait).where(
        TRAITS.c.resource_provider_id == root_id)).scalars())
    # (a root moved under another provider is a root no longer)
    compute = COMPUTE_NODE in traits and root.root_provider_id == root_id
    row = conn.execute(sa.select(REPORTS.c.source, REPORTS.c.details).where(
        REPORTS.c.resource_provider_id == root_id)).first()
    if row is None:
        return _create(conn, root_id, _Node.read(root, nova), traits,
                       now, nova) if compute else None
    if row.source != SOURCE:
        return None
    mine = REPORTS.c.resource_provider_id == root_id
    if not compute:
        conn.execute(REPORTS.delete().where(mine))
        return "deleted"
    unread = row.details == _NO_DETAILS
    # no record of Nova's yet: the default cell (or the record, below)
    cell = {"cell_uuid": nova.cell_uuid} if unread else {}
    conn.execute(REPORTS.update().where(mine).values(
        nodename=root.name, availability_zone=nova.availability_zone,
        disabled=DISABLED in traits, received_at=now, **cell))
    if unread and nova.nodes is not None:
        _learn(conn, root_id, _Node.read(root, nova))
    return "updated"


#: the details of a row no record of Nova's described
_NO_DETAILS = "{}"


@dataclasses.dataclass(frozen=True)
class _Node:
    """A REST-made compute node as its host row names it."""

    name: str
    host: str
    details: str
    cell_uuid: str | None

    @classmethod
    def read(cls, root, nova):
        """Root provider ``root`` with Nova's record, if ``nova.nodes``
        has one (a :class:`NovaSide`)."""
        nodes = nova.nodes
        record = None if nodes is None else nodes.lookup(root.uuid)
        if record is None:
            return cls(root.name, root.name, _NO_DETAILS, nova.cell_uuid)
        if record.host != root.name:
            LOG.info("Compute node %s (%s) is on service host %s, as "
                     "Nova's record says", root.name, root.uuid,
                     record.host)
        return cls(root.name, record.host, record.details(),
                   record.cell_uuid or nova.cell_uuid)


def _learn(conn, root_id, node):
    """A row made with no record of Nova's takes the one now read."""
    if node.details == _NO_DETAILS or _held_by_another(conn, root_id, node):
        return
    conn.execute(REPORTS.update().where(
        REPORTS.c.resource_provider_id == root_id).values(
            host=node.host, details=node.details, cell_uuid=node.cell_uuid))


def _held_by_another(conn, root_id, node):
    """One host name, one compute node: is ``node``'s host another's?"""
    holder = conn.execute(sa.select(REPORTS.c.resource_provider_id).where(
        REPORTS.c.host == node.host)).scalar()
    if holder is not None and holder != root_id:
        LOG.warning("Compute node provider %s: another compute node is "
                    "host %s already; not a host to the scheduler",
                    node.name, node.host)
        return True
    return False


def _standalone(conn, root_id):
    held = PROVIDER_REPORTS.c.resource_provider_id
    return conn.execute(sa.select(held).where(
        held == root_id)).first() is not None


def _create(conn, root_id, node, traits, now, nova):
    if _held_by_another(conn, root_id, node):
        return None
    try:
        with conn.begin_nested():
            conn.execute(REPORTS.insert().values(
                resource_provider_id=root_id, host=node.host,
                nodename=node.name, cell_uuid=node.cell_uuid,
                availability_zone=nova.availability_zone,
                disabled=DISABLED in traits,
                report_sequence=db_hosts.RESET_SEQUENCE, num_instances=0,
                num_io_ops=0, details=node.details, received_at=now,
                source=SOURCE))
    except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
        # another write made the name a host at the same moment
        LOG.warning("Compute node provider %s: host %s taken meanwhile; "
                    "not a host to the scheduler", node.name, node.host)
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
