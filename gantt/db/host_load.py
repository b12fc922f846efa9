"""Reading hosts and providers back: a worker's start and its syncs.

:func:`load_host_columns` reads every reported host with its provider tree
as :class:`StoredHosts` (columns; contents many hosts share held once),
which ``scheduler.state.load`` writes into the cache in bulk. The queries
are :mod:`gantt.db.bulk_read`'s: here they run on two connections in
repeatable-read snapshots, each on a thread of its own, while this thread
parses what comes back. :func:`load_standalone_providers` and
:func:`usages_by_uuid` are the plain readers of the rest.

Over 400 lines: the bulk reader and the standalone providers' reader
share the contents query (:func:`load_contents`) and the stored records;
apart, each would need the other's (:mod:`gantt.db.tree_load` reads a
few trees with both).
"""

import collections
from concurrent import futures
import contextlib
import dataclasses
import datetime
import functools
import json
import threading

import numpy as np
import sqlalchemy as sa

from gantt.db import bulk_read
from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import INVENTORY_FIELDS
from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS


@dataclasses.dataclass
class StoredProvider:
    """A child or standalone provider as read back from the database."""

    uuid: str
    name: str
    parent_uuid: str | None
    generation: int
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: set = dataclasses.field(default_factory=set)
    aggregates: set = dataclasses.field(default_factory=set)
    usage: dict = dataclasses.field(default_factory=dict)
    # standalone providers only: the sequence and boot of their stored
    # report
    report_sequence: int | None = None
    boot_id: str | None = None
    # standalone providers only: what their report says they are
    # (ProviderReport 1.2; "pool" for those stored before)
    kind: str | None = None
    service: str | None = None
    availability_zone: str | None = None
    capabilities: dict = dataclasses.field(default_factory=dict)
    instance_uuid: str | None = None
    received_at: datetime.datetime | None = None
    location: str | None = None


@dataclasses.dataclass
class StoredHosts:
    """Every reported host as columns: entry ``i`` of each is host ``i``,
    hosts in provider id order (what :func:`load_host_columns` returns).

    Contents many hosts share are held once: ``inventory_sets[c]`` is the
    inventory of every host ``i`` with ``inventory_codes[i] == c`` (code 0
    the empty one); likewise traits, aggregates and details.
    """

    ids: np.ndarray             # provider ids, ascending
    uuids: list
    generation: np.ndarray      # int64
    hosts: list
    nodenames: list
    cell_uuids: list            # str or None
    zones: list                 # str or None
    disabled: np.ndarray        # bool
    report_sequence: np.ndarray  # int64
    num_instances: np.ndarray   # int64
    num_io_ops: np.ndarray      # int64
    received_at: np.ndarray     # float64 seconds since the epoch (UTC)
    received_texts: list        # the same as stored, for received()
    agent_updated_at: list      # naive datetimes or None
    instance_uuids: list        # JSON text or None
    locations: list             # str or None, as reported
    sources: list               # None (an agent) or api_hosts.SOURCE
    detail_codes: np.ndarray
    detail_texts: list          # JSON text
    # {class: (total, reserved, min_unit, max_unit, step, ratio)}
    inventory_codes: np.ndarray
    inventory_sets: list
    trait_codes: np.ndarray
    trait_sets: list            # frozensets
    aggregate_codes: np.ndarray
    aggregate_sets: list        # frozensets
    # usage: one entry per (host, class) used, by host index: the host
    # index, the class (index into usage_classes) and the amount
    usage_rows: np.ndarray
    usage_codes: np.ndarray
    usage_amounts: np.ndarray
    usage_classes: list
    # host index -> its other providers (StoredProvider), parents first
    children: dict

    def __len__(self):
        return len(self.uuids)

    def inventories(self, i):
        return self.inventory_sets[self.inventory_codes[i]]

    def traits(self, i):
        return self.trait_sets[self.trait_codes[i]]

    def aggregates(self, i):
        return self.aggregate_sets[self.aggregate_codes[i]]

    def details(self, i):
        return self.detail_texts[self.detail_codes[i]]

    def received(self, i):
        """When host ``i``'s report was received (a naive datetime)."""
        return datetime.datetime.fromisoformat(self.received_texts[i])

    def usage_of(self, i):
        """``{class: used}`` of host ``i``."""
        lo, hi = np.searchsorted(self.usage_rows, (i, i + 1))
        return {self.usage_classes[c]: a for c, a in zip(
            self.usage_codes[lo:hi].tolist(),
            self.usage_amounts[lo:hi].tolist(), strict=True)}


def load_host_columns(db):
    """Every reported host with its provider tree, as :class:`StoredHosts`.

    Each table is read in ranges of ids, one result row per range: about
    a hundred short queries per table at 100k hosts. Two connections
    read at once (on MySQL and PostgreSQL), each in a repeatable-read
    transaction: the reports, generations, inventories and usage on the
    first; the traits and aggregates on the second, whose snapshot is
    taken after the first's, so that a host's contents are never older
    than its report says. The queries run on threads of their own while
    this one parses what they returned: the database's work and this
    process's overlap.
    """
    threaded = db.backend != "sqlite"
    with contextlib.ExitStack() as stack:
        first = bulk_read.Reader(stack.enter_context(_snapshot(db)))
        second = first
        if threaded:
            first.conn.execute(sa.select(RP.c.id).limit(1)).all()
            second = bulk_read.Reader(stack.enter_context(_snapshot(db)))
        for reader in {first, second}:
            stack.enter_context(reader.long_concatenation())
        # sqlite3 connections stay in the thread that made them
        fetch = stack.enter_context(_Fetcher([
            ("hosts", first.host_texts),
            ("children", first.child_rows),
            ("inventories", first.inventory_texts),
            ("usage", first.usage_texts)], threaded))
        other = stack.enter_context(_Fetcher([
            ("traits", functools.partial(
                second.joined_texts, TRAITS, TRAITS.c.trait)),
            ("aggregates", functools.partial(
                second.member_texts, AGGS, AGGS.c.aggregate_uuid))],
            threaded))
        # in the order they come
        columns = bulk_read.host_columns(fetch.tokens("hosts"))
        children = children_of(fetch.get("children"), columns["ids"],
                             columns["uuids"])
        traits = bulk_read.joined_sets(other.tokens("traits"))
        inventories = bulk_read.sets(fetch.tokens("inventories"))
        inventories = inventories[:2] + (
            [bulk_read.inventory_dict(items) for items in inventories[2]],)
        aggregates = bulk_read.sets(other.tokens("aggregates"))
        usage = bulk_read.usage(fetch.tokens("usage"))
    return _assemble(columns, children, inventories, traits, aggregates,
                     usage)


@contextlib.contextmanager
def _snapshot(db):
    """A connection in a repeatable-read transaction (SQLite's are)."""
    if db.backend == "sqlite":
        with db.begin() as conn:
            yield conn
        return
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


class _Fetcher:
    """Runs the named jobs in turn, on a thread of its own when
    ``threaded``; :meth:`get` waits for one's result (or raises its
    error)."""

    def __init__(self, jobs, threaded=True):
        self._jobs = jobs
        self._results = {name: futures.Future() for name, _job in jobs}
        self._stop = False
        self._thread = threading.Thread(
            target=self._run, daemon=True,
            name="load-hosts") if threaded else None

    def __enter__(self):
        if self._thread is None:
            self._run()
        else:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        # NOTE: the connection is not released before its last query
        self._stop = True
        if self._thread is not None:
            self._thread.join()

    def _run(self):
        for k, (name, job) in enumerate(self._jobs):
            if self._stop:
                break
            try:
                value = job()
            except BaseException as exc:
                for later, _job in self._jobs[k:]:
                    self._results[later].set_exception(exc)
                return
            self._results[name].set_result(value)

    def get(self, name):
        return self._results[name].result()

    def tokens(self, name):
        """The fields of a ranged job's rows, all in one list."""
        tokens = []
        for chunk in self.get(name):
            tokens.extend(chunk.split(bulk_read.SEP) if isinstance(chunk, str)
                          else chunk)
        return tokens


def _per_host(ids, content):
    """Per host (ids, ascending) the code of its content: ``content`` is
    ``(provider ids, codes, distinct)``; 0 for a host without any."""
    rp_ids, codes, _distinct = content
    out = np.zeros(len(ids), dtype=np.int64)
    if len(ids) and len(rp_ids):
        pos = np.minimum(np.searchsorted(ids, rp_ids), len(ids) - 1)
        mine = ids[pos] == rp_ids
        out[pos[mine]] = codes[mine]
    return out


def _of_provider(content):
    """``{provider id: content}`` of ``(provider ids, codes, distinct)``."""
    rp_ids, codes, distinct = content
    return {rp_id: distinct[code] for rp_id, code in zip(
        rp_ids.tolist(), codes.tolist(), strict=True)}


def _assemble(columns, children, inventories, traits, aggregates, usage):
    """StoredHosts from what the queries read."""
    children, child_ids = children
    ids = columns["ids"]
    if child_ids:
        _fill_children(child_ids, inventories, traits, aggregates, usage)
    rp_ids, codes, amounts, classes = usage
    pos = np.searchsorted(ids, rp_ids)
    mine = (ids[np.minimum(pos, len(ids) - 1)] == rp_ids if len(ids)
            else np.zeros(len(rp_ids), dtype=bool))
    return StoredHosts(
        inventory_codes=_per_host(ids, inventories),
        inventory_sets=inventories[2],
        trait_codes=_per_host(ids, traits), trait_sets=traits[2],
        aggregate_codes=_per_host(ids, aggregates),
        aggregate_sets=aggregates[2],
        usage_rows=pos[mine], usage_codes=codes[mine],
        usage_amounts=amounts[mine], usage_classes=classes,
        children=children, **columns)


def _fill_children(child_ids, inventories, traits, aggregates, usage):
    """Inventories, traits, aggregates and usage of the children."""
    inventories = _of_provider(inventories)
    traits, aggregates = _of_provider(traits), _of_provider(aggregates)
    for rp_id, child in child_ids.items():
        child.inventories = dict(inventories.get(rp_id, {}))
        child.traits = set(traits.get(rp_id, ()))
        child.aggregates = set(aggregates.get(rp_id, ()))
    rp_ids, codes, amounts, classes = usage
    for k in np.flatnonzero(np.isin(rp_ids, list(child_ids))).tolist():
        child_ids[int(rp_ids[k])].usage[classes[codes[k]]] = int(
            amounts[k])


def children_of(rows, ids, uuids):
    """The children (``rows``) of the hosts ``ids``, parents first, as
    ``({host index: [StoredProvider]}, {child id: StoredProvider})``."""
    index = {rp_id: i for i, rp_id in enumerate(ids.tolist())}
    kids_of = collections.defaultdict(list)      # parent id -> child rows
    roots = set()
    for row in rows:
        if row.root_provider_id in index:
            kids_of[row.parent_provider_id].append(row)
            roots.add(row.root_provider_id)
    children, loaded = {}, {}
    for root_id in sorted(roots):
        i = index[root_id]
        known = {root_id: uuids[i]}
        kids = children[i] = []
        queue = collections.deque([root_id])
        while queue:
            for row in kids_of.pop(queue.popleft(), ()):
                child = StoredProvider(
                    uuid=row.uuid, name=row.name,
                    parent_uuid=known[row.parent_provider_id],
                    generation=row.generation)
                kids.append(child)
                known[row.id] = row.uuid
                loaded[row.id] = child
                queue.append(row.id)
    return children, loaded


def load_contents(conn, targets, only):
    """Fill inventories, traits, aggregates and usage of ``targets``
    (``{rp_id: StoredHost or StoredProvider}``), one query each; ``only``
    (a subquery of provider ids, or None for all) narrows the rows read."""
    def select(table, *columns):
        query = sa.select(*columns) if columns else sa.select(table)
        if only is not None:
            query = query.where(table.c.resource_provider_id.in_(only))
        return query

    for rp_id, rc, *inventory in conn.execute(select(
            INV, INV.c.resource_provider_id, INV.c.resource_class,
            *(INV.c[k] for k in INVENTORY_FIELDS))):
        target = targets.get(rp_id)
        if target is not None:
            target.inventories[rc] = tuple(inventory)
    for table, attr in ((TRAITS, "traits"), (AGGS, "aggregates")):
        for rp_id, value in conn.execute(select(table)):
            if rp_id in targets:
                getattr(targets[rp_id], attr).add(value)
    for rp_id, rc, used in conn.execute(
            select(ALLOC, ALLOC.c.resource_provider_id,
                   ALLOC.c.resource_class, sa.func.sum(ALLOC.c.used))
            .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class)):
        if rp_id in targets:
            targets[rp_id].usage[rc] = int(used)


def load_standalone_providers(db):
    """Every standalone provider, as :class:`StoredProvider` with its
    ``report_sequence`` and ``boot_id``."""
    standalone = {}
    with db.begin() as conn:
        for row in conn.execute(
                sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                          PROVIDER_REPORTS.c.report_sequence,
                          PROVIDER_REPORTS.c.boot_id,
                          PROVIDER_REPORTS.c.kind,
                          PROVIDER_REPORTS.c.service,
                          PROVIDER_REPORTS.c.availability_zone,
                          PROVIDER_REPORTS.c.capabilities,
                          PROVIDER_REPORTS.c.instance_uuid,
                          PROVIDER_REPORTS.c.location,
                          PROVIDER_REPORTS.c.received_at)
                .join(PROVIDER_REPORTS,
                      PROVIDER_REPORTS.c.resource_provider_id == RP.c.id)
                .order_by(RP.c.id)):
            standalone[row.id] = StoredProvider(
                uuid=row.uuid, name=row.name, parent_uuid=None,
                generation=row.generation,
                report_sequence=row.report_sequence, boot_id=row.boot_id,
                kind=row.kind, service=row.service,
                availability_zone=row.availability_zone,
                # typed as reported: JSON keeps true, 1 and 1.0 apart
                capabilities=json.loads(row.capabilities or "{}"),
                instance_uuid=row.instance_uuid,
                received_at=row.received_at, location=row.location)
        if standalone:
            load_contents(conn, standalone, sa.select(
                PROVIDER_REPORTS.c.resource_provider_id))
    return list(standalone.values())


def usages_by_uuid(db, uuids=None):
    """``{provider uuid: (generation, {class: used})}`` for a usage sync."""
    with db.begin() as conn:
        query = sa.select(RP.c.id, RP.c.uuid, RP.c.generation)
        if uuids is not None:
            query = query.where(RP.c.uuid.in_(list(uuids)))
        providers = {r.id: (r.uuid, r.generation)
                     for r in conn.execute(query)}
        usage = provider_usage(conn, providers) if providers else {}
    return {uuid: (gen, usage.get(rp_id, {}))
            for rp_id, (uuid, gen) in providers.items()}


def provider_usage(conn, rp_ids):
    """``{rp_id: {class: used}}`` summed over all consumers."""
    usage = {rp: {} for rp in rp_ids}
    rows = conn.execute(
        sa.select(ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                  sa.func.sum(ALLOC.c.used))
        .where(ALLOC.c.resource_provider_id.in_(list(rp_ids)))
        .group_by(ALLOC.c.resource_provider_id, ALLOC.c.resource_class))
    for rp_id, rc, used in rows:
        usage[rp_id][rc] = int(used)
    return usage
