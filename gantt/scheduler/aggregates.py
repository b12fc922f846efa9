"""Host aggregates and their metadata, as filters and weighers read them.

An :class:`AggregateSet` is an immutable snapshot of every aggregate the
operators defined (``set_aggregate``, stored in the database); the cache
swaps in a new one on every change. Membership itself lives in the host
table's boolean ``aggregates`` matrix (a host is in an aggregate when its
agent reports the aggregate's uuid or the aggregate names the host).

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
over the rows with the membership matrix.
"""

import collections
import dataclasses
import math

import numpy as np

from gantt import exception


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
    """Rows that are in any of ``uuids``."""
    mask = np.zeros(view.n, dtype=bool)
    for uuid in uuids:
        mask |= view.in_aggregate(uuid)
    return mask


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
    """Per row: :func:`min_number` of ``key`` over the row's aggregates."""
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
