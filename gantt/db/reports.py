"""Storing reports: provider trees upserted, guarded by report_sequence.

A compute node is the root of a provider tree; its children (NUMA cells,
physical functions, GPUs…) arrive in the same report and are stored with
``root_provider_id`` set to the node's row. A standalone provider (a
shared storage pool, for example) is its own root, reported on its own
(``save_provider``) and marked by a ``provider_reports`` row instead of a
``host_reports`` one.

Locking: a report is stored in two transactions. The first only reads:
whether another compute node holds the host name (refused), and the root
(and it inserts a new tree whole). The second starts with writes and
locks: the sequence guard's UPDATE, then ``SELECT … FOR UPDATE`` of every
provider row of the tree, and only then reads inventories and usage. A
claim compares-and-swaps a provider's generation before it writes
allocations, so a claim that has not swapped yet waits on that lock (and
then fails if the save bumped the generation), and one that has swapped
has committed before the save reads. On MariaDB, whose repeatable-read
snapshot is taken at a transaction's first plain read, no plain read may
come before those locks, or the save could miss a claim committed in
between and cut an inventory below its usage.

What the second transaction writes, once its report won the guard, is
:class:`gantt.db.tree_writer.TreeWriter`'s work.
"""

import collections
import json

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from gantt import exception
from gantt.db import tree_writer
from gantt.db.models import ALLOC
from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import REPORTS
from gantt.db.models import RP

#: the most a TEXT column holds on MariaDB/MySQL, in bytes (the JSON
#: written is ASCII: one byte a character)
TEXT_MAX = 65535


def _report_row(node, received_at):
    """The host_reports row of a report.

    :raises: InvalidRequest for JSON detail longer than a TEXT column holds
        (MariaDB would refuse the statement; PostgreSQL would take it, and
        a report must mean the same on both)
    """
    row = _report_values(node, received_at)
    for column in ("details", "instance_uuids"):
        if row[column] is not None and len(row[column]) > TEXT_MAX:
            raise _invalid("report of %s: %s take %d bytes as JSON, more "
                           "than the %d the database stores" % (
                               node.host, "capabilities, stats, metrics, "
                               "NUMA cells and PCI pools" if column ==
                               "details" else "instance_uuids",
                               len(row[column]), TEXT_MAX))
    return row


def _report_values(node, received_at):
    return {
        "host": node.host, "nodename": node.nodename,
        "cell_uuid": node.cell_uuid,
        "availability_zone": node.availability_zone,
        "disabled": node.disabled, "report_sequence": node.report_sequence,
        "num_instances": node.num_instances, "num_io_ops": node.num_io_ops,
        # NUMA cells and PCI pools travel as object primitives: a worker
        # that starts rebuilds them exactly as the agent sent them
        "details": json.dumps({
            "capabilities": node.capabilities, "stats": node.stats,
            "metrics": node.metrics,
            "numa_cells": [c.obj_to_primitive() for c in node.numa_cells],
            "pci_pools": [p.obj_to_primitive() for p in node.pci_pools]}),
        "agent_updated_at": (node.updated_at.replace(tzinfo=None)
                             if node.updated_at else None),
        "instance_uuids": (None if node.instance_uuids is None
                           else json.dumps(sorted(node.instance_uuids))),
        "received_at": received_at,
        "boot_id": node.boot_id,
        "location": node.location,
        # an agent's report: the row is the agent's from now on, were it
        # the REST API's (see gantt.db.api_hosts)
        "source": None,
    }


# -- validation (before any SQL) ----------------------------------------------


def _invalid(reason):
    return exception.InvalidRequest(reason=reason)


def _validate_provider(provider, what):
    """What the tables cannot store, or would store ambiguously."""
    name = getattr(provider, "name", None)
    if name is not None and not 0 < len(name) <= 200:
        raise _invalid("%s: name must be 1 to 200 characters" % what)
    seen = set()
    for inv in provider.inventories:
        rc = inv.resource_class
        if not 0 < len(rc) <= 255:
            raise _invalid("%s: bad resource class %r" % (what, rc))
        if rc in seen:
            raise _invalid("%s: resource class %s reported twice"
                           % (what, rc))
        seen.add(rc)
    for trait in provider.traits:
        if not 0 < len(trait) <= 255:
            raise _invalid("%s: bad trait %r" % (what, trait))
    for agg in provider.aggregates:
        if not uuidutils.is_uuid_like(agg):
            raise _invalid("%s: aggregate %r is not a uuid" % (what, agg))


def tree_order(root_uuid, children):
    """``children`` ordered parents first; InvalidRequest for a bad tree.

    Each child's ``parent_provider_uuid`` must be ``root_uuid`` or the uuid
    of another child of the same report; uuids must be unique and the
    parent links must not form a cycle.
    """
    by_uuid = {}
    for child in children:
        if child.uuid == root_uuid or child.uuid in by_uuid:
            raise _invalid("resource provider %s appears twice in the tree "
                           "of %s" % (child.uuid, root_uuid))
        by_uuid[child.uuid] = child
    kids = collections.defaultdict(list)
    for child in children:
        parent = child.parent_provider_uuid
        if parent != root_uuid and parent not in by_uuid:
            raise _invalid("resource provider %s: parent %s is not in the "
                           "tree of %s" % (child.uuid, parent, root_uuid))
        kids[parent].append(child)
    ordered = []
    queue = collections.deque([root_uuid])
    while queue:
        for child in kids.pop(queue.popleft(), ()):
            ordered.append(child)
            queue.append(child.uuid)
    if len(ordered) != len(children):
        loop = sorted(set(by_uuid) - {c.uuid for c in ordered})
        raise _invalid("resource providers %s of the tree of %s form a "
                       "cycle" % (", ".join(loop), root_uuid))
    for child in ordered:
        _validate_provider(child, "resource provider %s" % child.uuid)
    return ordered


# -- compute node reports -----------------------------------------------------


def save_report(db, node, received_at=None, force=False):
    """Persist ``node`` and its provider tree unless an equal or newer
    report is already stored.

    Every worker receives every report (fanout), so several workers race
    to store the same one: the conditional UPDATE on ``report_sequence``
    lets exactly one of them write, and the others return ``applied=False``.

    :param force: take inventory cuts below what is allocated (otherwise
        such a class keeps its stored inventory and is listed as refused)
    :returns: :class:`~.tree_writer.SaveResult`
    :raises: InvalidRequest (nothing stored) for a malformed tree, or a
        provider uuid that already belongs elsewhere
    """
    received_at = received_at or timeutils.utcnow()
    children = tree_order(node.uuid, node.child_providers)
    try:
        return _save_tree(db, node, children, received_at, force)
    except db_exc.DBDuplicateEntry:
        # another worker inserted this new host (or one of its providers)
        # at the same moment: once more, now that its rows are committed
        return _save_tree(db, node, children, received_at, force)


def _save_tree(db, node, children, received_at, force):
    with db.begin() as conn:
        _check_host_name(conn, node)
        row = _lookup(conn, node.uuid)
        if row is None:
            return _insert_tree(conn, node, children, received_at)
    if row.host_report is None:
        raise _invalid("resource provider %s is not a compute node but %s"
                       % (node.uuid, tree_writer.role(row)))
    with db.begin() as conn:
        # writes and locks first: see the module's docstring
        won = conn.execute(
            REPORTS.update()
            .where(REPORTS.c.resource_provider_id == row.id)
            .where(_supersedes_stored(node))
            .values(**_report_row(node, received_at))).rowcount
        writer = tree_writer.TreeWriter(conn, row.id, node.uuid,
                                        received_at, force)
        if not won:
            return writer.lost()
        writer.lock()
        writer.check_owners(children)
        writer.upsert(node, None, node.nodename)
        for child in children:
            writer.upsert(child, child.parent_provider_uuid, child.name)
        writer.remove_others()
        return writer.apply()


def _supersedes_stored(node, reports=REPORTS):
    """``report_rules.supersedes`` of ``node`` (a ComputeNode or a
    ProviderReport) over the report stored in ``reports``, as the
    sequence guard's condition."""
    newer = reports.c.report_sequence < node.report_sequence
    if node.boot_id is None:
        return newer
    return sa.or_(newer, reports.c.boot_id.is_(None),
                  reports.c.boot_id != node.boot_id)


def _check_host_name(conn, node):
    """One host name, one compute node: HostNameTaken when another
    provider reports as ``node.host`` (the unique key on the host name
    stops a concurrent insert; save_report then comes here again)."""
    holder = conn.execute(
        sa.select(RP.c.uuid)
        .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        .where(REPORTS.c.host == node.host)).scalar()
    if holder is not None and holder != node.uuid:
        raise exception.HostNameTaken(host=node.host, holder=holder,
                                      uuid=node.uuid)


def _lookup(conn, uuid):
    """The provider ``uuid`` and what kind of provider it is, or None."""
    return conn.execute(
        sa.select(RP.c.id, RP.c.root_provider_id,
                  REPORTS.c.resource_provider_id.label("host_report"),
                  PROVIDER_REPORTS.c.resource_provider_id.label("report"))
        .outerjoin(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        .outerjoin(PROVIDER_REPORTS,
                   PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
        .where(RP.c.uuid == uuid)).first()


def _insert_tree(conn, node, children, received_at):
    # the root first: if another worker stored this host meanwhile, its
    # unique key stops this insert (and save_report tries again) before
    # its children could look like another tree's
    root_id = tree_writer.insert_provider(conn, node.uuid, node.nodename, None,
                               received_at)
    known = conn.execute(sa.select(RP.c.uuid).where(
        RP.c.uuid.in_([c.uuid for c in children]))).scalars().all()
    if known:
        raise _invalid("resource provider %s already belongs to another "
                       "provider tree" % sorted(known)[0])
    conn.execute(REPORTS.insert().values(
        resource_provider_id=root_id, **_report_row(node, received_at)))
    ids = {node.uuid: root_id}
    entries = [(root_id, node)]
    for child in children:
        ids[child.uuid] = tree_writer.insert_provider(
            conn, child.uuid, child.name, (root_id,
                                           ids[child.parent_provider_uuid]),
            received_at)
        entries.append((ids[child.uuid], child))
    tree_writer.insert_contents(conn, entries)
    return tree_writer.SaveResult(
        applied=True, generations=dict.fromkeys(ids, 0), root_uuid=node.uuid)


# -- standalone providers -----------------------------------------------------


def save_provider(db, report, received_at=None):
    """Persist a standalone provider's report (``ProviderReport``) unless
    an equal or newer one is already stored.

    The provider is its own tree root. The same rules as for a compute
    node's report apply: the sequence guard, and inventory cuts below what
    is allocated refused unless ``report.force``.

    :returns: :class:`~.tree_writer.SaveResult`
    :raises: InvalidRequest when the uuid is a compute node or a child of
        one, or the provider names a parent
    """
    provider = report.provider
    if provider.parent_provider_uuid is not None:
        raise _invalid("standalone resource provider %s cannot have a "
                       "parent (%s)" % (provider.uuid,
                                        provider.parent_provider_uuid))
    _validate_provider(provider, "resource provider %s" % provider.uuid)
    received_at = received_at or timeutils.utcnow()
    _standalone_row(report, received_at)        # refused before any SQL
    try:
        return _save_standalone(db, report, received_at)
    except db_exc.DBDuplicateEntry:
        # another worker inserted it at the same moment
        return _save_standalone(db, report, received_at)


def _standalone_row(report, received_at):
    """The provider_reports row of a standalone provider's report.

    :raises: InvalidRequest for capabilities longer than a TEXT column
        holds as JSON (as for a compute node's details)
    """
    capabilities = json.dumps(report.capabilities, sort_keys=True)
    if len(capabilities) > TEXT_MAX:
        raise _invalid("report of %s: capabilities take %d bytes as JSON, "
                       "more than the %d the database stores" % (
                           report.provider.uuid, len(capabilities),
                           TEXT_MAX))
    return {"report_sequence": report.report_sequence,
            "received_at": received_at, "boot_id": report.boot_id,
            "kind": report.kind, "service": report.service,
            "availability_zone": report.availability_zone,
            "capabilities": capabilities,
            "instance_uuid": report.instance_uuid,
            "location": report.location}


def _save_standalone(db, report, received_at):
    provider = report.provider
    with db.begin() as conn:
        row = _lookup(conn, provider.uuid)
        if row is None:
            rp_id = tree_writer.insert_provider(
                conn, provider.uuid, provider.name, None, received_at)
            conn.execute(PROVIDER_REPORTS.insert().values(
                resource_provider_id=rp_id,
                **_standalone_row(report, received_at)))
            tree_writer.insert_contents(conn, [(rp_id, provider)])
            return tree_writer.SaveResult(
                applied=True, generations={provider.uuid: 0},
                root_uuid=provider.uuid)
    if row.report is None:
        raise _invalid("resource provider %s is %s, not a standalone "
                       "provider" % (provider.uuid, tree_writer.role(row)))
    with db.begin() as conn:
        # writes and locks first: see the module's docstring
        won = conn.execute(
            PROVIDER_REPORTS.update()
            .where(PROVIDER_REPORTS.c.resource_provider_id == row.id)
            .where(_supersedes_stored(report, PROVIDER_REPORTS))
            .values(**_standalone_row(report, received_at))).rowcount
        writer = tree_writer.TreeWriter(conn, row.id, provider.uuid,
                                        received_at, report.force)
        if not won:
            return writer.lost()
        writer.lock()
        writer.upsert(provider, None, provider.name)
        return writer.apply()


def delete_provider(db, uuid):
    """Delete a standalone provider; a no-op when it does not exist.

    :returns: True if it was deleted, False if there was none
    :raises: ProviderInUse when consumers hold allocations on it;
        InvalidRequest when ``uuid`` is a compute node or a child of one
    """
    with db.begin() as conn:
        row = conn.execute(
            sa.select(RP.c.id, RP.c.root_provider_id).where(
                RP.c.uuid == uuid).with_for_update()).first()
        if row is None:
            return False
        standalone = conn.execute(
            sa.select(PROVIDER_REPORTS.c.resource_provider_id).where(
                PROVIDER_REPORTS.c.resource_provider_id == row.id)).first()
        if standalone is None:
            raise _invalid("resource provider %s is not a standalone "
                           "provider" % uuid)
        consumers = consumers_on(conn, row.id)
        if consumers:
            raise exception.ProviderInUse(uuid=uuid,
                                          consumers=int(consumers))
        conn.execute(RP.delete().where(RP.c.id == row.id))
    return True


def consumers_on(conn, rp_id):
    """How many consumers hold allocations on provider row ``rp_id``."""
    return int(conn.execute(
        sa.select(sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
        .where(ALLOC.c.resource_provider_id == rp_id)).scalar_one())
