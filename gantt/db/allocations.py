"""Allocations in SQL: the claim transaction and its idempotent release.

A claim is one transaction (DESIGN.md section 3), in as few round trips
as the checks allow, because on a loopback database the round trips, not
the commit, are what a claim costs:

1. unless the consumer is known to be new, read its generation together
   with what it holds (one statement);
2. read every provider involved (new and replaced) with its generation,
   inventories and usage in **one** statement, so that all of it comes
   from one snapshot: a generation read apart from the usage could be
   older than the usage, and the compare-and-swap would then miss a
   commit made between the two;
3. check Placement's capacity rule and the server-group policy;
4. one ``UPDATE … SET generation = generation + 1 WHERE (id = :a AND
   generation = :seen_a) OR …`` for all the providers: fewer rows than
   providers means another transaction changed one since step 2, and the
   whole transaction rolls back with ClaimConflict; then the group's and
   the consumer's compare-and-swap;
5. replace the consumer's allocations (one multi-row ``INSERT``; no
   ``DELETE`` for a new consumer).

A new consumer's claim is therefore four statements and a commit (two on
PostgreSQL, where steps 4 and 5 are one statement and both are prepared
once per connection, see :mod:`gantt.db.prepared`). Many new consumers
(the instances of one request) are claimed in one such transaction by
:func:`claim_new`.

A group's whole plan (:func:`claim_plan`) is one transaction of several
such claims of up to :data:`PLAN_CHUNK` members each; the group's
generation and members are read once, before the first (step 3's read),
and counted on as each chunk's members are checked. Only the first
chunk's write compares-and-swaps the group's generation: it locks the
group row until the transaction ends, so every other claim of the group
waits for it and then finds the generation moved. Each chunk still reads
and compares-and-swaps its own providers (steps 2 and 4), and sees the
chunks before it, being in the same transaction.

The compare-and-swap comes before any write so that two claims racing for
one provider meet on that provider's row and nowhere else: the loser waits
on the row lock, finds the generation moved and gives up before it has
locked anything in the allocations table, which keeps deadlocks rare.

Two claims for one *consumer* (a duplicate call, a retry racing the call
whose reply was lost) meet on the consumer's row: for a new consumer, the
second ``INSERT`` waits for the first transaction and then fails on the
unique key (:class:`ConsumerExists`); for a stored one, the consumer's
generation compare-and-swap fails (``ConsumerConflict``). Unlike a
provider race, neither is retried here or by the claimer: the winner's
caller has been (or will be) told where its instance went, and claiming
again would move the instance after that answer. A claim retried after a
lost *provider* race keeps comparing the consumer against the generation
its first attempt read (:class:`ConsumerPin`): on MariaDB the providers'
compare-and-swap fails first when the other call's claim of the consumer
is what moved them, and a fresh read would let the retry replace it.
The loser's caller gets the winner's claim as its answer (see
:mod:`gantt.scheduler.held`) or ``ConsumerConflict``.

A release answers who released: of two releases of one consumer at once,
both may read its allocations, but only the one whose ``DELETE`` removed
rows reports them freed (:func:`release`).

Over 400 lines: the claim, the group claim and the release share the
statements and the compare-and-swap above, and this docstring is their
one specification; splitting them would put the rules in one module and
the statements that keep them in another.
"""

import collections
import dataclasses
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from gantt import exception
from gantt.db import domains
from gantt.db import host_roots
from gantt.db import prepared
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import GROUPS
from gantt.db.models import INV
from gantt.db.models import RP


@dataclasses.dataclass(frozen=True)
class GroupClaim:
    """The server-group rules a claim must keep: the host-level policy
    (when hard) and the hard policies per level (``levels``: records with
    ``level``, ``rule`` and ``limit``, see :mod:`gantt.db.domains`)."""

    uuid: str
    policy: str               # affinity | anti-affinity are checked here
    max_per_host: int = 1
    levels: tuple = ()


@dataclasses.dataclass(frozen=True)
class ProviderState:
    """A provider's usage and generation right after a committed change."""

    uuid: str
    generation: int
    usages: dict


@dataclasses.dataclass(frozen=True)
class NewClaim:
    """One new consumer's allocations, for :func:`claim_new`."""

    consumer_uuid: str
    allocations: dict        # {provider uuid: {resource class: amount}}


class ConsumerExists(exception.ClaimConflict):
    """A claim made for a new consumer found the consumer stored already;
    it must be made again as a replacement (``new=False``)."""


class ConsumerPin:
    """The consumer generation the first attempt of a claim read.

    A claim that lost a provider race is attempted again; with a pin, each
    attempt compares-and-swaps the consumer against the generation the
    *first* attempt read, never a newer one. Otherwise an attempt after
    another call's claim of the same consumer committed (which may be what
    moved the provider's generation: on MariaDB the provider check comes
    first and fails first) would read that claim and replace it.
    """

    _UNREAD = object()

    def __init__(self):
        self._seen = self._UNREAD

    @classmethod
    def at(cls, generation):
        """A pin on a generation the caller read itself (None: the
        consumer must not be stored): Placement's REST API, whose callers
        name the consumer generation they saw."""
        pin = cls()
        pin._seen = generation
        return pin

    def read(self, conn, consumer_uuid):
        if self._seen is self._UNREAD:
            self._seen = _consumer_generation(conn, consumer_uuid)
        return self._seen


def claim(conn, consumer_uuid, allocations, *, project_id=None,
          user_id=None, group=None, new=False, pin=None):
    """Replace ``consumer_uuid``'s allocations with ``allocations``.

    Must run inside one transaction (``conn`` from ``Database.begin()``).

    :param allocations: ``{provider uuid: {resource class: amount}}``
    :param group: a :class:`GroupClaim` to enforce, or None
    :param new: the caller believes the consumer holds nothing and is not
        stored: skip reading it (:class:`ConsumerExists` if it was wrong)
    :param pin: a :class:`ConsumerPin` shared by the attempts of one claim
    :returns: list of :class:`ProviderState` for every provider touched
    :raises: ProviderNotFound, CapacityExceeded, GroupPolicyViolation,
        ConsumerConflict, ClaimConflict
    """
    if new:
        return claim_new(conn, [NewClaim(consumer_uuid, allocations)],
                         project_id=project_id, user_id=user_id,
                         group=group)
    return _claim(conn, consumer_uuid, allocations, project_id=project_id,
                  user_id=user_id, group=group, pin=pin)


def claim_new(conn, claims, *, project_id=None, user_id=None, group=None):
    """Claim for several new consumers at once, all or nothing.

    The instances of one request: one snapshot of every provider they
    use, capacity and group policy checked with all of them counted, one
    compare-and-swap, one ``INSERT`` of consumers and one of allocations.

    :param claims: list of :class:`NewClaim`, consumers not yet stored
    :returns: list of :class:`ProviderState` for every provider touched
    :raises: ProviderNotFound, CapacityExceeded, GroupPolicyViolation,
        ClaimConflict (:class:`ConsumerExists` when one was stored)
    """
    tally = None if group is None else _read_tally(
        conn, group, [c.consumer_uuid for c in claims])
    return _claim_new(conn, claims, project_id, user_id, group, tally)


#: members claimed per statement by :func:`claim_plan`: PostgreSQL's
#: one-statement claim is compiled once per size, and compiling one of a
#: thousand consumers costs more than the round trips it saves
PLAN_CHUNK = 50


def claim_plan(conn, claims, *, project_id=None, user_id=None, group,
               chunk=PLAN_CHUNK):
    """:func:`claim_new` for a whole group plan, in ``chunk``-member
    statements of the caller's transaction, all or nothing.

    The group's generation and members are read **once**, before the
    first chunk; each chunk then reads its own providers' snapshot
    (which sees the chunks before it: same transaction) and is checked
    against the members read plus the plan's members counted so far.
    The group's compare-and-swap is made by the first chunk's write, on
    the generation that one read saw: from then on this transaction
    holds the group row's lock until it ends, so no other claim of the
    group can commit a member before the plan does (each must
    compare-and-swap that row, and finds it moved).

    :param group: the :class:`GroupClaim` every member keeps
    :returns: list of :class:`ProviderState` for every provider touched
    :raises: as :func:`claim_new`
    """
    tally = _read_tally(conn, group, [c.consumer_uuid for c in claims])
    states = {}
    for start in range(0, len(claims), chunk):
        for state in _claim_new(conn, claims[start:start + chunk],
                                project_id, user_id, group, tally):
            states[state.uuid] = state
    return list(states.values())


def _claim_new(conn, claims, project_id, user_id, group, tally):
    """:func:`claim_new` with the group's members read already
    (``tally``, None without a group)."""
    wanted = {uuid for c in claims for uuid in c.allocations}
    providers = _snapshot(conn, uuids=wanted, hosts=group is not None)
    by_uuid = _by_uuid(providers, wanted)
    cas = None
    if group is not None:
        _check_group(conn, [
            (c.consumer_uuid, [by_uuid[u] for u in c.allocations])
            for c in claims], group, tally)
        cas = None if tally.bumped else tally.generation
    for c in claims:
        _take(by_uuid, c.consumer_uuid, c.allocations)
    now = timeutils.utcnow()
    consumers = [
        {"uuid": c.consumer_uuid, "generation": 0, "created_at": now,
         "project_id": project_id, "user_id": user_id,
         "instance_group_uuid": group.uuid if group else None}
        for c in claims]
    rows = [(by_uuid[uuid].id, c.consumer_uuid, rc, amount)
            for c in claims for uuid, resources in c.allocations.items()
            for rc, amount in resources.items()]
    if conn.dialect.name == "postgresql" and providers and rows:
        _write_new_at_once(conn, providers, consumers, rows, now,
                           None if cas is None else (group.uuid, cas))
        _bumped(tally)
        return _states(providers)
    _bump_generations(conn, providers, claims[0].consumer_uuid)
    if cas is not None:
        _bump_group(conn, group.uuid, cas, claims[0].consumer_uuid)
        _bumped(tally)
    try:
        conn.execute(CONSUMERS.insert(), consumers)
    except db_exc.DBDuplicateEntry:
        raise _consumer_exists(consumers) from None
    _insert_allocations(conn, rows, now)
    return _states(providers)


def _consumer_exists(consumers):
    return ConsumerExists(provider="consumer", seen=None,
                          consumer=",".join(c["uuid"] for c in consumers))


def _write_new_at_once(conn, providers, consumers, rows, now, group):
    """:func:`claim_new`'s writes on PostgreSQL: the compare-and-swap (of
    the group's generation too, ``group`` = (uuid, generation seen)) and
    both inserts in one statement (data-modifying CTEs), one round trip
    instead of three or four. The statement always runs whole; if a
    generation moved, fewer rows were bumped and the caller's transaction
    is rolled back by the ClaimConflict raised here, inserts included."""
    ordered = sorted(providers.values(), key=lambda p: p.id)
    params = _cas_params(ordered)
    for i, c in enumerate(consumers):
        for key in _CONSUMER_COLUMNS:
            params["c_%s_%d" % (key, i)] = c[key]
    for i, (rp_id, consumer, rc, amount) in enumerate(rows):
        params["a_rp_%d" % i] = rp_id
        params["a_consumer_%d" % i] = consumer
        params["a_rc_%d" % i] = rc
        params["a_used_%d" % i] = amount
    params["now"] = now
    if group is not None:
        params["g_uuid"], params["g_seen"] = group
        params["g_next"] = group[1] + 1
    sql, defaults = _at_once_statement(conn.dialect, len(ordered),
                                       len(consumers), len(rows),
                                       group is not None)
    try:
        (counts,) = prepared.execute(conn, sql, {**defaults, **params})
    except db_exc.DBDuplicateEntry:
        raise _consumer_exists(consumers) from None
    if counts[0] != len(ordered):
        raise _providers_conflict(ordered, consumers[0]["uuid"])
    if group is not None and counts[3] != 1:
        raise _group_conflict(group[0], group[1], consumers[0]["uuid"])


_CONSUMER_COLUMNS = ("uuid", "generation", "project_id", "user_id",
                     "instance_group_uuid")


@functools.lru_cache(maxsize=128)
def _at_once_statement(dialect, providers, consumers, rows, group):
    """:func:`_write_new_at_once`'s SQL for that many providers, consumers
    and allocation rows (and a group or not), and its bound defaults;
    compiled once here, as SQLAlchemy does not cache statements holding
    multi-row inserts (it would compile this one for every claim, which
    costs more than the round trips saved)."""
    bumped = (_cas_statement(providers).returning(RP.c.id)
              .cte("bumped"))
    new_consumers = (CONSUMERS.insert().values([
        dict({key: sa.bindparam("c_%s_%d" % (key, i))
              for key in _CONSUMER_COLUMNS},
             created_at=sa.bindparam("now"))
        for i in range(consumers)])
        .returning(CONSUMERS.c.uuid).cte("new_consumers"))
    new_allocations = (ALLOC.insert().values([
        {"resource_provider_id": sa.bindparam("a_rp_%d" % i),
         "consumer_uuid": sa.bindparam("a_consumer_%d" % i),
         "resource_class": sa.bindparam("a_rc_%d" % i),
         "used": sa.bindparam("a_used_%d" % i),
         "created_at": sa.bindparam("now")}
        for i in range(rows)])
        .returning(ALLOC.c.id).cte("new_allocations"))
    ctes = [bumped, new_consumers, new_allocations]
    if group:
        ctes.append(GROUPS.update()
                    .where(GROUPS.c.uuid == sa.bindparam("g_uuid"))
                    .where(GROUPS.c.generation == sa.bindparam("g_seen"))
                    .values(generation=sa.bindparam("g_next"))
                    .returning(GROUPS.c.id).cte("group_bumped"))
    # every CTE must be named in the query for SQLAlchemy to render it
    compiled = sa.select(*[
        sa.select(sa.func.count()).select_from(cte).scalar_subquery()
        for cte in ctes]).compile(dialect=dialect)
    return str(compiled), dict(compiled.params)


def _claim(conn, consumer_uuid, allocations, *, project_id=None,
           user_id=None, group=None, migration_uuid=None, handed_over=None,
           pin=None):
    """The claim of a consumer that may be stored and hold allocations;
    with ``migration_uuid`` (a move, see gantt.db.moves), what the consumer
    holds passes to the migration consumer instead of being freed, unless
    the migration holds something already; ``handed_over(conn, now)`` is
    then called in the transaction."""
    consumer_seen = (pin or ConsumerPin()).read(conn, consumer_uuid)
    previous = _consumer_allocations(conn, consumer_uuid)
    heir = guard = None
    if migration_uuid is not None and previous:
        if not _consumer_allocations(conn, migration_uuid):
            # the source passes to the migration (not already handed over)
            heir = (migration_uuid,
                    _consumer_generation(conn, migration_uuid))
        else:
            # a retry that replaces only the destination: the move must
            # still be going on when this commits. Confirm and revert
            # delete the migration consumer, so its generation is
            # compared-and-swapped as well.
            guard = (migration_uuid,
                     _consumer_generation(conn, migration_uuid))
    # the snapshot comes after the consumers' generations (see the module
    # docstring); a hand-over keeps what the consumer held counted, as the
    # migration's, and its providers are not touched
    providers = _snapshot(
        conn, uuids=set(allocations),
        ids=set(previous) if heir is None else (),
        without=consumer_uuid if heir is None else None,
        hosts=group is not None)
    by_uuid = _by_uuid(providers, allocations)
    tally = None
    if group is not None:
        tally = _read_tally(conn, group, [consumer_uuid])
        _check_group(conn, [
            (consumer_uuid, [by_uuid[u] for u in allocations])], group,
            tally)
    _take(by_uuid, consumer_uuid, allocations)
    _bump_generations(conn, providers, consumer_uuid)
    if group is not None:
        _bump_group(conn, group.uuid, tally.generation, consumer_uuid)
    now = timeutils.utcnow()
    # consumers in uuid order, so that two moves lock them alike
    writes = [(consumer_uuid, consumer_seen, group.uuid if group else None)]
    for migration in (heir, guard):
        if migration is not None:
            writes.append(migration + (None,))
    for uuid, generation, group_uuid in sorted(writes):
        _write_consumer(conn, uuid, generation, project_id, user_id,
                        group_uuid, now)
    if heir is not None:
        conn.execute(ALLOC.update().where(
            ALLOC.c.consumer_uuid == consumer_uuid).values(
            consumer_uuid=migration_uuid))
        if handed_over is not None:
            handed_over(conn, now)
    elif previous:
        conn.execute(ALLOC.delete().where(
            ALLOC.c.consumer_uuid == consumer_uuid))
    _insert_allocations(conn, [
        (by_uuid[uuid].id, consumer_uuid, rc, amount)
        for uuid, resources in allocations.items()
        for rc, amount in resources.items()], now)
    return _states(providers)


def _insert_allocations(conn, rows, now):
    """``rows``: (provider id, consumer, class, amount); one statement."""
    if rows:
        conn.execute(ALLOC.insert(), [
            {"resource_provider_id": rp_id, "consumer_uuid": consumer,
             "resource_class": rc, "used": amount, "created_at": now}
            for rp_id, consumer, rc, amount in rows])


def release(conn, consumer_uuid):
    """Delete every allocation of ``consumer_uuid``; a no-op if none.

    Of two releases of one consumer at once, only the one whose ``DELETE``
    removed the rows reports them freed: the other read them too, but its
    ``DELETE`` waited on the first one's row locks and found nothing left
    (a locking statement sees the latest commit on both databases).

    :returns: list of :class:`ProviderState` for the providers freed, empty
        when this transaction freed nothing
    """
    previous = _consumer_allocations(conn, consumer_uuid)
    if previous:
        # a release only frees room, so no compare-and-swap is needed; the
        # bump still tells concurrent claims that they read an older usage.
        # Providers first, as in a claim, so both lock in the same order.
        conn.execute(RP.update().where(RP.c.id.in_(sorted(previous))).values(
            generation=RP.c.generation + 1))
    deleted = conn.execute(ALLOC.delete().where(
        ALLOC.c.consumer_uuid == consumer_uuid)).rowcount
    conn.execute(CONSUMERS.delete().where(
        CONSUMERS.c.uuid == consumer_uuid))
    if not previous or not deleted:
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
                  GROUPS.c.max_server_per_host, GROUPS.c.level_policies)
        .select_from(CONSUMERS)
        .outerjoin(GROUPS, CONSUMERS.c.instance_group_uuid == GROUPS.c.uuid)
        .where(CONSUMERS.c.uuid == consumer_uuid)).first()
    if row is None:
        return ConsumerInfo()
    group = None
    if row.uuid is not None:
        group = GroupClaim(row.uuid, row.policy,
                           row.max_server_per_host or 1,
                           domains.loads(row.level_policies))
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
    """Host names on which any of ``consumer_uuids`` has allocations (a
    compute node's host, a standalone host's name: see
    :mod:`gantt.db.host_roots`)."""
    if not consumer_uuids:
        return set()
    query, name = host_roots.named_hosts(
        sa.select(ALLOC.c.consumer_uuid)
        .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
        .where(ALLOC.c.consumer_uuid.in_(list(consumer_uuids))))
    rows = conn.execute(query.with_only_columns(name).distinct())
    return {r[0] for r in rows}


def group_hosts(conn, group_uuid):
    """``{host: number of members}`` of a server group's placed members
    (hosts as :mod:`gantt.db.host_roots` names them)."""
    query, name = host_roots.named_hosts(
        sa.select(ALLOC.c.consumer_uuid)
        .select_from(ALLOC)
        .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
        .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
        .where(CONSUMERS.c.instance_group_uuid == group_uuid))
    rows = conn.execute(query.with_only_columns(
        name, sa.func.count(sa.distinct(ALLOC.c.consumer_uuid)))
        .group_by(name))
    return {host: int(count) for host, count in rows}


# -- the steps of a claim ---------------------------------------------------


@dataclasses.dataclass
class _Provider:
    """One provider as a claim's snapshot read it."""

    id: int
    uuid: str
    generation: int
    root_id: int | None
    is_host: bool | None       # its root has a host report (None: not read)
    inventories: dict = dataclasses.field(default_factory=dict)
    used: dict = dataclasses.field(default_factory=dict)


def _snapshot(conn, uuids=(), ids=(), without=None, hosts=False):
    """Providers (by uuid or id) with generation, inventories and usage
    (leaving out ``without``'s allocations), read in one statement;
    with ``hosts``, also whether each provider's root is a host (group
    policy counts hosts; the lookup is a fifth of the statement's time,
    so a claim outside a group does not pay for it).

    Usage is read for the classes a provider has inventory of: only those
    can be claimed, and a class without inventory has no room to check.

    :returns: ``{provider id: _Provider}``
    """
    providers = {}
    if not (uuids or ids):
        return providers
    params = {"uuids": sorted(uuids), "ids": sorted(ids),
              "without": without}
    shape = (bool(uuids), bool(ids), without is not None, hosts)
    if conn.dialect.name == "postgresql":
        sql, defaults = _snapshot_sql(conn.dialect, *shape)
        rows = map(_SnapshotRow._make,
                   prepared.execute(conn, sql, {**defaults, **params}))
    else:
        rows = conn.execute(_snapshot_statement(*shape), params)
    for row in rows:
        provider = providers.get(row.id)
        if provider is None:
            provider = providers[row.id] = _Provider(
                row.id, row.uuid, row.generation, row.root_provider_id,
                bool(row.is_host) if hosts else None)
        if row.resource_class is not None:
            provider.inventories[row.resource_class] = row
            if row.used:
                provider.used[row.resource_class] = int(row.used)
    return providers


@functools.cache
def _snapshot_statement(by_uuid, by_id, without, hosts, arrays=False):
    """:func:`_snapshot`'s SELECT, built once per shape: the lists are
    bound at execution (expanding, or with ``arrays`` as one array each,
    ``= ANY(:uuids)``, which gives one SQL text for every claim), so
    building it anew for every claim (a fifth of a claim's time in
    Python) is not needed."""
    used = (sa.select(sa.func.coalesce(sa.func.sum(ALLOC.c.used), 0))
            .where(ALLOC.c.resource_provider_id == RP.c.id)
            .where(ALLOC.c.resource_class == INV.c.resource_class))
    if without:
        used = used.where(ALLOC.c.consumer_uuid != sa.bindparam("without"))
    # a host is a compute node or a standalone host (an agent, a
    # backend); a sharing pool every member of a group may share is none
    is_host = (host_roots.is_host(RP.c.root_provider_id)
               if hosts else sa.null())
    wanted = []
    if arrays:
        if by_uuid:
            wanted.append(RP.c.uuid == sa.any_(sa.bindparam(
                "uuids", type_=postgresql.ARRAY(RP.c.uuid.type))))
        if by_id:
            wanted.append(RP.c.id == sa.any_(sa.bindparam(
                "ids", type_=postgresql.ARRAY(RP.c.id.type))))
    else:
        if by_uuid:
            wanted.append(RP.c.uuid.in_(sa.bindparam("uuids",
                                                     expanding=True)))
        if by_id:
            wanted.append(RP.c.id.in_(sa.bindparam("ids", expanding=True)))
    return (sa.select(RP.c.id, RP.c.uuid, RP.c.generation,
                      RP.c.root_provider_id, is_host.label("is_host"),
                      INV.c.resource_class, INV.c.total, INV.c.reserved,
                      INV.c.min_unit, INV.c.max_unit, INV.c.step_size,
                      INV.c.allocation_ratio,
                      used.scalar_subquery().label("used"))
            .select_from(RP.outerjoin(
                INV, INV.c.resource_provider_id == RP.c.id))
            .where(sa.or_(*wanted)))


@functools.lru_cache(maxsize=32)
def _snapshot_sql(dialect, by_uuid, by_id, without, hosts):
    """:func:`_snapshot`'s SELECT as PostgreSQL text, to be prepared (see
    :mod:`gantt.db.prepared`): SQLAlchemy's own execution of it costs as
    much again as the database's (result processing, expanding lists).

    :returns: (the SQL, its bound defaults)"""
    compiled = _snapshot_statement(by_uuid, by_id, without, hosts,
                                   arrays=True).compile(dialect=dialect)
    return str(compiled), {k: v for k, v in compiled.params.items()
                           if k not in ("uuids", "ids", "without")}


#: a row of the snapshot as PostgreSQL's prepared path returns it, named
#: as the SELECT names its columns (as SQLAlchemy's rows are)
_SnapshotRow = collections.namedtuple("_SnapshotRow", [
    c.name for c in _snapshot_statement(True, False, False, False,
                                        arrays=True).selected_columns])


def _by_uuid(providers, wanted):
    """``{uuid: _Provider}`` of those wanted; ProviderNotFound if one is
    not stored."""
    by_uuid = {p.uuid: p for p in providers.values()}
    for uuid in wanted:
        if uuid not in by_uuid:
            raise exception.ProviderNotFound(uuid=uuid)
    return by_uuid


def _take(by_uuid, consumer_uuid, allocations):
    """Check one consumer's allocations against what is left and count
    them in (so that the next consumer of a batch sees them)."""
    for uuid, resources in allocations.items():
        provider = by_uuid[uuid]
        for rc, amount in resources.items():
            used = provider.used.get(rc, 0)
            _check_capacity(uuid, consumer_uuid, rc, amount,
                            provider.inventories.get(rc), used)
            provider.used[rc] = used + amount


def _states(providers):
    """What each provider looks like once the claim commits."""
    return [ProviderState(p.uuid, p.generation + 1, dict(p.used))
            for p in sorted(providers.values(), key=lambda p: p.id)]


def _consumer_allocations(conn, consumer_uuid):
    """``{rp_id: {class: amount}}`` currently held by the consumer."""
    result = collections.defaultdict(dict)
    for rp_id, rc, used in conn.execute(
            sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                      ALLOC.c.used)
            .where(ALLOC.c.consumer_uuid == consumer_uuid)):
        result[rp_id][rc] = int(used)
    return result


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


class _GroupTally:
    """One transaction's count of a group's members: what
    :func:`_read_tally` read (the group row's ``generation`` and
    ``members``, ``Counter({host root id: members})``), plus the members
    this transaction claimed since; the domains of the hosts it looked
    at (``place``); whether its compare-and-swap of the group row was
    made (``bumped``)."""

    def __init__(self, generation, members):
        self.generation = generation
        self.members = members
        self.place = None
        self.everywhere = False
        self.bumped = False


def _bumped(tally):
    if tally is not None:
        tally.bumped = True


def _read_tally(conn, group, consumers):
    """A :class:`_GroupTally` of the group's placed members but
    ``consumers`` (one statement)."""
    return _GroupTally(*_group_members(conn, group, consumers))


def _check_group(conn, placements, group, tally):
    """Enforce a hard group policy against the members placed so far.

    :param placements: ``[(consumer uuid, [_Provider, ...])]``, in order:
        each one is checked with the ones before it counted as members
    :param tally: the :class:`_GroupTally` of the transaction; each
        placement is counted into it
    """
    members = tally.members
    place = _places_for(conn, group, tally, placements)
    for consumer, providers in placements:
        roots = {p.root_id for p in providers if p.is_host}
        if group.policy == "anti-affinity":
            broken = any(members[root] >= group.max_per_host
                         for root in roots)
        elif group.policy == "affinity":
            broken = bool(members) and not set(members) <= roots
        else:
            broken = False      # soft: a weigher's business
        if broken:
            raise exception.GroupPolicyViolation(
                consumer=consumer, host=",".join(sorted(
                    p.uuid for p in providers)),
                policy=group.policy, group=group.uuid)
        for policy in group.levels:
            domains.check(policy, members, place, roots, consumer,
                          group.uuid)
        members.update(roots)


def _places_for(conn, group, tally, placements):
    """The domains of the hosts the group's level policies look at: its
    members' and the candidates' (every host's for a spread, whose skew
    counts the domains without members too); None without level
    policies. Read once per transaction, then only for the hosts not
    read yet (``tally.place``)."""
    if not group.levels:
        return None
    if any(p.rule == "spread" for p in group.levels):
        if not tally.everywhere:
            tally.place, tally.everywhere = domains.places(conn, None), True
        return tally.place
    roots = set(tally.members) | {p.root_id for _, providers in placements
                                  for p in providers if p.is_host}
    if tally.place is None:
        tally.place = domains.places(conn, roots)
    elif not roots <= tally.place.keys():
        tally.place.update(domains.places(conn, roots - tally.place.keys()))
    return tally.place


def _group_members(conn, group, consumers):
    """The group's generation and ``Counter({host root id: members})`` of
    its placed members but ``consumers``, read in one statement."""
    placed = (
        sa.select(RP.c.root_provider_id.label("root"),
                  sa.func.count(sa.distinct(ALLOC.c.consumer_uuid))
                  .label("members"))
        .join(ALLOC, ALLOC.c.resource_provider_id == RP.c.id)
        .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)
        .where(CONSUMERS.c.instance_group_uuid == group.uuid)
        .where(host_roots.is_host(RP.c.root_provider_id))
        .where(CONSUMERS.c.uuid.not_in(consumers))
        .group_by(RP.c.root_provider_id)).subquery()
    rows = conn.execute(
        sa.select(GROUPS.c.generation, placed.c.root, placed.c.members)
        .select_from(GROUPS.outerjoin(placed, sa.literal(True)))
        .where(GROUPS.c.uuid == group.uuid)).all()
    if not rows:
        raise _group_conflict(group.uuid, None, "-")
    members = collections.Counter({r.root: int(r.members) for r in rows
                                   if r.root is not None})
    return rows[0].generation, members


def ensure_group(db, group):
    """Create the group's row if missing (its own short transaction).

    The claim compares-and-swaps this row's generation, so it must exist
    before any claim of a member starts.
    """
    try:
        with db.begin() as conn:
            exists = conn.execute(
                sa.select(GROUPS.c.id, GROUPS.c.level_policies).where(
                    GROUPS.c.uuid == group.uuid)).first()
            levels = domains.dumps(group.levels)
            if exists is not None and exists.level_policies != levels:
                # what the audit reads: the policies the last claim kept
                conn.execute(GROUPS.update().where(
                    GROUPS.c.id == exists.id).values(level_policies=levels))
            if exists is None:
                conn.execute(GROUPS.insert().values(
                    uuid=group.uuid, policy=group.policy,
                    max_server_per_host=group.max_per_host, generation=0,
                    level_policies=levels,
                    created_at=timeutils.utcnow()))
    except db_exc.DBDuplicateEntry:
        pass  # another worker created it at the same moment


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
            raise _consumer_changed(consumer_uuid, None) from None
        return
    updated = conn.execute(
        CONSUMERS.update().where(CONSUMERS.c.uuid == consumer_uuid)
        .where(CONSUMERS.c.generation == seen)
        .values(updated_at=now, generation=seen + 1, **values)).rowcount
    if updated != 1:
        raise _consumer_changed(consumer_uuid, seen)


def _consumer_changed(consumer_uuid, seen):
    """The consumer's compare-and-swap failed: another claim or release of
    it committed since this transaction read it. Not retried (see the
    module docstring): the caller is told."""
    return exception.ConsumerConflict(
        consumer=consumer_uuid,
        reason="its claim changed while this call was placing it "
               "(generation %s was read); nothing was changed" % (
                   "none" if seen is None else seen))


def _bump_generations(conn, providers, consumer_uuid):
    """Compare-and-swap every provider's generation in one ``UPDATE``.

    :param providers: ``{id: _Provider}`` as the snapshot read them
    :raises: ClaimConflict if any of them changed since
    """
    if not providers:
        return
    ordered = sorted(providers.values(), key=lambda p: p.id)
    bumped = conn.execute(_cas_statement(len(ordered)),
                          _cas_params(ordered)).rowcount
    if bumped != len(ordered):
        raise _providers_conflict(ordered, consumer_uuid)


def _cas_params(ordered):
    """:func:`_cas_statement`'s parameters for those providers."""
    params = {}
    for i, p in enumerate(ordered):
        params["id_%d" % i] = p.id
        params["seen_%d" % i] = p.generation
    return params


def _providers_conflict(ordered, consumer_uuid):
    return exception.ClaimConflict(
        provider=",".join(p.uuid for p in ordered),
        seen=",".join(str(p.generation) for p in ordered),
        consumer=consumer_uuid)


@functools.lru_cache(maxsize=64)
def _cas_statement(count):
    """:func:`_bump_generations`'s UPDATE for ``count`` providers, built
    once per count."""
    return RP.update().where(sa.or_(*[
        sa.and_(RP.c.id == sa.bindparam("id_%d" % i),
                RP.c.generation == sa.bindparam("seen_%d" % i))
        for i in range(count)])).values(generation=RP.c.generation + 1)


def _bump_group(conn, group_uuid, seen, consumer_uuid):
    bumped = conn.execute(
        GROUPS.update().where(GROUPS.c.uuid == group_uuid)
        .where(GROUPS.c.generation == seen)
        .values(generation=seen + 1)).rowcount
    if bumped != 1:
        raise _group_conflict(group_uuid, seen, consumer_uuid)


def _group_conflict(group_uuid, seen, consumer_uuid):
    return exception.ClaimConflict(provider="group " + group_uuid,
                                   seen=seen, consumer=consumer_uuid)
