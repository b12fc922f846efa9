"""HostStateCache: every host's latest report and usage, as numpy columns.

The cache owns a :class:`~.table.HostTable` and is its only writer: stats
reports (:class:`~.update.HostUpdate`), usage (claims, peers, syncs),
aggregates and standalone providers come in here; requests read a
:meth:`HostStateCache.view` of it, and mark the claim they are making
with :meth:`HostStateCache.reserved`.

Concurrency model: writers hold ``_lock`` and change elements in place;
when a table must grow (a new host, class or trait) the writer builds
bigger arrays and swaps in a new ``HostTable``. A request takes
``cache.table`` once (its view) and keeps that reference, so it always sees
arrays of consistent shapes. It may see one host's row half-updated; that
can cost a claim retry, never an overcommit, because every claim is
checked again in the database.

Over 400 lines: every writer of the table is a method here, so that what
``_lock`` guards reads in one place; the row writing itself is in
:mod:`~.rows` and the bulk load in :mod:`~.load`.
"""

import contextlib
import dataclasses
import threading
import time
import typing

import numpy as np

from gantt.scheduler.intake import report_rules
from gantt.scheduler.state import host_view
from gantt.scheduler.state import load
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import rows
from gantt.scheduler.state import table as table_mod
from gantt.scheduler.state import topology as topology_mod
from gantt.scheduler.state import update as update_mod

#: the kind of a standalone provider whose report does not say
DEFAULT_KIND = "pool"


class Reservation(typing.NamedTuple):
    """A claim's mark, as :meth:`HostStateCache.reserve` made it."""

    table: table_mod.HostTable      # the table the mark went into
    provider_uuid: str
    resources: dict


def _domains(aggregate_set):
    """The topology aggregates of a set, as what locations depend on."""
    return {(uuid, level, aggregate_set.by_uuid[uuid].name)
            for uuid, level in aggregate_set.with_key(
                topology_mod.AGGREGATE_KEY)}


class HostStateCache:
    """The worker's in-memory copy of every host, kept fresh by reports."""

    def __init__(self, clock=time.time, levels=None):
        """:param levels: ``[topology] levels`` (None: the default)"""
        self._lock = threading.Lock()
        self._clock = clock
        self.table = table_mod.HostTable.empty()
        if levels is not None:
            self.table.topology.levels = topology_mod.Topology(levels).levels
        # standalone provider uuid -> (report sequence, boot id) held
        self._standalone = {}
        # providers whose usage changed since the last usage sync began,
        # and during a sync those that had changed before it began (see
        # begin_usage_sync): only they can hold what the database does not
        self._moved = set()
        self._suspects = set()
        # host uuid -> the boot id of the report held (absent: None)
        self._boot_ids = {}

    def __len__(self):
        """The compute nodes held (standalone providers are rows too, of
        other kinds; ``host_states`` lists them all)."""
        table = self.table
        compute = table.kinds_index.get(table_mod.COMPUTE)
        return int(np.count_nonzero(table.kind[:table.n] == compute))

    # -- reports ----------------------------------------------------------

    def needs_persisting(self, report, interval):
        """Whether ``report`` must be written to the database.

        A report that only repeats what this worker last wrote, less than
        ``interval`` seconds ago, need not be: the database already holds
        its content, and its liveness is refreshed at that interval.
        """
        table = self.table
        row = table.row_by_uuid.get(report.uuid)
        return (row is None
                or table.fingerprints[row] != report.fingerprint()
                or report.received_at - table.persisted_at[row] >= interval
                or report.boot_id != self._boot_ids.get(report.uuid))

    def supersedes(self, uuid, sequence, boot_id):
        """Whether a report of host ``uuid`` replaces the one held (see
        ``report_rules.supersedes``); True for a host not held."""
        table = self.table
        row = table.row_by_uuid.get(uuid)
        return row is None or report_rules.supersedes(
            sequence, boot_id, int(table.report_sequence[row]),
            self._boot_ids.get(uuid))

    def _supersedes(self, table, row, report):
        return report_rules.supersedes(
            report.report_sequence, report.boot_id,
            int(table.report_sequence[row]), self._boot_ids.get(report.uuid))

    def _hold_boot(self, report):
        if report.boot_id is None:
            self._boot_ids.pop(report.uuid, None)
        else:
            self._boot_ids[report.uuid] = report.boot_id

    def load_boot_ids(self, boot_ids):
        """The stored boot ids of the hosts (after :meth:`load`); a host
        whose report was cast meanwhile keeps that report's."""
        with self._lock:
            for uuid, boot_id in boot_ids.items():
                self._boot_ids.setdefault(uuid, boot_id)

    def host_holder(self, host, uuid):
        """The uuid of a compute node other than ``uuid`` that the cache
        holds as ``host``, or None."""
        table = self.table
        compute = table.kinds_index.get(table_mod.COMPUTE)
        for row in table.rows_by_host.get(host, ()):
            # a standalone provider may have a compute host's name
            if table.uuids[row] != uuid and table.kind[row] == compute:
                return table.uuids[row]
        return None

    def retire_host_rows(self, host, uuid):
        """Compute node ``uuid`` now holds ``host`` (the database let it
        in, the former one was deleted): the rows of others under that
        name are disabled and no longer found by the name. They stay
        until the worker restarts, never placeable."""
        with self._lock:
            table = self.table
            rows = table.rows_by_host.get(host, [])
            compute = table.kinds_index.get(table_mod.COMPUTE)
            for row in [r for r in rows if table.uuids[r] != uuid
                        and table.kind[r] == compute]:
                rows.remove(row)
                table.disabled[row] = True
                table.has_inventory[row] = False

    def reset_sequence(self, uuid):
        """Take the next report of host ``uuid`` whatever its sequence and
        boot (an operator's reset); False for a host not held."""
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(uuid)
            if row is None:
                return False
            table.report_sequence[row] = np.iinfo(np.int64).min
            self._boot_ids.pop(uuid, None)
            return True

    def apply_report(self, report, persisted=False):
        """Store a host report; False when it is not newer than the cache's.

        :param report: a :class:`~.update.HostUpdate`
        :param persisted: the database now holds this report's content
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            if row is not None and not self._supersedes(table, row, report):
                return False
            self._write_report(table, row, report, persisted)
            return True

    def replace_host(self, report):
        """Hold the database's state of host ``report.uuid`` whatever its
        sequence: a write through the REST API changed its tree
        (``trees_changed``, or a resync found the tree ahead). The
        sequence, boot and liveness held stay when the stored report does
        not supersede them (an agent's report cast, not stored yet); the
        contents are the database's until the agent's next report.

        :param report: a :class:`~.update.HostUpdate` read back from the
            database
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            if row is not None and not self._supersedes(table, row, report):
                report = dataclasses.replace(
                    report, report_sequence=int(table.report_sequence[row]),
                    boot_id=self._boot_ids.get(report.uuid),
                    received_at=max(float(table.last_seen[row]),
                                    report.received_at))
            self._write_report(table, row, report, persisted=True)

    def _write_report(self, table, row, report, persisted):
        """Row ``row`` (None: a new one) holds ``report`` (the lock is
        held)."""
        self._hold_boot(report)
        table = rows.make_room(table, report, row is None)
        if row is None:
            # NOTE: write the row before publishing it (uuid map, n), so
            # that a reader never sees a live row full of zeros
            row = table.n
            table.uuids[row] = report.uuid
            # below any real generation: the first usage is always news
            table.generation[row] = -1
            rows.write_row(table, row, report)
            rows.write_tree(table, row, report, was_tree=False)
            table.row_by_uuid[report.uuid] = row
            table.n += 1
        else:
            was_tree = bool(table.tree[row])
            rows.write_row(table, row, report)
            rows.write_tree(table, row, report, was_tree)
        if persisted:
            table.fingerprints[row] = report.fingerprint()
            table.persisted_at[row] = report.received_at
        elif table.fingerprints[row] != report.fingerprint():
            # the row now holds content the database does not: no
            # fingerprint may claim it (see refresh_liveness)
            table.fingerprints[row] = None
        self.table = table

    def refresh_liveness(self, report):
        """Take a report whose content the row already holds: only its
        sequence and times are new (most reports: an agent repeating
        itself), so the row is not rewritten.

        :returns: True if taken, False if not newer than the cache's, None
            if the row does not hold exactly that content (then
            :meth:`apply_report` must take it)
        """
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(report.uuid)
            # NOTE: a row's fingerprint is the persisted content's, and is
            # cleared whenever the row holds anything else (apply_report)
            if row is None or table.fingerprints[row] != report.fingerprint():
                return None
            if not self._supersedes(table, row, report):
                return False
            self._hold_boot(report)
            table.last_seen[row] = report.received_at
            table.report_sequence[row] = report.report_sequence
            table.updated_at[row] = report.updated_at
            return True

    def load(self, stored, window=0):
        """Store every host read from the database, in bulk.

        The same as ``apply_report(report, persisted=True)`` of each
        host's stored report, then ``apply_usage`` of the host and of the
        other providers of its tree, at the stored generations; but the
        hosts new to the cache and without children are written as whole
        columns, into a table grown once to exactly the hosts it will hold
        (no spare rows). A host the cache holds already (a report cast
        while loading) keeps the newer report, as apply_report decides.

        :param stored: a :class:`gantt.db.host_load.StoredHosts`
        :param window: ``[api] compute_node_down_time``, the lease of
            the hosts the REST API made (see HostTable.lease)
        """
        loading = load.Loading(stored, window)      # parsed outside the lock
        with self._lock:
            table = self.table
            fresh, others = loading.split(table.row_by_uuid)
            # room for the trees too, which are applied as reports
            new = len(fresh) + sum(
                stored.uuids[i] not in table.row_by_uuid for i in others)
            if fresh:
                self.table = load.loaded_table(table, loading, fresh, new)
            elif table.n + new > table.row_capacity:
                self.table = table.grown(table.n + new)
        for i in others:
            # trees, and hosts whose report was cast meanwhile
            self.apply_report(load.stored_report(stored, i, window),
                              persisted=True)
            self.apply_usage(stored.uuids[i], int(stored.generation[i]),
                             stored.usage_of(i))
            for child in stored.children.get(i, ()):
                self.apply_usage(child.uuid, child.generation, child.usage)

    # -- aggregates -------------------------------------------------------

    @property
    def aggregates(self):
        """The :class:`~.state.aggregates.AggregateSet` in use."""
        return self.table.aggregate_set

    def apply_aggregates(self, aggregate_set):
        """Use ``aggregate_set`` (every aggregate) from now on.

        Hosts named in an aggregate's host list become members of it, in
        addition to the aggregates their agents report; only the rows of
        hosts whose listed membership changed are rewritten.
        """
        with self._lock:
            table = self.table
            old = table.aggregate_set
            hosts = set(old.by_host) | set(aggregate_set.by_host)
            changed = [h for h in hosts if old.listed_for(h)
                       != aggregate_set.listed_for(h)]
            new = [u for u in set().union(*aggregate_set.by_host.values())
                   if table.aggregates_index.get(u) is None]
            for uuid in sorted(new):
                table.aggregates_index.add(uuid)
            table.aggregate_set = aggregate_set
            for host in changed:
                for row in table.rows_by_host.get(host, ()):
                    rows.write_aggregates(table, row)
            if _domains(old) != _domains(aggregate_set):
                # a topology aggregate came, went or was renamed: every
                # row's location may change, not only the listed hosts'
                for row in range(table.n):
                    rows.write_location(table, row)
            self.table = table

    # -- usage ------------------------------------------------------------

    def apply_usage(self, provider_uuid, generation, usages):
        """Set a host's usage as of ``generation``; older news is ignored.

        Every change of a provider's allocations bumps its generation, so an
        equal generation is the same state and is not applied again.

        :param usages: resource class -> total amount used on the provider
        :returns: True if this was news (the cache changed)
        """
        with self._lock:
            news = self._apply_usage(provider_uuid, generation, usages)
            if news:
                self._moved.add(provider_uuid)
            return news

    def _apply_usage(self, provider_uuid, generation, usages, force=False):
        table = self.table
        node = table.providers.get(provider_uuid)
        if node is not None:
            return self._apply_tree_usage(table, node, generation, usages,
                                          force)
        row = table.row_by_uuid.get(provider_uuid)
        if row is None:
            return False
        if force:
            if table.generation[row] == generation and (
                    provider_tree.same_usage(rows.row_usage(table, row),
                                              rows.known(table, usages))):
                return False
        elif table.generation[row] >= generation:
            return False
        table.generation[row] = generation
        rows.write_usage(table, row, usages)
        return True

    @staticmethod
    def _apply_tree_usage(table, node, generation, usages, force=False):
        """A provider of a tree, or a standalone one, changed usage."""
        index = table.providers
        if not index.apply_usage(node.uuid, generation, usages, force):
            return False
        row = table.row_by_uuid.get(node.root_uuid)
        if row is not None:
            if node.uuid == node.root_uuid:
                table.generation[row] = generation
            rows.write_tree_usage(table, row, index.tree(node.root_uuid))
        return True

    # -- usage sync: the database overrides what peers said ---------------

    def begin_usage_sync(self):
        """Call before reading usage from the database for
        :meth:`finish_usage_sync`: usage news from now on may be newer
        than what the read returns."""
        with self._lock:
            # a sync whose read failed left its suspects: they stay
            self._suspects |= self._moved
            self._moved = set()

    def finish_usage_sync(self, stored):
        """Make the database's usage the cache's (a usage sync).

        A provider whose usage changed since :meth:`begin_usage_sync`
        (a claim or peer cast the read may predate) takes the stored
        state only if it is newer, as :meth:`apply_usage`. Every other
        provider takes exactly the stored generation and usage, whatever
        generation it held: a legitimate change is committed before any
        cache hears of it, so a cached state the database does not hold
        came from a forged or corrupted peer cast, and must not outlive
        the sync. Only a provider whose usage changed between the
        previous sync and this one can hold such a state (the others hold
        what the previous sync read), so only those are compared.

        :param stored: ``{provider uuid: (generation, {class: used})}``
            as read after :meth:`begin_usage_sync`
        :returns: the uuids whose cached state contradicted the database
            (a generation at or above the stored one with other usage)
        """
        contradicted = []
        for uuid, (generation, usage) in stored.items():
            with self._lock:
                if (uuid in self._suspects and uuid not in self._moved
                        and self._held_generation(uuid) >= generation):
                    if self._apply_usage(uuid, generation, usage,
                                         force=True):
                        contradicted.append(uuid)
                else:
                    self._apply_usage(uuid, generation, usage)
        with self._lock:
            self._suspects = set()
        return contradicted

    def _held_generation(self, uuid):
        table = self.table
        node = table.providers.get(uuid)
        if node is not None:
            return node.generation
        row = table.row_by_uuid.get(uuid)
        return -1 if row is None else int(table.generation[row])

    # -- standalone providers ----------------------------------------------

    def apply_provider(self, provider, report_sequence, boot_id=None,
                       details=None, received_at=None):
        """Store a standalone provider's report (a sharing pool, a volume
        backend, a container host…); False when it does not supersede the
        one held (``report_rules.supersedes``).

        The provider joins the provider index (where the solver finds
        sharing pools) and is a row of the table too, of its kind, so that
        requests for that kind consider it and operators list it; requests
        for other kinds never do (``candidates``).

        :param provider: a :class:`provider_tree.Provider` (its own root)
        :param details: an :class:`~.update.Standalone` (None: of the
            default kind, saying nothing more)
        :param received_at: epoch seconds of the report (its liveness)
        """
        details = details or update_mod.Standalone(kind=DEFAULT_KIND)
        with self._lock:
            held = self._standalone.get(provider.uuid)
            if held is not None and not report_rules.supersedes(
                    report_sequence, boot_id, *held):
                return False
            table = self.table
            table.providers.set_tree(provider.uuid, [provider])
            self._standalone[provider.uuid] = (report_sequence, boot_id)
            self._refresh_sharing(table)
            self._write_standalone_row(update_mod.HostUpdate.from_standalone(
                provider, details, report_sequence,
                self._clock() if received_at is None else received_at))
            return True

    def _write_standalone_row(self, report):
        """The row of a standalone provider (the lock is held): its usage
        and generation are the index's, which usage news keeps in step
        (``_apply_tree_usage``: the provider is its own root)."""
        table = self.table
        row = table.row_by_uuid.get(report.uuid)
        table = rows.make_room(table, report, row is None)
        if row is None:
            row = table.n
            table.uuids[row] = report.uuid
            rows.write_row(table, row, report)
            table.row_by_uuid[report.uuid] = row
            table.n += 1
        else:
            rows.write_row(table, row, report)
        node = table.providers.get(report.uuid)
        table.generation[row] = node.generation
        rows.write_usage(table, row, node.usage)
        self.table = table

    def remove_provider(self, provider_uuid):
        """Forget a standalone provider (it was deleted or retired): its
        row stays, of no kind, so no request considers it and no operator
        listing shows it; a later report of the same uuid takes a new
        row."""
        with self._lock:
            if self._standalone.pop(provider_uuid, None) is None:
                return False
            table = self.table
            table.providers.remove_tree(provider_uuid)
            self._refresh_sharing(table)
            row = table.row_by_uuid.pop(provider_uuid, None)
            if row is not None:
                _retire_row(table, row)
            return True

    def standalone_providers(self):
        """The standalone providers held, as provider_tree.Provider."""
        index = self.table.providers
        return [p for p in map(index.get, list(self._standalone))
                if p is not None]

    def is_standalone(self, uuid):
        return uuid in self._standalone

    # -- hosts the REST API made or changed -----------------------------

    def forget_host(self, uuid):
        """Compute node ``uuid`` is a host no longer (its provider was
        deleted, lost ``COMPUTE_NODE`` or became a child): its row stays,
        of no kind, as :meth:`remove_provider` leaves one; False for a
        uuid that is no compute node held."""
        with self._lock:
            table = self.table
            row = table.row_by_uuid.get(uuid)
            if row is None or table.kind_of(row) != table_mod.COMPUTE:
                return False
            table.providers.remove_tree(uuid)
            del table.row_by_uuid[uuid]
            _retire_row(table, row)
            self._boot_ids.pop(uuid, None)
            return True

    def seen(self, host, now):
        """A sign of life of ``host`` from outside its reports (Nova's
        instance-info casts): a host on a lease (the REST API made it,
        see HostTable.lease) is heard from at ``now``.

        :returns: ``(uuid, persisted_at)`` of that host, or None (no such
            host, or one an agent reports)
        """
        with self._lock:
            table = self.table
            for row in table.rows_by_host.get(host, ()):
                if table.lease[row] and table.kind[row] >= 0:
                    table.last_seen[row] = max(table.last_seen[row], now)
                    return table.uuids[row], float(table.persisted_at[row])
            return None

    def mark_persisted(self, uuid, at):
        """The database holds ``at`` as host ``uuid``'s last sign of
        life."""
        with self._lock:
            row = self.table.row_by_uuid.get(uuid)
            if row is not None:
                self.table.persisted_at[row] = at

    def gone_hosts(self, stored):
        """The compute nodes held that ``stored`` (``{provider uuid:
        (generation, usage)}`` of every provider, as the usage sync reads
        it) does not have: deleted through the REST API."""
        table = self.table
        compute = table.kinds_index.get(table_mod.COMPUTE)
        return [uuid for uuid, row in list(table.row_by_uuid.items())
                if table.kind[row] == compute and uuid not in stored]

    def _refresh_sharing(self, table):
        pools = [p for p in map(table.providers.get, list(self._standalone))
                 if p is not None and p.sharing]
        sharing = frozenset().union(*(p.aggregates for p in pools))
        for uuid in sorted(sharing - set(table.aggregates_index.names)):
            table.aggregates_index.add(uuid)
        table.sharing_aggregates = sharing
        table.sharing_providers = tuple(sorted(p.uuid for p in pools))
        self.table = table

    # -- reading ----------------------------------------------------------

    def view(self, service_down_time):
        """A :class:`~.host_view.HostView` of the hosts now held, for one
        request (hosts not heard from for ``service_down_time`` seconds
        are down)."""
        return host_view.HostView(self.table, self._clock(),
                                  service_down_time)

    @contextlib.contextmanager
    def reserved(self, provider_uuid, resources):
        """Mark a claim this worker is making, for the ``with`` block:
        this worker's other requests see ``resources`` taken on the host
        of ``provider_uuid`` until the block ends, whether the claim
        committed (publish its usage inside the block: never a moment in
        which neither counts) or failed.

        Yields the table the mark went into: a view of another table (the
        cache grew meanwhile) does not show it, and must count the claim
        itself.
        """
        mark = self.reserve(provider_uuid, resources)
        try:
            yield mark.table
        finally:
            self.unreserve(mark)

    def reserve(self, provider_uuid, resources):
        """Mark a claim this worker is making; returns the
        :class:`Reservation` that :meth:`unreserve` takes. Prefer
        :meth:`reserved`, which cannot leave a mark behind."""
        with self._lock:
            self._mark(self.table, provider_uuid, resources, 1)
            return Reservation(self.table, provider_uuid, resources)

    def unreserve(self, token):
        """Drop a mark, from its table and from any bigger table that was
        copied from it meanwhile (views may still read either)."""
        with self._lock:
            self._mark(token.table, token.provider_uuid, token.resources,
                       -1)
            if self.table is not token.table:
                self._mark(self.table, token.provider_uuid,
                           token.resources, -1)

    @staticmethod
    def _mark(table, provider_uuid, resources, sign):
        row = table.row_by_uuid.get(provider_uuid)
        if row is None:
            return
        for rc, amount in resources.items():
            col = table.resource_classes.get(rc)
            if col is not None and col < table.pending.shape[1]:
                table.pending[row, col] += sign * amount
        # NOTE: counted after the amounts are written: a reader that sees
        # no mark then reads a moment before the claim, never half of it
        table.marks += sign

    def report_ages(self):
        """``oldest_report_s`` and ``min_report_sequence`` over all hosts."""
        table = self.table
        n = table.n
        if not n:
            return {"oldest_report_s": None, "min_report_sequence": None}
        return {
            "oldest_report_s": float(self._clock()
                                     - table.last_seen[:n].min()),
            "min_report_sequence": int(table.report_sequence[:n].min())}

    def hosts_outside(self, topology):
        """``[(host, reported Location)]`` of the rows whose reported
        location names a level ``topology`` does not have."""
        table = self.table
        found = []
        for row in range(table.n):
            text = table.reported_locations[row]
            if text:
                location = topology_mod.Location.parse(text)
                if topology.unknown_levels(location):
                    found.append((table.hosts[row], location))
        return found

    def host_states(self, service_down_time, hosts=None, kinds=None,
                    vacancy_kinds=()):
        """HostState objects of the providers held (not those deleted).

        :param hosts: names or uuids to keep (None: all)
        :param kinds: kinds to keep (None: all)
        :param vacancy_kinds: kinds whose empty providers are vacant
        """
        table = self.table
        now = self._clock()
        rows = [r for r in range(table.n) if table.kind[r] >= 0 and (
            kinds is None or table.kind_of(r) in kinds)]
        if hosts:
            wanted = set(hosts)
            # by name: the rows the name finds (not retired ones)
            named = {r for h in wanted for r in table.rows_by_host.get(h, ())}
            rows = [r for r in rows if r in named
                    or table.uuids[r] in wanted]
        return [table.host_state(r, now, service_down_time, vacancy_kinds)
                for r in rows]

    def vacant(self, provider_uuid, vacancy_kinds):
        """``(kind, generation, name, service, instance uuid)`` of a
        provider of a kind in ``vacancy_kinds`` on which nothing is
        allocated, or None."""
        table = self.table
        row = table.row_by_uuid.get(provider_uuid)
        if row is None or table.kind_of(row) not in vacancy_kinds:
            return None
        width = table.used.shape[1]
        if table.used[row, :width].any():
            return None
        return (table.kind_of(row), int(table.generation[row]),
                table.nodenames[row], table.services[row],
                table.instance_links[row])

    def now(self):
        return self._clock()


def _retire_row(table, row):
    """A row no request considers and no operator listing shows: its
    provider is gone, or no longer what the row was (the lock is held)."""
    table.kind[row] = table_mod.NO_KIND
    table.instance_link[row] = -1
    table.disabled[row] = True
    table.has_inventory[row] = False
    rows_of_name = table.rows_by_host.get(table.hosts[row], [])
    if row in rows_of_name:
        rows_of_name.remove(row)
