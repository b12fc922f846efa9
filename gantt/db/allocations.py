"""Allocations in SQL: the claim transaction and its idempotent release.

A claim is one transaction (DESIGN.md section 3):

1. read the generations of the consumer, of every provider involved (new
   and replaced) and of the server group;
2. read the providers' inventories, usage and the group's members (after
   the generations: a read before a generation read could miss a commit
   that the compare-and-swap would then not catch);
3. check Placement's capacity rule and the server-group policy;
4. ``UPDATE … SET generation = generation + 1 WHERE id = :id AND
   generation = :seen`` for every provider (in id order), the group and the
   consumer: a row count of 0 means another transaction changed it since
   step 1, and the whole transaction rolls back with ClaimConflict;
5. replace the consumer's allocations.

The compare-and-swap comes before any write so that two claims racing for
one provider meet on that provider's row and nowhere else: the loser waits
on the row lock, finds the generation moved and gives up before it has
locked anything in the allocations table, which keeps deadlocks rare.
"""

import collections
import dataclasses

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt import exception
from gantt.db import models

RP = models.ResourceProvider.__table__
INV = models.Inventory.__table__
ALLOC = models.Allocation.__table__
CONSUMERS = models.Consumer.__table__
GROUPS = models.InstanceGroup.__table__
REPORTS = models.HostReport.__table__


@dataclasses.dataclass(frozen=True)
class GroupClaim:
    """The server-group rule a claim must keep."""

    uuid: str
    policy: str               # affinity | anti-affinity (hard policies only)
    max_per_host: int = 1


@dataclasses.dataclass(frozen=True)
class ProviderState:
    """A provider's usage and generation right after a committed change."""

    uuid: str
    generation: int
    usages: dict


def claim(conn, consumer_uuid, allocations, *, project_id=None,
          user_id=None, group=None):
    """Replace ``consumer_uuid``'s allocations with ``allocations``.

    Must run inside one transaction (``conn`` from ``Database.begin()``).

    :param allocations: ``{provider uuid: {resource class: amount}}``
    :param group: a :class:`GroupClaim` to enforce, or None
    :returns: list of :class:`ProviderState` for every provider touched
    :raises: ProviderNotFound, CapacityExceeded, GroupPolicyViolation,
        ClaimConflict
    """
    return _claim(conn, consumer_uuid, allocations, project_id=project_id,
                  user_id=user_id, group=group)


def _claim(conn, consumer_uuid, allocations, *, project_id=None,
           user_id=None, group=None, migration_uuid=None):
    """The claim; with ``migration_uuid`` (a move, see gantt.db.moves),
    what the consumer holds passes to the migration consumer instead of
    being freed, unless the migration holds something already."""
    # generations first: on PostgreSQL (read committed) every statement
    # sees a newer state, and the final compare-and-swap only catches
    # changes made after the generation it compares with was read
    consumer_seen = _consumer_generation(conn, consumer_uuid)
    heir = None
    if migration_uuid is not None:
        heir = (migration_uuid, _consumer_generation(conn, migration_uuid))
    providers = _providers_by_uuid(conn, allocations)
    previous = _consumer_allocations(conn, consumer_uuid)
    if heir is not None and (not previous or _consumer_allocations(
            conn, migration_uuid)):
        heir = None    # nothing to hand over, or handed over already
    seen = dict(providers)  # uuid -> (id, generation)
    if heir is None:
        seen.update(_providers_by_id(conn, set(previous) - {
            rp_id for rp_id, _ in providers.values()}))
    group_generation = None
    if group is not None:
        group_generation = _check_group(conn, consumer_uuid, providers,
                                        group)
    ids = {rp_id for rp_id, _ in seen.values()}
    inventory = _inventories(conn, ids)
    # a hand-over keeps what the consumer held counted (as the migration's)
    usage = _usage_without(conn, ids, consumer_uuid if heir is None else None)
    for uuid, resources in allocations.items():
        rp_id = providers[uuid][0]
        for rc, amount in resources.items():
            _check_capacity(uuid, consumer_uuid, rc, amount,
                            inventory.get((rp_id, rc)),
                            usage[rp_id].get(rc, 0))
    states = []
    for uuid, (rp_id, generation) in sorted(seen.items(),
                                            key=lambda kv: kv[1][0]):
        _bump_generation(conn, uuid, rp_id, generation, consumer_uuid)
        used = collections.Counter(usage[rp_id])
        used.update(allocations.get(uuid, {}))
        states.append(ProviderState(uuid, generation + 1, dict(used)))
    if group is not None:
        _bump_group(conn, group.uuid, group_generation, consumer_uuid)
    now = timeutils.utcnow()
    # consumers in uuid order, so that two moves lock them alike
    writes = [(consumer_uuid, consumer_seen, group.uuid if group else None)]
    if heir is not None:
        writes.append(heir + (None,))
    for uuid, generation, group_uuid in sorted(writes):
        _write_consumer(conn, uuid, generation, project_id, user_id,
                        group_uuid, now)
    if heir is None:
        conn.execute(ALLOC.delete().where(
            ALLOC.c.consumer_uuid == consumer_uuid))
    else:
        conn.execute(ALLOC.update().where(
            ALLOC.c.consumer_uuid == consumer_uuid).values(
            consumer_uuid=migration_uuid))
    _insert_allocations(conn, consumer_uuid, providers, allocations, now)
    return states


def _insert_allocations(conn, consumer_uuid, providers, allocations, now):
    rows = [{"resource_provider_id": providers[uuid][0],
             "consumer_uuid": consumer_uuid, "resource_class": rc,
             "used": amount, "created_at": now}
            for uuid, resources in allocations.items()
            for rc, amount in resources.items()]
    if rows:
        conn.execute(ALLOC.insert(), rows)


def release(conn, consumer_uuid):
    """Delete every allocation of ``consumer_uuid``; a no-op if none.

    :returns: list of :class:`ProviderState` for the providers freed
    """
    previous = _consumer_allocations(conn, consumer_uuid)
    if previous:
        # a release only frees room, so no compare-and-swap is needed; the
        # bump still tells concurrent claims that they read an older usage.
        # Providers first, as in a claim, so both lock in the same order.
        conn.execute(RP.update().where(RP.c.id.in_(sorted(previous))).values(
            generation=RP.c.generation + 1))
    conn.execute(ALLOC.delete().where(ALLOC.c.consumer_uuid == consumer_uuid))
    conn.execute(CONSUMERS.delete().where(
        CONSUMERS.c.uuid == consumer_uuid))
    if not previous:
        return []
    rows = conn.execute(sa.select(RP.c.id, RP.c.uuid, RP.c.generation).where(
        RP.c.id.in_(list(previous)))).all()
    usage = _usage_without(conn, {r.id for r in rows}, None)
    return [ProviderState(r.uuid, r.generation, usage[r.id]) for r in rows]


@dataclasses.dataclass(frozen=True)
class ConsumerInfo:
    """Who owns a consumer, and the group rule it was claimed under."""

    project_id: str | None = None
    user_id: str | None = None
    group: GroupClaim | None = None


def consumer_info(conn, consumer_uuid):
    """The :class:`ConsumerInfo` of a consumer (empty if unknown)."""
    row = conn.execute(
        sa.select(CONSUMERS.c.project_id, CONSUMERS.c.user_id,
                  GROUPS.c.uuid, GROUPS.c.policy,
                  GROUPS.c.max_server_per_host)
        .select_from(CONSUMERS)
        .outerjoin(GROUPS, CONSUMERS.c.instance_group_uuid == GROUPS.c.uuid)
        .where(CONSUMERS.c.uuid == consumer_uuid)).first()
    if row is None:
        return ConsumerInfo()
    group = None
    if row.uuid is not None:
        group = GroupClaim(row.uuid, row.policy,
                           row.max_server_per_host or 1)
    return ConsumerInfo(row.project_id, row.user_id, group)


def consumer_allocations(conn, consumer_uuid):
    """``{provider uuid: {class: amount}}`` held by one consumer."""
    result = collections.defaultdict(dict)
    for uuid, rc, used in conn.execute(
            sa.select(RP.c.uuid, ALLOC.c.resource_class, ALLOC.c.used)
            .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
            .where(ALLOC.c.consumer_uuid == consumer_uuid)):
        result[uuid][rc] = int(used)
    return dict(result)


def allocations_of(conn, consumer_uuids):
    """``{consumer: {provider uuid: {class: amount}}}``, holders only."""
    result = collections.defaultdict(lambda: collections.defaultdict(dict))
    if consumer_uuids:
        for consumer, uuid, rc, used in conn.execute(
                sa.select(ALLOC.c.consumer_uuid, RP.c.uuid,
                          ALLOC.c.resource_class, ALLOC.c.used)
                .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
                .where(ALLOC.c.consumer_uuid.in_(list(consumer_uuids)))):
            result[consumer][uuid][rc] = int(used)
    return {c: dict(a) for c, a in result.items()}


def hosts_of_consumers(conn, consumer_uuids):
    """Host names on which any of ``consumer_uuids`` has allocations."""
    if not consumer_uuids:
        return set()
    rows = conn.execute(
        sa.select(REPORTS.c.host).distinct()
        .join(RP, RP.c.root_provider_id == REPORTS.c.resource_provider_id)
        .join(ALLOC, ALLOC.c.resource_provider_id == RP.c.id)
        .where(ALLOC.c.consumer_uuid.in_(list(consumer_uuids))))
    return {r.host for r in rows}


def group_hosts(conn, group_uuid):
    """``{host: number of members}`` of a server group's placed members."""
    rows = conn.execute(
        sa.select(REPORTS.c.host,
                  sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
        .join(RP, RP.c.root_provider_id == REPORTS.c.resource_provider_id)
        .join(ALLOC, ALLOC.c.resource_provider_id == RP.c.id)
        .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
        .where(CONSUMERS.c.instance_group_uuid == group_uuid)
        .group_by(REPORTS.c.host))
    return {host: int(count) for host, count in rows}


# -- the steps of a claim ---------------------------------------------------


def _providers_by_uuid(conn, allocations):
    rows = conn.execute(
        sa.select(RP.c.uuid, RP.c.id, RP.c.generation).where(
            RP.c.uuid.in_(list(allocations)))).all()
    found = {r.uuid: (r.id, r.generation) for r in rows}
    for uuid in allocations:
        if uuid not in found:
            raise exception.ProviderNotFound(uuid=uuid)
    return found


def _providers_by_id(conn, ids):
    if not ids:
        return {}
    rows = conn.execute(sa.select(RP.c.uuid, RP.c.id, RP.c.generation).where(
        RP.c.id.in_(list(ids))))
    return {r.uuid: (r.id, r.generation) for r in rows}


def _consumer_allocations(conn, consumer_uuid):
    """``{rp_id: {class: amount}}`` currently held by the consumer."""
    result = collections.defaultdict(dict)
    for rp_id, rc, used in conn.execute(
            sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                      ALLOC.c.used)
            .where(ALLOC.c.consumer_uuid == consumer_uuid)):
        result[rp_id][rc] = int(used)
    return result


def _inventories(conn, rp_ids):
    return {(r.resource_provider_id, r.resource_class): r
            for r in conn.execute(sa.select(INV).where(
                INV.c.resource_provider_id.in_(list(rp_ids))))}


def _usage_without(conn, rp_ids, consumer_uuid):
    """Usage per provider, leaving out the consumer being replaced."""
    query = (sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                       sa.func.sum(ALLOC.c.used))
             .where(ALLOC.c.resource_provider_id.in_(list(rp_ids)))
             .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class))
    if consumer_uuid is not None:
        query = query.where(ALLOC.c.consumer_uuid != consumer_uuid)
    usage = {rp_id: {} for rp_id in rp_ids}
    for rp_id, rc, used in conn.execute(query):
        usage[rp_id][rc] = int(used)
    return usage


def _check_capacity(provider, consumer, rc, amount, inv, used):
    def refuse(reason):
        raise exception.CapacityExceeded(
            provider=provider, consumer=consumer, resource_class=rc,
            amount=amount, reason=reason)

    if inv is None:
        refuse("no inventory of that class")
    if amount < inv.min_unit or amount > inv.max_unit:
        refuse("outside [%d, %d]" % (inv.min_unit, inv.max_unit))
    if amount % inv.step_size:
        refuse("not a multiple of step size %d" % inv.step_size)
    capacity = (inv.total - inv.reserved) * inv.allocation_ratio
    if used + amount > capacity:
        refuse("%d used of capacity %g" % (used, capacity))


def _check_group(conn, consumer_uuid, providers, group):
    """Enforce a hard group policy against the members placed so far.

    :returns: the group row's generation, for the final compare-and-swap
    """
    generation = _group_generation(conn, group)
    # hosts are the roots with a host report: a standalone provider (a
    # storage pool every member may share) is no host of the policy
    target_roots = {r.root_provider_id for r in conn.execute(
        sa.select(RP.c.root_provider_id)
        .join(REPORTS, REPORTS.c.resource_provider_id == RP.c.root_provider_id)
        .where(RP.c.id.in_([rp_id for rp_id, _ in providers.values()])))}
    members = collections.Counter()
    for root, count in conn.execute(
            sa.select(RP.c.root_provider_id,
                      sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
            .join(REPORTS,
                  REPORTS.c.resource_provider_id == RP.c.root_provider_id)
            .join(ALLOC, ALLOC.c.resource_provider_id == RP.c.id)
            .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
            .where(CONSUMERS.c.instance_group_uuid == group.uuid)
            .where(CONSUMERS.c.uuid != consumer_uuid)
            .group_by(RP.c.root_provider_id)):
        members[root] = int(count)
    if group.policy == "anti-affinity":
        broken = any(members[root] >= group.max_per_host
                     for root in target_roots)
    else:
        broken = bool(members) and not set(members) <= target_roots
    if broken:
        raise exception.GroupPolicyViolation(
            consumer=consumer_uuid, host=",".join(sorted(providers)),
            policy=group.policy, group=group.uuid)
    return generation


def ensure_group(db, group):
    """Create the group's row if missing (its own short transaction).

    The claim compares-and-swaps this row's generation, so it must exist
    before any claim of a member starts.
    """
    try:
        with db.begin() as conn:
            exists = conn.execute(sa.select(GROUPS.c.id).where(
                GROUPS.c.uuid == group.uuid)).first()
            if exists is None:
                conn.execute(GROUPS.insert().values(
                    uuid=group.uuid, policy=group.policy,
                    max_server_per_host=group.max_per_host, generation=0,
                    created_at=timeutils.utcnow()))
    except db_exc.DBDuplicateEntry:
        pass  # another worker created it at the same moment


def _group_generation(conn, group):
    row = conn.execute(sa.select(GROUPS.c.generation).where(
        GROUPS.c.uuid == group.uuid)).first()
    if row is None:
        raise exception.ClaimConflict(provider="group " + group.uuid,
                                      seen=None, consumer="-")
    return row.generation


def _consumer_generation(conn, consumer_uuid):
    row = conn.execute(sa.select(CONSUMERS.c.generation).where(
        CONSUMERS.c.uuid == consumer_uuid)).first()
    return None if row is None else row.generation


def _write_consumer(conn, consumer_uuid, seen, project_id, user_id,
                    group_uuid, now):
    """Create or update the consumer, compare-and-swap on its generation.

    Two claims for the same consumer at once (a retried call racing the
    original) must not both commit, or the consumer would hold two sets of
    allocations on different hosts.
    """
    values = {"project_id": project_id, "user_id": user_id,
              "instance_group_uuid": group_uuid}
    if seen is None:
        try:
            conn.execute(CONSUMERS.insert().values(
                uuid=consumer_uuid, generation=0, created_at=now, **values))
        except db_exc.DBDuplicateEntry:
            raise exception.ClaimConflict(
                provider="consumer", seen=None,
                consumer=consumer_uuid) from None
        return
    updated = conn.execute(
        CONSUMERS.update().where(CONSUMERS.c.uuid == consumer_uuid)
        .where(CONSUMERS.c.generation == seen)
        .values(updated_at=now, generation=seen + 1, **values)).rowcount
    if updated != 1:
        raise exception.ClaimConflict(provider="consumer", seen=seen,
                                      consumer=consumer_uuid)


def _bump_generation(conn, uuid, rp_id, seen, consumer_uuid):
    bumped = conn.execute(
        RP.update().where(RP.c.id == rp_id).where(RP.c.generation == seen)
        .values(generation=seen + 1)).rowcount
    if bumped != 1:
        raise exception.ClaimConflict(provider=uuid, seen=seen,
                                      consumer=consumer_uuid)


def _bump_group(conn, group_uuid, seen, consumer_uuid):
    bumped = conn.execute(
        GROUPS.update().where(GROUPS.c.uuid == group_uuid)
        .where(GROUPS.c.generation == seen)
        .values(generation=seen + 1)).rowcount
    if bumped != 1:
        raise exception.ClaimConflict(provider="group " + group_uuid,
                                      seen=seen, consumer=consumer_uuid)
