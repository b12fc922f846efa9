"""Retiring a vacant standalone provider: a compare-and-swap on its
generation, in one transaction.

The owner of a provider (a container service whose instance is empty,
told so by ``provider.vacant``) asks to retire it at the generation it
saw. The provider is deleted, with its inventories, traits, aggregates
and report, only if:

1. it is a standalone provider (a compute node leaves by
   ``gantt-manage host delete``, a child with its tree);
2. its generation is still the one given: the first statement is
   ``UPDATE resource_providers SET generation = generation + 1 WHERE
   uuid = :uuid AND generation = :given``. No row means it is unknown or
   at another generation; a read then says which, as ProviderNotFound or
   ProviderConflict (with the generation it has now). The swap names no
   other table, so it locks the provider's row and nothing else (a report
   being saved locks its ``provider_reports`` row first, then the
   provider's: a swap that read ``provider_reports`` could deadlock it);
3. nothing is allocated on it: counted after the swap, under its lock,
   else ProviderInUse (a generation given while something was allocated).

A claim compares-and-swaps the generations of the providers it allocates
on before it writes anything (see :mod:`gantt.db.allocations`). Racing a
retirement, the two meet on the provider's row, and exactly one wins:

* the claim swapped first: the retirement's swap waits on the row, then
  finds the generation moved (ProviderConflict), and the claim stands;
* the retirement swapped first: the claim's swap waits on the row, then
  finds it deleted (no row: ClaimConflict), rolls back, and the claim is
  tried again elsewhere; nothing was allocated on the retired provider.

On MariaDB the swap is the transaction's first statement, so the count
of (3) reads a snapshot taken after the row is locked: every claim
committed before is in it, and none can commit on the provider until
this transaction ends.

Retiring is deleting: a provider its service reports again afterwards is
a new provider (its owner stops reporting it first).
"""

import sqlalchemy as sa

from gantt import exception
from gantt.db import reports
from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import RP


def retire(db, uuid, generation):
    """Delete standalone provider ``uuid`` if it is at ``generation`` and
    nothing is allocated on it.

    :returns: the row's kind, as ``provider_reports`` held it
    :raises: ProviderNotFound, InvalidRequest (not standalone),
        ProviderConflict (another generation), ProviderInUse
    """
    with db.begin() as conn:
        if not _swap(conn, uuid, generation):
            raise _why_not(conn, uuid, generation)
        row = conn.execute(
            sa.select(RP.c.id, PROVIDER_REPORTS.c.kind)
            .outerjoin(PROVIDER_REPORTS,
                       PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
            .where(RP.c.uuid == uuid)).one()
        if row.kind is None:
            # raising rolls the swap back
            raise _not_standalone(uuid)
        consumers = reports.consumers_on(conn, row.id)
        if consumers:
            raise exception.ProviderInUse(uuid=uuid, consumers=consumers)
        conn.execute(RP.delete().where(RP.c.id == row.id))
        return row.kind


def _swap(conn, uuid, generation):
    """The compare-and-swap: whether the provider was at ``generation``
    (its row is then locked until the transaction ends)."""
    return conn.execute(
        RP.update()
        .where(RP.c.uuid == uuid)
        .where(RP.c.generation == generation)
        .values(generation=RP.c.generation + 1)).rowcount == 1


def _why_not(conn, uuid, generation):
    """The error of a swap that matched no row."""
    row = conn.execute(
        sa.select(RP.c.generation,
                  PROVIDER_REPORTS.c.resource_provider_id.label("report"))
        .outerjoin(PROVIDER_REPORTS,
                   PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
        .where(RP.c.uuid == uuid)).first()
    if row is None:
        return exception.ProviderNotFound(uuid=uuid)
    if row.report is None:
        return _not_standalone(uuid)
    return exception.ProviderConflict(uuid=uuid, actual=row.generation,
                                      expected=generation)


def _not_standalone(uuid):
    return exception.InvalidRequest(
        reason="resource provider %s is not a standalone provider: only "
               "those are retired" % uuid)
