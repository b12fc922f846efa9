"""``GET /resource_providers``'s filters in SQL against a plain-Python
reference.

:func:`reference` is written here from the specification (Placement's
listing; :mod:`gantt.db.provider_filter`'s docstring) over the random
world the test itself inserted, reading nothing back from the database:
it is what the row-by-row Python filter of ``providers.find`` used to
compute. Hypothesis draws small worlds (trees, traits, aggregates,
inventories with every capacity field, allocations) and filters of every
kind together, and :func:`providers.find` must give the same providers
in the same order on SQLite, MariaDB and PostgreSQL.
"""

import dataclasses
import datetime
import uuid as uuidlib

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from gantt.db import models
from gantt.db import providers
from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import INV
from gantt.db.models import RP
from gantt.db.models import TRAITS

CLASSES = ("VCPU", "MEMORY_MB", "CUSTOM_X")
TRAIT_NAMES = ("CUSTOM_A", "CUSTOM_B", "CUSTOM_C", "CUSTOM_D")
AGG_UUIDS = tuple(str(uuidlib.UUID(int=n + 1)) for n in range(4))
RATIOS = (0.5, 0.7, 1.0, 1.1, 1.5, 16.0)
NOWHERE = str(uuidlib.UUID(int=999))
NOW = datetime.datetime(2024, 1, 1)


@dataclasses.dataclass
class Provider:
    name: str
    uuid: str
    parent: int | None        # index of an earlier provider
    traits: frozenset
    aggregates: frozenset
    inventories: dict         # {class: {field: value}}
    used: dict                # {class: [amounts allocated]}


_INVENTORY = st.fixed_dictionaries({
    "total": st.integers(0, 24), "reserved": st.integers(0, 4),
    "min_unit": st.integers(1, 3), "max_unit": st.integers(1, 24),
    "step_size": st.sampled_from([1, 1, 2, 3]),
    "allocation_ratio": st.sampled_from(RATIOS)})


@st.composite
def worlds(draw, classes=CLASSES):
    count = draw(st.integers(1, 6))
    return [Provider(
        name="rp%d" % i, uuid=str(uuidlib.UUID(int=100 + i)),
        parent=draw(st.none() | st.integers(0, i - 1)) if i else None,
        traits=draw(st.frozensets(st.sampled_from(TRAIT_NAMES))),
        aggregates=draw(st.frozensets(st.sampled_from(AGG_UUIDS))),
        inventories=draw(st.dictionaries(st.sampled_from(classes),
                                         _INVENTORY, min_size=1)),
        used=draw(st.dictionaries(st.sampled_from(classes), st.lists(
            st.integers(1, 8), max_size=2))))
        for i in range(count)]


def _any_of(values):
    return st.lists(st.frozensets(st.sampled_from(values), min_size=1),
                    max_size=2).map(tuple)


def _kinds(world):
    """A strategy of each filter's value, by :class:`Filters` field."""
    uuids = [p.uuid for p in world] + [NOWHERE]
    return {
        "name": st.sampled_from([p.name for p in world] + ["x"]),
        "uuid": st.sampled_from(uuids),
        "in_tree": st.sampled_from(uuids),
        "member_of": _any_of(AGG_UUIDS + (NOWHERE,)),
        "forbidden_aggregates": st.frozensets(st.sampled_from(AGG_UUIDS)),
        "required": _any_of(TRAIT_NAMES),
        "forbidden_traits": st.frozensets(st.sampled_from(TRAIT_NAMES)),
        "resources": st.dictionaries(st.sampled_from(CLASSES), st.integers(
            1, 6) | st.sampled_from([12, 24, 2 ** 31, 2 ** 70]),
            min_size=1, max_size=2)}


@st.composite
def _filters(draw, world):
    """Up to three filters together (more would pass nothing), half the
    time ``resources`` among them."""
    kinds = _kinds(world)
    chosen = draw(st.sets(st.sampled_from(sorted(kinds)), max_size=2))
    if draw(st.booleans()):
        chosen.add("resources")
    return providers.Filters(**{k: draw(kinds[k]) for k in chosen})


@st.composite
def cases(draw):
    world = draw(worlds())
    return world, draw(_filters(world))


@st.composite
def capacity_cases(draw):
    """Every provider offers VCPU: the capacity's bounds, one class."""
    world = draw(worlds(classes=("VCPU",)))
    amount = draw(st.integers(1, 12))
    return world, providers.Filters(resources={"VCPU": amount})


# -- the reference ----------------------------------------------------------

def root_of(world, i):
    while world[i].parent is not None:
        i = world[i].parent
    return i


def fits(provider, rc, amount):
    inv = provider.inventories.get(rc)
    if inv is None:
        return False
    capacity = (inv["total"] - inv["reserved"]) * inv["allocation_ratio"]
    return (inv["min_unit"] <= amount <= inv["max_unit"] and
            amount % inv["step_size"] == 0 and
            sum(provider.used.get(rc, ())) + amount <= capacity)


def passes(world, i, f):
    p = world[i]
    by_uuid = {q.uuid: n for n, q in enumerate(world)}
    return ((f.name is None or p.name == f.name) and
            (f.uuid is None or p.uuid == f.uuid) and
            (f.in_tree is None or (f.in_tree in by_uuid and root_of(
                world, by_uuid[f.in_tree]) == root_of(world, i))) and
            all(s & p.traits for s in f.required) and
            not (f.forbidden_traits & p.traits) and
            all(s & p.aggregates for s in f.member_of) and
            not (f.forbidden_aggregates & p.aggregates) and
            all(fits(p, rc, n) for rc, n in f.resources.items()))


def reference(world, f):
    """The names of the providers of ``world`` passing ``f``, in the
    order they were created."""
    return [p.name for i, p in enumerate(world) if passes(world, i, f)]


# -- the database -----------------------------------------------------------

def store(db, world):
    """Empty ``db``, then insert ``world``."""
    with db.begin() as conn:
        for table in reversed(models.Base.metadata.sorted_tables):
            conn.execute(table.delete())
        ids = []
        for p in world:
            ids.append(_insert(conn, p, ids))


def _insert(conn, p, ids):
    parent = ids[p.parent] if p.parent is not None else None
    root = (conn.execute(RP.select().where(RP.c.id == parent)).one()
            .root_provider_id if parent else None)
    rp_id = conn.execute(RP.insert().values(
        uuid=p.uuid, name=p.name, generation=0, created_at=NOW,
        parent_provider_id=parent, root_provider_id=root)
    ).inserted_primary_key[0]
    if root is None:
        conn.execute(RP.update().where(RP.c.id == rp_id).values(
            root_provider_id=rp_id))
    _contents(conn, rp_id, p)
    return rp_id


def _contents(conn, rp_id, p):
    rows = {TRAITS: [{"trait": t} for t in p.traits],
            AGGS: [{"aggregate_uuid": a} for a in p.aggregates],
            INV: [dict(fields, resource_class=rc)
                  for rc, fields in p.inventories.items()],
            ALLOC: [{"resource_class": rc, "used": n, "created_at": NOW,
                     "consumer_uuid": str(uuidlib.uuid4())}
                    for rc, amounts in p.used.items() for n in amounts]}
    for table, values in rows.items():
        if values:
            conn.execute(table.insert(), [
                dict(v, resource_provider_id=rp_id) for v in values])


def listed(db, f):
    with db.begin() as conn:
        return [r.name for r in providers.find(conn, f)]


def check(db, world, f):
    store(db, world)
    assert listed(db, f) == reference(world, f)


_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(max_examples=150, **_SETTINGS)
@given(case=cases() | capacity_cases())
def test_sql_equals_the_reference_on_sqlite(sqlite_db, case):
    check(sqlite_db, *case)


@settings(max_examples=25, **_SETTINGS)
@given(case=cases() | capacity_cases())
def test_sql_equals_the_reference_on_servers(server_db, case):
    check(server_db, *case)


def _one(db, ratio, used=0, **fields):
    inventory = dict(dict(total=10, reserved=0, min_unit=1, max_unit=10,
                          step_size=1), allocation_ratio=ratio, **fields)
    store(db, [Provider("rp0", str(uuidlib.UUID(int=100)), None,
                        frozenset(), frozenset(), {"VCPU": inventory},
                        {"VCPU": [used]} if used else {})])


def test_a_ratio_a_float_cannot_hold_fits_as_its_decimal(any_db):
    """10 x 0.7 is 7 (as Python, the cache and GET /inventories read the
    ratio), not 6.99999988 (MariaDB's FLOAT times 10)."""
    _one(any_db, 0.7)
    assert listed(any_db, providers.Filters(resources={"VCPU": 7})) == [
        "rp0"]
    assert listed(any_db, providers.Filters(resources={"VCPU": 8})) == []


def test_a_fraction_of_one_unit_holds_none(any_db):
    """1 x 0.7 is 0.7: one VCPU does not fit (MariaDB multiplied an
    integer by the ratio's text as integers once, 1 x '0.7' = 1)."""
    _one(any_db, 0.7, total=1, max_unit=1)
    assert listed(any_db, providers.Filters(resources={"VCPU": 1})) == []


@pytest.mark.parametrize("amount, listed_", [
    (2, ["rp0"]), (3, []), (8, ["rp0"]), (10, []), (12, []),
    (2 ** 70, [])])
def test_step_max_unit_and_usage_bound_an_amount(any_db, amount, listed_):
    """(10 - 2) x 1.5 = 12, 3 used: 8 fits, 10 does not; steps of 2."""
    _one(any_db, 1.5, used=3, step_size=2, max_unit=10, reserved=2)
    assert listed(any_db, providers.Filters(
        resources={"VCPU": amount})) == listed_
