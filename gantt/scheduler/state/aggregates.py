"""Host aggregates and their metadata, as filters and weighers read them.

An :class:`AggregateSet` is an immutable snapshot of every aggregate the
operators defined (``set_aggregate``, stored in the database); the cache
swaps in a new one on every change. Membership itself lives in the host
table's :class:`Membership` (a host is in an aggregate when its agent
reports the aggregate's uuid or the aggregate names the host): per
aggregate the rows in it, per row its aggregates.

Metadata semantics are Nova's (``nova/scheduler/filters/utils.py``):

* :func:`values` – the raw values of one key over a host's aggregates
  (``aggregate_values_from_key``);
* :func:`metadata` – every key of a host's aggregates, each value split on
  commas and stripped (``aggregate_metadata_get_by_host``);
* :func:`min_number` – the smallest of the values as a number, or the
  default when there is none or one does not parse
  (``validate_num_values`` as the per-aggregate filters and
  ``get_weight_multiplier`` use it).

Each comes in two forms: per host (from a HostRecord) and for all rows of
a view at once, where a rule is evaluated once per aggregate and spread
over the rows of its members.
"""

import collections
import dataclasses
import math

import numpy as np

from gantt import exception
from gantt.scheduler.state import columns as columns_mod


@dataclasses.dataclass(frozen=True)
class AggregateInfo:
    uuid: str
    name: str
    hosts: frozenset
    metadata: dict


class AggregateSet:
    """Every aggregate, by uuid, and the indexes filters need."""

    def __init__(self, aggregates=()):
        self.by_uuid = {}
        self.by_key = collections.defaultdict(list)
        self.by_host = collections.defaultdict(set)
        for agg in aggregates:
            info = AggregateInfo(agg.uuid, agg.name, frozenset(agg.hosts),
                                 dict(agg.metadata))
            self.by_uuid[info.uuid] = info
            for key, value in info.metadata.items():
                self.by_key[key].append((info.uuid, value))
            for host in info.hosts:
                self.by_host[host].add(info.uuid)
        self.by_key = dict(self.by_key)
        self.by_host = {h: frozenset(u) for h, u in self.by_host.items()}

    def __len__(self):
        return len(self.by_uuid)

    def listed_for(self, host):
        """The aggregates that name ``host`` in their host list."""
        return self.by_host.get(host, frozenset())

    def keys(self):
        return self.by_key.keys()

    def with_key(self, key):
        """``[(aggregate uuid, raw value)]`` of the aggregates with ``key``."""
        return self.by_key.get(key, ())


EMPTY = AggregateSet()


# -- membership ---------------------------------------------------------------

_NO_ROWS = np.zeros(0, dtype=np.int32)
_NO_AGGREGATES = frozenset()
#: an aggregate holding at least 1/_DENSE_SHARE of the rows keeps a dense
#: boolean column: at most four times its row list, and read without work
#: (a few such columns: each takes a sixteenth of the rows' memberships)
_DENSE_SHARE = 16
# derived columns a Membership keeps (a few per weigher and filter)
_DERIVED_KEPT = 64


class Membership:
    """Which rows are in which aggregate, kept sparse.

    A cloud has thousands of aggregates (racks) of a few dozen hosts each:
    a ``rows x aggregates`` boolean matrix would be mostly zeros (512 MiB at
    100k hosts and 4 096 columns). Instead each aggregate column holds the
    sorted rows in it (an int32 array, replaced and never changed in
    place), or a dense boolean column once the aggregate holds at least
    1/16 of the rows (an availability zone, read as often as it is big);
    each row holds the frozenset of its aggregates' uuids (equal sets are
    shared).

    Writers hold the cache's lock; readers take no lock: a column's array
    is swapped in with one list item assignment, a dense column is
    published before its row list is dropped, and readers clip rows at
    their view's ``n``.

    :param rows: row capacity
    :param index: the table's aggregate KeyIndex (uuid -> column)
    """

    def __init__(self, rows, index):
        self.index = index
        self.by_row = [_NO_AGGREGATES] * rows
        self._rows = []        # column -> sorted row array, None if dense
        self._dense = {}       # column -> bool array of ``rows``
        self._sets = {}        # equal member sets, held once
        # bumped after every change; columns derived from memberships
        # alone are kept against it (see derived())
        self.version = 0
        self._derived = {}

    def add_rows(self, start, codes, sets):
        """Rows ``start + i`` (in no aggregate yet, after every row in
        one) are in ``sets[codes[i]]`` (frozensets of uuids; those of the
        sets used in the index; equal sets should be one)."""
        shared = self._sets
        sets = [shared.setdefault(m, m) for m in sets]
        self.by_row[start:start + len(codes)] = [
            sets[c] for c in codes.tolist()]
        by_name = self.index.by_name
        used = set(np.unique(codes).tolist())
        flat = [by_name[u] for k, m in enumerate(sets) if k in used
                for u in m]
        lengths = np.array([len(m) if k in used else 0
                            for k, m in enumerate(sets)], dtype=np.int64)
        rows, cols, _v = columns_mod.spread(codes, lengths, flat, flat,
                                            start)
        if not len(rows):
            return
        order = np.argsort(cols, kind="stable")
        cols, rows = cols[order], rows[order].astype(np.int32)
        edges = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1], True])
        for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(),
                          strict=True):
            col = int(cols[lo])
            held = self._column_rows(col)
            if held is None:
                self._dense[col][rows[lo:hi]] = True
            else:
                self._set_column(col, np.concatenate((held, rows[lo:hi])))
        self.version += 1

    @property
    def shape(self):
        """``(row capacity, columns)``, as the matrix this replaces."""
        return (len(self.by_row), len(self.index))

    def grown(self, rows, index):
        """A copy with ``rows`` rows (at least as many as now), using
        ``index`` (a copy of this one's)."""
        new = Membership.__new__(Membership)
        new.index = index
        new.by_row = self.by_row + [_NO_AGGREGATES] * (
            rows - len(self.by_row))
        new._rows = list(self._rows)
        new._dense = {}
        for col, dense in self._dense.items():
            column = np.zeros(rows, dtype=bool)
            column[:len(dense)] = dense
            new._dense[col] = column
        new._sets = self._sets
        new.version = self.version + 1
        new._derived = {}
        return new

    # -- writing (under the cache's lock) ----------------------------------

    def write(self, row, members):
        """Row ``row`` is in exactly the aggregates ``members`` (uuids,
        all in the index)."""
        old = self.by_row[row]
        if old == members:
            return
        index = self.index
        for uuid in old - members:
            self._remove(index.get(uuid), row)
        for uuid in members - old:
            self._add(index.get(uuid), row)
        self.by_row[row] = self._sets.setdefault(members, members)
        # NOTE: bumped after the change, never before: a reader that built
        # a column from half-written rows then kept it under the old
        # version, which no later reader accepts
        self.version += 1

    def _column_rows(self, col):
        while len(self._rows) <= col:
            self._rows.append(_NO_ROWS)
        return self._rows[col]

    def _add(self, col, row):
        rows = self._column_rows(col)
        if rows is None:
            self._dense[col][row] = True
            return
        at = np.searchsorted(rows, row)
        self._set_column(col, np.insert(rows, at, row).astype(np.int32))

    def _remove(self, col, row):
        rows = self._column_rows(col)
        if rows is None:
            self._dense[col][row] = False
            return
        at = np.searchsorted(rows, row)
        if at < len(rows) and rows[at] == row:
            self._rows[col] = np.delete(rows, at)

    def _set_column(self, col, rows):
        capacity = len(self.by_row)
        if len(rows) * _DENSE_SHARE >= capacity and len(rows):
            dense = np.zeros(capacity, dtype=bool)
            dense[rows] = True
            # NOTE: publish the dense column before dropping the rows
            self._dense[col] = dense
            self._rows[col] = None
        else:
            self._rows[col] = rows.astype(np.int32, copy=False)

    # -- reading --------------------------------------------------------------

    def derived(self, key, n, build):
        """``build()`` for rows ``[0, n)``, computed once and kept until a
        membership changes: for columns that depend on memberships and
        aggregate metadata alone (``key`` must name the metadata's
        AggregateSet), which every request would otherwise rebuild.

        The array returned is shared and read-only.
        """
        stamp = (self.version, n)
        held = self._derived.get(key)
        if held is not None and held[0] == stamp:
            return held[1]
        value = build()
        value.flags.writeable = False
        if len(self._derived) >= _DERIVED_KEPT:
            self._derived.clear()
        self._derived[key] = (stamp, value)
        return value

    def column(self, col, n):
        """Rows ``[0, n)`` in aggregate column ``col`` (a boolean array;
        it may be the table's own: do not modify it)."""
        rows = self._rows[col] if col < len(self._rows) else _NO_ROWS
        if rows is None:
            return self._dense[col][:n]
        mask = np.zeros(n, dtype=bool)
        mask[rows[:np.searchsorted(rows, n)]] = True
        return mask

    def any_of(self, cols, n):
        """Rows ``[0, n)`` in any of the columns ``cols`` (a new array)."""
        mask = np.zeros(n, dtype=bool)
        sparse = []
        for col in cols:
            rows = self._rows[col] if col < len(self._rows) else _NO_ROWS
            if rows is None:
                mask |= self._dense[col][:n]
            elif len(rows):
                sparse.append(rows[:np.searchsorted(rows, n)])
        if sparse:
            mask[np.concatenate(sparse)] = True
        return mask

    def members(self, row):
        """The uuids of the aggregates row ``row`` is in (a frozenset)."""
        return self.by_row[row]

    def __getitem__(self, key):
        """``membership[row, cols]`` (a boolean vector over the columns
        ``cols`` slices) and ``membership[rows, col]``, as the matrix this
        replaces answered them."""
        rows, cols = key
        if isinstance(rows, slice):
            stop = rows.stop if rows.stop is not None else len(self.by_row)
            return self.column(cols, stop)[rows]
        flags = np.zeros(len(self.index), dtype=bool)
        for uuid in self.by_row[rows]:
            col = self.index.get(uuid)
            if col is not None and col < len(flags):
                flags[col] = True
        return flags[cols]


def split(value):
    return {x.strip() for x in value.split(",")}


# -- per host -----------------------------------------------------------------


def values(host, key):
    """Raw values of ``key`` over the host's aggregates (a set)."""
    return {agg.metadata[key] for agg in host.aggregate_infos
            if key in agg.metadata}


def metadata(host):
    """``{key: set of comma-split values}`` over the host's aggregates."""
    out = collections.defaultdict(set)
    for agg in host.aggregate_infos:
        for key, value in agg.metadata.items():
            out[key].update(split(value))
    return out


def _number(value, cast):
    try:
        number = cast(value)
    except (TypeError, ValueError):
        return None
    # NOTE: NaN and infinities are refused: min() over them is ill-defined
    return number if math.isfinite(number) else None


def min_number(raw_values, default, cast=float):
    """Nova's ``validate_num_values(..., based_on=min)`` with its callers'
    fallback: ``default`` when empty or when any value does not parse."""
    numbers = [_number(v, cast) for v in raw_values]
    if not numbers or any(n is None for n in numbers):
        return default
    return min(numbers)


# -- all rows -----------------------------------------------------------------


def rows_in(view, uuids):
    """Rows that are in any of ``uuids`` (a new array)."""
    return view.in_any_aggregate(uuids)


def rows_with_key(view, key):
    """Rows in at least one aggregate that has ``key``."""
    return rows_in(view, [u for u, _v in view.aggregates.with_key(key)])


def rows_where(view, key, predicate):
    """Rows in at least one aggregate whose raw value of ``key`` satisfies
    ``predicate`` (evaluated once per aggregate)."""
    return rows_in(view, [u for u, v in view.aggregates.with_key(key)
                          if predicate(v)])


def rows_with_key_prefix(view, prefix, predicate=None):
    """Rows in an aggregate with a key starting with ``prefix`` (whose
    value satisfies ``predicate`` when given)."""
    uuids = set()
    for key in view.aggregates.keys():
        if key.startswith(prefix):
            uuids.update(u for u, v in view.aggregates.with_key(key)
                         if predicate is None or predicate(v))
    return rows_in(view, uuids)


def min_number_rows(view, key, default, cast=float):
    """Per row: :func:`min_number` of ``key`` over the row's aggregates
    (a shared, read-only array)."""
    return view.table.aggregates.derived(
        ("min_number", key, default, cast, view.aggregates), view.n,
        lambda: _min_number_rows(view, key, default, cast))


def _min_number_rows(view, key, default, cast):
    out = np.full(view.n, float(default))
    good, bad = [], []
    for uuid, value in view.aggregates.with_key(key):
        number = _number(value, cast)
        (bad if number is None else good).append((number, uuid))
    # largest first, so that a row in several keeps the smallest; then the
    # rows of an aggregate whose value does not parse fall back to default
    for number, uuid in sorted(good, key=lambda nu: nu[0], reverse=True):
        np.copyto(out, number, where=view.in_aggregate(uuid))
    for _none, uuid in bad:
        np.copyto(out, default, where=view.in_aggregate(uuid))
    return out


# -- operator input -----------------------------------------------------------

_MAX = 255


def validate(aggregate):
    """Check an Aggregate before it is stored.

    :raises: InvalidRequest naming the bad value
    """
    for field in ("uuid", "name"):
        if not aggregate.obj_attr_is_set(field):
            raise exception.InvalidRequest(
                reason="Aggregate.%s is required" % field)
    if not aggregate.name or len(aggregate.name) > _MAX:
        raise exception.InvalidRequest(
            reason="aggregate name must be 1 to %d characters" % _MAX)
    for host in aggregate.hosts:
        if not host or len(host) > _MAX:
            raise exception.InvalidRequest(
                reason="aggregate host names must be 1 to %d characters"
                       % _MAX)
    for key, value in aggregate.metadata.items():
        if not key or len(key) > _MAX or len(value) > _MAX:
            raise exception.InvalidRequest(
                reason="aggregate metadata %r: keys must be 1 to %d and "
                       "values at most %d characters" % (key, _MAX, _MAX))
    return aggregate
