"""A repeated ``select_destinations``: the answer is the claim already held.

A caller whose reply was lost asks again with the same instance uuids, and
a duplicate of a call (a redelivery, a second conductor) may run at the
same moment as the call itself. Either way the instances may hold a claim
already, and the only answer that matches the database is that claim,
unchanged. This module checks that the held claims satisfy the request
and finds the rows of their hosts; it raises ``ConsumerConflict`` when
they do not (the caller must then ask for a replacement explicitly, or
release first), so that an existing claim is never moved silently.
"""

import collections
import dataclasses

from gantt import exception


@dataclasses.dataclass(frozen=True)
class HeldClaim:
    """An instance's claim as the database holds it."""

    consumer_uuid: str
    row: int                  # its host's row in the view
    allocations: dict         # {provider uuid: {class: amount}}


def held_claims(view, request, held, instance_uuids):
    """The claims ``instance_uuids`` hold, if each satisfies ``request``.

    :param held: ``{consumer: {provider uuid: {class: amount}}}`` as the
        database holds it now
    :returns: list of :class:`HeldClaim`, in ``instance_uuids``' order
    :raises: ConsumerConflict if one holds nothing (another call is still
        placing them, or released some), holds other resources than the
        request asks for, or sits where the request may not go
    """
    missing = [u for u in instance_uuids if u not in held]
    if missing:
        raise exception.ConsumerConflict(
            consumer=",".join(missing),
            reason="other instances of this request hold claims but this "
                   "one does not: another call for them is under way, or "
                   "some were released; retry, or release them all first")
    return [_one(view, request, uuid, held[uuid]) for uuid in instance_uuids]


def _one(view, request, uuid, allocations):
    totals = _summed(allocations)
    wanted = {rc: a for rc, a in request.resources.items() if a}
    if totals != wanted:
        raise exception.ConsumerConflict(
            consumer=uuid,
            reason="it holds %s but this request asks for %s; release it "
                   "first, or pass replace=True to move it" % (
                       _format(totals), _format(wanted)))
    row = _host_row(view, allocations)
    if row is None:
        raise exception.ConsumerConflict(
            consumer=uuid, reason="it holds a claim on providers this "
                                  "worker does not know as a host")
    if not _allowed_host(view, request, row):
        raise exception.ConsumerConflict(
            consumer=uuid,
            reason="it holds a claim on %s, which this request does not "
                   "allow; release it first, or pass replace=True"
                   % view.hosts[row])
    return HeldClaim(uuid, row, allocations)


def _summed(allocations):
    totals = collections.Counter()
    for amounts in allocations.values():
        totals.update(amounts)
    return {rc: a for rc, a in totals.items() if a}


def _host_row(view, allocations):
    """The row of the host the allocations are on: a provider that is a
    row, or the root of one in a known tree (sharing pools are no host)."""
    index = view.table.providers
    for uuid in sorted(allocations):
        row = view.row_of(uuid)
        if row is None:
            provider = index.get(uuid)
            if provider is not None and not provider.sharing:
                row = view.row_of(provider.root_uuid)
        if row is not None:
            return row
    return None


def _allowed_host(view, request, row):
    """Whether a request that names hosts or nodes names this one, and
    does not ignore it (Nova's evacuation ignores the instance's host)."""
    host, node = str(view.hosts[row]), str(view.nodenames[row])
    if request.ignore_hosts and host.lower() in {
            name.lower() for name in request.ignore_hosts}:
        return False
    if request.force_hosts and host.lower() not in {
            name.lower() for name in request.force_hosts}:
        return False
    if request.force_nodes and node not in request.force_nodes:
        return False
    destination = request.destination
    wanted = getattr(destination, "host", None) if destination else None
    return not wanted or wanted == host


def _format(resources):
    return ", ".join("%s=%d" % kv for kv in sorted(resources.items())) or (
        "nothing")
