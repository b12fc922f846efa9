"""``GET /resource_providers``'s filters as one SQL condition.

:func:`where` turns :class:`Filters` into one boolean clause over the
provider table ``RP``: the listing is one statement, whatever the filters
and however many providers there are. A provider passes when:

* ``name`` / ``uuid``: it has that name / uuid;
* ``in_tree``: its ``root_provider_id`` is the root of the provider with
  that uuid (none when there is no such provider);
* ``required`` (any-of sets of traits, ANDed; ``T`` and ``in:A,B``): it
  has at least one trait of each set;
* ``forbidden_traits`` (``!T``): it has none of them;
* ``member_of`` (any-of sets of aggregates, ANDed; ``A`` and ``in:A,B``):
  it is directly in at least one aggregate of each set (no tree, no
  sharing: as Placement's listing);
* ``forbidden_aggregates`` (``!A``, ``!in:A,B``): it is in none of them;
* ``resources`` (``{class: amount}``): for each class it has an
  inventory with ``min_unit <= amount <= max_unit``, ``amount %
  step_size == 0`` and ``used + amount <= (total - reserved) *
  allocation_ratio``, ``used`` the sum of that class's allocations on it
  (0 without any). Placement's ``_capacity_check_clause``, term for term.

Every condition is a correlated ``EXISTS`` on the primary key or unique
index of the table it reads (``provider_traits``,
``provider_aggregates``, ``inventories``; the usage sum reads
``allocations_rp_rc_used_idx`` alone), so each costs an index probe per
provider.

The capacity is computed in the database, in double precision on every
engine. MariaDB stores ``allocation_ratio`` (``sa.Float``) as a 4-byte
FLOAT and would multiply by its binary value (0.7 as 0.699999988...),
while the value the driver hands Python, and so everything else in Gantt
(the scheduler's cache, ``GET /inventories``), is its shortest decimal
(0.7): on MariaDB the ratio is read as ``CAST(CAST(allocation_ratio AS
CHAR) AS DOUBLE)``, which is that decimal as a double (the string alone
would make MariaDB multiply in integers), so that a listing and a claim
agree on what fits.
(Placement on MariaDB multiplies by the binary value; on SQLite and
PostgreSQL, where the column is a double, all three agree.)

An amount no BIGINT holds fits nowhere (``max_unit`` is a BIGINT): the
clause is false rather than a parameter the driver would refuse.
"""

import dataclasses

import sqlalchemy as sa

from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import RP
from gantt.db.models import TRAITS

#: the largest BIGINT (``max_unit``'s type)
MAX_BIGINT = 2 ** 63 - 1

_TREE = RP.alias("tree")


@dataclasses.dataclass(frozen=True)
class Filters:
    """``GET /resource_providers``'s filters (empty: no filter)."""

    name: str | None = None
    uuid: str | None = None
    in_tree: str | None = None
    member_of: tuple = ()          # any-of sets, ANDed
    forbidden_aggregates: frozenset = frozenset()
    required: tuple = ()           # any-of trait sets, ANDed
    forbidden_traits: frozenset = frozenset()
    resources: dict = dataclasses.field(default_factory=dict)


def where(filters, dialect="sqlite"):
    """The clause a provider of ``RP`` passes ``filters`` by, on
    ``dialect`` (a SQLAlchemy dialect name)."""
    return sa.and_(sa.true(), *_identity(filters), *_sets(filters),
                   *(_fits(rc, amount, dialect)
                     for rc, amount in sorted(filters.resources.items())))


def _identity(filters):
    if filters.name is not None:
        yield RP.c.name == filters.name
    if filters.uuid is not None:
        yield RP.c.uuid == filters.uuid
    if filters.in_tree is not None:
        yield RP.c.root_provider_id == (
            sa.select(sa.func.coalesce(_TREE.c.root_provider_id,
                                       _TREE.c.id))
            .where(_TREE.c.uuid == filters.in_tree).scalar_subquery())


def _sets(filters):
    for table, column, any_ofs, none_of in (
            (TRAITS, "trait", filters.required, filters.forbidden_traits),
            (AGGS, "aggregate_uuid", filters.member_of,
             filters.forbidden_aggregates)):
        for any_of in any_ofs:
            yield _has_one_of(table, column, any_of)
        if none_of:
            yield ~_has_one_of(table, column, none_of)


def _has_one_of(table, column, values):
    return sa.exists().where(table.c.resource_provider_id == RP.c.id).where(
        table.c[column].in_(sorted(values)))


def _fits(rc, amount, dialect):
    if amount > MAX_BIGINT:
        return sa.false()
    amount = sa.literal(amount, sa.BigInteger)
    return sa.exists().where(
        INV.c.resource_provider_id == RP.c.id,
        INV.c.resource_class == rc,
        INV.c.min_unit <= amount, INV.c.max_unit >= amount,
        amount % INV.c.step_size == 0,
        _used() + amount <= (INV.c.total - INV.c.reserved) *
        _ratio(dialect))


def _used():
    """The inventory's usage (correlated on ``INV``: a subquery two levels
    down would not correlate ``RP``)."""
    return sa.func.coalesce(
        sa.select(sa.func.sum(ALLOC.c.used))
        .where(ALLOC.c.resource_provider_id == INV.c.resource_provider_id,
               ALLOC.c.resource_class == INV.c.resource_class)
        .scalar_subquery(), 0)


def _ratio(dialect):
    ratio = INV.c.allocation_ratio
    if dialect not in ("mysql", "mariadb"):
        return ratio
    # the decimal, as a double: a string operand would make MariaDB
    # multiply in integers (1 * '0.7' is 1)
    return sa.cast(sa.cast(ratio, sa.String), sa.Double())
