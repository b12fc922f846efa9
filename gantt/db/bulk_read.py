"""The cold load's reader: each table as a few long texts, parsed back.

A worker's start reads every table as a few long texts, one per range of
ids, instead of one row per value: a pure-Python driver (PyMySQL) spends
microseconds on every row and field, which at 100k hosts and 2.4
million rows was most of the start. Fields and records are joined with
an ASCII unit separator that no value read this way holds (uuids,
resource classes and traits are validated; details are JSON, which
escapes control characters). A free-form name (host, node, zone) could
hold one: then its range does not split into as many fields as it
should, and that range is read again as plain rows.

NOTE: each range is one ungrouped aggregate: MariaDB's GROUP_CONCAT in a
grouped query (``GROUP BY id DIV n``) is several times slower.

Clever on purpose, and measured: at 100k hosts this is what makes a
worker's start take seconds rather than tens of seconds
(``benchmarks/scale.py``). :mod:`gantt.db.host_load` runs these queries
(on two connections, each on a thread) and assembles what they return.
"""

import contextlib
import datetime

import numpy as np
import sqlalchemy as sa

from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import INVENTORY_FIELDS
from gantt.db.models import REPORTS
from gantt.db.models import RP

#: the separator of the fields and records of a range
SEP = "\x1f"
#: the separators of the items of a list, and of the fields of an item
SEP_LIST, SEP_ITEM = "\x1e", "\x1d"
#: providers per range of the host, trait and aggregate queries (a
#: host's record is half a kilobyte to a few: NUMA cells, instances)
_BATCH = 1000
#: rows per range of the inventory and allocation queries
_ROW_BATCH = 10000
#: the longest text MySQL may join (None: its max_allowed_packet, less a
#: margin); a longer one is cut, and its range read as plain rows
_CONCAT_LIMIT = None
#: fields of a host record, in order
_HOST_FIELDS = ("ids", "uuids", "generation", "hosts", "nodenames",
                "cell_uuids", "zones", "disabled", "report_sequence",
                "num_instances", "num_io_ops", "received_at",
                "agent_updated_at", "details", "instance_uuids", "locations",
                "sources")
_OPTIONAL = ("cell_uuids", "zones", "agent_updated_at", "instance_uuids",
             "locations", "sources")
_INT_FIELDS = ("ids", "generation", "disabled", "report_sequence",
               "num_instances", "num_io_ops")

_LO = sa.bindparam("lo", type_=sa.Integer)
_HI = sa.bindparam("hi", type_=sa.Integer)


def _in_range(column):
    return sa.and_(column >= _LO, column < _HI)


class Reader:
    """The ranged queries of a load, on one connection."""

    def __init__(self, conn):
        self.conn = conn
        self.dialect = conn.dialect.name

    @contextlib.contextmanager
    def long_concatenation(self):
        """MySQL cuts ``GROUP_CONCAT`` at 1 KiB by default (MariaDB at 1
        MiB): lift that, up to what a result row may hold, on this
        connection while loading."""
        if self.dialect != "mysql":
            yield
            return
        old = int(self.conn.exec_driver_sql(
            "SELECT @@SESSION.group_concat_max_len").scalar())
        # NOTE: a result row longer than max_allowed_packet would fail
        self.conn.exec_driver_sql(
            "SET SESSION group_concat_max_len = %s" % (
                _CONCAT_LIMIT or "@@SESSION.max_allowed_packet - 4096"))
        try:
            yield
        finally:
            self.conn.exec_driver_sql(
                "SET SESSION group_concat_max_len = %d" % old)

    # -- expressions -------------------------------------------------------

    def text(self, column):
        """A column as text that reads back to the driver's value."""
        if isinstance(column.type, sa.DateTime) and (
                self.dialect == "postgresql"):
            # whatever the server's DateStyle
            return sa.func.to_char(column, "YYYY-MM-DD HH24:MI:SS.US")
        if isinstance(column.type, sa.String):
            return column
        return sa.cast(column, sa.String)

    def joined(self, separator, parts):
        """``parts`` (columns or texts, none NULL) as texts, joined."""
        if self.dialect == "sqlite":
            out = self.text(parts[0])
            for part in parts[1:]:
                out = out + separator + self.text(part)
            return out
        # CONCAT_WS converts numbers (and MySQL's dates) itself, as the
        # driver would read them: cheaper than CAST on MariaDB
        return sa.func.concat_ws(separator, *(
            self.text(p) if isinstance(p.type, sa.DateTime) and (
                self.dialect == "postgresql") else p for p in parts))

    def optional(self, column):
        """'' for NULL, else '=' and the column as text."""
        return sa.func.coalesce(sa.literal("=") + self.text(column), "")

    # -- reading -------------------------------------------------------------

    def _texts(self, key, parts, source, batch=_BATCH, ranged=False):
        """The texts ``parts`` of every row of ``source`` (a table or a
        join; or, when ``ranged``, a query of the rows whose ``key`` is in
        ``[:lo, :hi)``), ``batch`` values of ``key`` per query: per range
        one text of the fields of its rows joined with ``SEP``, or the
        list of those fields when a field holds ``SEP``."""
        lo, hi = self.conn.execute(
            sa.select(sa.func.min(key), sa.func.max(key))).one()
        if lo is None:
            return []
        record = self.joined(SEP, parts)
        query = sa.select(sa.func.count(),
                          sa.func.aggregate_strings(record, SEP)
                          ).select_from(source)
        plain = sa.select(*map(self.text, parts)).select_from(source)
        if not ranged:
            query = query.where(_in_range(key))
            plain = plain.where(_in_range(key))
        chunks = []
        for start in range(lo, hi + 1, batch):
            params = {"lo": start, "hi": start + batch}
            count, text = self.conn.execute(query, params).one()
            if not count:
                continue
            if text is None or text.count(SEP) != count * len(parts) - 1:
                # a separator in a name (or a cut text): plain rows
                text = [str(value) for row in self.conn.execute(
                    plain, params) for value in row]
            chunks.append(text)
        return chunks

    def host_texts(self):
        """The fields of each host's record (see ``_HOST_FIELDS``)."""
        rp, r = RP.c, REPORTS.c
        optional = self.optional
        parts = [rp.id, rp.uuid, rp.generation, r.host, r.nodename,
                 optional(r.cell_uuid), optional(r.availability_zone),
                 sa.case((r.disabled, 1), else_=0), r.report_sequence,
                 r.num_instances, r.num_io_ops, r.received_at,
                 optional(r.agent_updated_at), r.details,
                 optional(r.instance_uuids), optional(r.location),
                 optional(r.source)]
        source = RP.join(REPORTS, REPORTS.c.resource_provider_id == RP.c.id)
        return self._texts(RP.c.id, parts, source)

    def child_rows(self):
        """Every provider that is not a tree's root."""
        return self.conn.execute(
            sa.select(RP.c.id, RP.c.uuid, RP.c.name, RP.c.generation,
                      RP.c.root_provider_id, RP.c.parent_provider_id)
            .where(RP.c.root_provider_id != RP.c.id)
            .order_by(RP.c.id)).all()

    def inventory_texts(self):
        """Per inventory row (in ranges of row ids: the rows of a range of
        providers are not contiguous) its provider id and one item text
        (the class and the inventory fields)."""
        if self.dialect == "sqlite":
            # its float to text conversions do not read back exactly
            return [[token for row in self.conn.execute(sa.select(
                INV.c.resource_provider_id, INV.c.resource_class,
                *(INV.c[k] for k in INVENTORY_FIELDS)))
                for token in (str(row[0]), SEP_ITEM.join(
                    [row[1]] + [str(v) for v in row[2:-1]]
                    + [repr(float(row[-1]))]))]]
        item = self.joined(SEP_ITEM, [INV.c.resource_class] + [
            INV.c[k] for k in INVENTORY_FIELDS])
        return self._texts(INV.c.id, [INV.c.resource_provider_id, item],
                           INV, batch=_ROW_BATCH)

    def member_texts(self, table, column):
        """Per row its provider id and its ``column`` (an aggregate)."""
        rp = table.c.resource_provider_id
        return self._texts(rp, [rp, column], table)

    def joined_texts(self, table, column):
        """Per provider its id and its values of ``column`` (traits)
        joined with SEP_LIST by the database: more work for it, least
        for this process, which parses each distinct set once (1.4
        million traits, 34k distinct sets at 100k hosts)."""
        rp = table.c.resource_provider_id
        values = sa.func.aggregate_strings(column, SEP_LIST)
        per_provider = (sa.select(rp.label("rp"), values.label("values"))
                        .where(_in_range(rp)).group_by(rp).subquery())
        return self._texts(rp, [per_provider.c.rp,
                                per_provider.c["values"]],
                           per_provider, ranged=True)

    def usage_texts(self):
        """Per allocation its provider id, class and amount."""
        parts = [ALLOC.c.resource_provider_id, ALLOC.c.resource_class,
                 ALLOC.c.used]
        return self._texts(ALLOC.c.id, parts, ALLOC, batch=_ROW_BATCH)


def _ints(texts):
    """int64 array of decimal texts."""
    if not texts:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(" ".join(texts), dtype=np.int64, sep=" ")


def _coded(texts):
    """``(codes, distinct)``: per text the index of its first equal one in
    ``distinct``."""
    seen = {}
    codes = [seen.setdefault(t, len(seen)) for t in texts]
    return np.array(codes, dtype=np.int64), list(seen)


def host_columns(tokens):
    """The host records' fields (``_HOST_FIELDS`` after each other) as
    columns in id order: int64 arrays, lists of strings (None for an
    optional field not set)."""
    stride = len(_HOST_FIELDS)
    out = {name: tokens[k::stride] for k, name in enumerate(_HOST_FIELDS)}
    ids = _ints(out["ids"])
    if len(ids) and not np.all(ids[1:] > ids[:-1]):
        order = np.argsort(ids, kind="stable").tolist()
        out = {name: [values[k] for k in order]
               for name, values in out.items()}
    for name in _INT_FIELDS:
        out[name] = _ints(out[name])
    for name in _OPTIONAL:
        out[name] = [None if v == "" else v[1:] for v in out[name]]
    out["disabled"] = out["disabled"].astype(bool)
    out["detail_codes"], out["detail_texts"] = _coded(out.pop("details"))
    texts = out["received_texts"] = out.pop("received_at")
    out["received_at"] = (np.array(texts, dtype="datetime64[us]")
                          .astype(np.int64) / 1e6) if texts else np.zeros(0)
    parse = datetime.datetime.fromisoformat
    out["agent_updated_at"] = [None if t is None else parse(t)
                               for t in out["agent_updated_at"]]
    return out


def sets(tokens):
    """``(provider ids, codes, distinct frozensets)`` of (provider id,
    value) pairs: per provider (ids ascending) the code of its set of
    values in the distinct sets, of which code 0 is the empty one."""
    ids, values = _ints(tokens[0::2]), tokens[1::2]
    names = list(dict.fromkeys(values))
    lookup = {name: k for k, name in enumerate(names)}
    codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64,
                        count=len(values))
    if len(ids) and not np.all(ids[1:] >= ids[:-1]):
        order = np.argsort(ids, kind="stable")
        ids, codes = ids[order], codes[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(
        ids) else np.zeros(0, dtype=np.int64)
    if len(names) <= _MASK_BITS:
        groups, distinct = _sets_by_mask(codes, starts, len(names))
    else:
        groups, distinct = _sets_by_tuple(codes, starts)
    sets = [frozenset()] + [frozenset(map(names.__getitem__, members))
                            for members in distinct]
    return ids[starts], groups + 1, sets


#: up to this many distinct values, a provider's set is found as a bit mask
_MASK_BITS = 128


def _sets_by_mask(codes, starts, count):
    """Per group of ``codes`` (a group from each of ``starts``) the index
    of its set among the distinct sets, and each distinct set's codes;
    found with one bit mask per group (``count`` codes at most)."""
    words = max(1, -(-count // 64))
    masks = np.zeros((len(starts), words), dtype=np.uint64)
    bits = np.left_shift(np.uint64(1), (codes & 63).astype(np.uint64))
    if len(starts):
        for word in range(words):
            if words > 1:
                word_bits = np.where(codes >> 6 == word, bits, np.uint64(0))
            else:
                word_bits = bits
            masks[:, word] = np.bitwise_or.reduceat(word_bits, starts)
    if words == 1:      # the usual case, and much quicker than axis=0
        distinct, inverse = np.unique(masks[:, 0], return_inverse=True)
        distinct = distinct.reshape(-1, 1)
    else:
        distinct, inverse = np.unique(masks, axis=0, return_inverse=True)
    flags = np.unpackbits(distinct.astype("<u8").view(np.uint8).reshape(
        len(distinct), 8 * words), axis=1, bitorder="little")
    rows, cols = np.nonzero(flags)
    bounds = np.searchsorted(rows, np.arange(len(distinct) + 1)).tolist()
    cols = cols.tolist()
    return inverse.reshape(-1), [cols[bounds[k]:bounds[k + 1]]
                                 for k in range(len(distinct))]


def _sets_by_tuple(codes, starts):
    """:func:`_sets_by_mask` for many distinct codes: a sorted tuple per
    group."""
    codes = codes.tolist()
    bounds = starts.tolist() + [len(codes)]
    seen = {}
    groups = [seen.setdefault(tuple(sorted(codes[lo:hi])), len(seen))
              for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return np.array(groups, dtype=np.int64), list(seen)


def joined_sets(tokens):
    """:func:`sets` of (provider id, its values joined with SEP_LIST)
    pairs; each distinct text is split once."""
    seen = {}
    ids = _ints(tokens[0::2])
    codes = np.fromiter((seen.setdefault(t, len(seen) + 1)
                         for t in tokens[1::2]), dtype=np.int64,
                        count=len(ids))
    if len(ids) and not np.all(ids[1:] > ids[:-1]):
        order = np.argsort(ids, kind="stable")
        ids, codes = ids[order], codes[order]
    sets = [frozenset()] + [frozenset(text.split(SEP_LIST))
                            for text in seen]
    return ids, codes, sets


def inventory_dict(items):
    """``{class: (total, reserved, min, max, step, ratio)}`` from item
    texts, sorted by class."""
    out = {}
    for item in sorted(items):
        rc, total, reserved, low, high, step, ratio = item.split(SEP_ITEM)
        out[rc] = (int(total), int(reserved), int(low), int(high),
                   int(step), float(ratio))
    return out


def usage(tokens):
    """``(provider ids, class codes, amounts, classes)``: the usage summed
    per provider and class, sorted by both."""
    names = {}
    codes = np.array([names.setdefault(rc, len(names))
                      for rc in tokens[1::3]], dtype=np.int64)
    rp_ids, amounts = _ints(tokens[0::3]), _ints(tokens[2::3])
    if len(rp_ids):
        order = np.lexsort((codes, rp_ids))
        rp_ids, codes, amounts = rp_ids[order], codes[order], amounts[order]
        starts = np.flatnonzero(np.r_[True, (rp_ids[1:] != rp_ids[:-1])
                                      | (codes[1:] != codes[:-1])])
        rp_ids, codes = rp_ids[starts], codes[starts]
        amounts = np.add.reduceat(amounts, starts)
    return rp_ids, codes, amounts, list(names)
