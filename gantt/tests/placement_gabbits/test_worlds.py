"""Each fixture builds the world Placement's fixture of that name builds.

Both fixtures run, one after the other (Placement's on its own database,
through its own objects; Gantt's on Gantt's); both worlds are read back
as plain data and compared: providers by name with their parent,
generation, inventories, traits, aggregates (named by their members) and
usage; the consumers' allocations and generations; the custom resource
classes and traits defined; the environment variables the YAML
files read, with provider uuids as the providers' names. Uuids are drawn
anew by each fixture, so they are compared through what they name.
"""

import collections
import os

import os_resource_classes as orc
from placement import db_api as placement_db
from placement.tests.functional.fixtures import gabbits as placement_fx
import pytest
import sqlalchemy as sa

from gantt.db import names
from gantt.db.models import AGGS
from gantt.db.models import ALLOC
from gantt.db.models import CONSUMERS
from gantt.db.models import INV
from gantt.db.models import RP
from gantt.db.models import TRAITS
from gantt.tests.placement_gabbits import fixtures as gantt_fx
from gantt.tests.placement_gabbits import run

INVENTORY = ("total", "reserved", "min_unit", "max_unit", "step_size",
             "allocation_ratio")


def fixture_names():
    """Every fixture a YAML file names."""
    import yaml
    names = set()
    directory = run.gabbits_dir()
    for name in os.listdir(directory):
        with open(os.path.join(directory, name)) as f:
            names.update(yaml.safe_load(f).get("fixtures", []))
    return sorted(names)


def test_every_fixture_the_yaml_files_name_is_here():
    assert [n for n in fixture_names() if not hasattr(gantt_fx, n)] == []


#: the environment before any fixture ran
ORIGINAL_ENV = dict(os.environ)


class Rows:
    """A world's rows, as (name-keyed) plain data; a name that is drawn
    anew (a variable's value, as AllocationFixture's RP_NAME) is named by
    its variable."""

    def __init__(self, providers, inventories, traits, aggregates,
                 allocations, aliases, custom=()):
        names = {p.id: aliases.get(p.name, p.name) for p in providers}
        self.uuid_names = {p.uuid: names[p.id] for p in providers}
        self.providers = {names[p.id]: (names.get(p.parent_provider_id),
                                   p.generation) for p in providers}
        self.inventories = {(names[i[0]], i[1]): i[2:] for i in inventories}
        self.traits = {(names[rp], t) for rp, t in traits}
        members = collections.defaultdict(set)
        for rp, agg in aggregates:
            members[agg].add(names[rp])
        self.aggregates = {(names[rp], frozenset(members[agg]))
                           for rp, agg in aggregates}
        self.allocations = self._consumers(names, allocations, aliases)
        self.custom = set(custom)

        self.env = {k: self.uuid_names.get(v, aliases.get(v, v))
                    for k, v in aliases.env.items()}

    @staticmethod
    def _consumers(names, allocations, aliases):
        """A multiset of consumers, each the set of what it holds (with
        its project and user)."""
        held = collections.defaultdict(set)
        for consumer, rp, rc, used, project, user, gen in allocations:
            held[consumer].add((names[rp], rc, used,
                                aliases.get(project, project),
                                aliases.get(user, user), gen))
        return collections.Counter(frozenset(v) for v in held.values())


class Aliases(dict):
    """Each variable's value -> ``<VARIABLE>``."""

    def __init__(self, env):
        super().__init__((v, "<%s>" % k) for k, v in sorted(env.items()))
        self.env = env


def placement_rows(aliases):
    engine = placement_db.placement_context_manager.writer.get_engine()
    meta = sa.MetaData()
    meta.reflect(engine)
    t = meta.tables
    with engine.connect() as conn:
        rcs = dict(enumerate(orc.STANDARDS))
        rcs.update(conn.execute(sa.select(
            t["resource_classes"].c.id,
            t["resource_classes"].c.name)).all())
        trait_names = dict(conn.execute(
            sa.select(t["traits"].c.id, t["traits"].c.name)).all())
        inv = t["inventories"]
        inventories = [(r.resource_provider_id, rcs[r.resource_class_id])
                       + tuple(getattr(r, f) for f in INVENTORY)
                       for r in conn.execute(sa.select(inv))]
        traits = [(r.resource_provider_id, trait_names[r.trait_id])
                  for r in conn.execute(
                      sa.select(t["resource_provider_traits"]))]
        aggregates = list(conn.execute(sa.select(
            t["resource_provider_aggregates"].c.resource_provider_id,
            t["resource_provider_aggregates"].c.aggregate_id)))
        allocations = _placement_allocations(conn, t, rcs)
        providers = list(conn.execute(sa.select(t["resource_providers"])))
    custom = [n for n in list(rcs.values()) + list(trait_names.values())
              if n.startswith("CUSTOM_")]
    return Rows(providers, inventories, traits, aggregates, allocations,
                aliases, custom)


def _placement_allocations(conn, t, rcs):
    a, c = t["allocations"], t["consumers"]
    p, u = t["projects"], t["users"]
    query = (sa.select(a.c.consumer_id, a.c.resource_provider_id,
                       a.c.resource_class_id, a.c.used,
                       p.c.external_id.label("project"),
                       u.c.external_id.label("user"), c.c.generation)
             .join(c, c.c.uuid == a.c.consumer_id)
             .join(p, p.c.id == c.c.project_id)
             .join(u, u.c.id == c.c.user_id))
    return [(r.consumer_id, r.resource_provider_id,
             rcs[r.resource_class_id], r.used, r.project, r.user,
             r.generation)
            for r in conn.execute(query)]


def gantt_rows(db, aliases):
    with db.engine.connect() as conn:
        inventories = [(r.resource_provider_id, r.resource_class)
                       + tuple(getattr(r, f) for f in INVENTORY)
                       for r in conn.execute(sa.select(INV))]
        traits = list(conn.execute(sa.select(
            TRAITS.c.resource_provider_id, TRAITS.c.trait)))
        aggregates = list(conn.execute(sa.select(
            AGGS.c.resource_provider_id, AGGS.c.aggregate_uuid)))
        allocations = list(conn.execute(
            sa.select(ALLOC.c.consumer_uuid, ALLOC.c.resource_provider_id,
                      ALLOC.c.resource_class, ALLOC.c.used,
                      CONSUMERS.c.project_id, CONSUMERS.c.user_id,
                      CONSUMERS.c.generation)
            .join(CONSUMERS, CONSUMERS.c.uuid == ALLOC.c.consumer_uuid)))
        providers = list(conn.execute(sa.select(RP)))
        custom = [n.name for vocabulary in (names.CLASSES, names.TRAIT_NAMES)
                  for n in vocabulary.all(conn)
                  if n.name.startswith("CUSTOM_")]
    return Rows(providers, inventories, traits, aggregates, allocations,
                aliases, custom)


def build(fixture_cls, read):
    """Run one fixture from a clean environment; its world as
    :class:`Rows`."""
    os.environ.clear()
    os.environ.update(ORIGINAL_ENV)
    fx = fixture_cls()
    fx.start_fixture()
    try:
        return read(fx, Aliases({k: v for k, v in os.environ.items()
                                 if k not in ORIGINAL_ENV}))
    finally:
        fx.stop_fixture()


@pytest.mark.parametrize("name", fixture_names())
def test_the_world_is_placements(name):
    theirs = build(getattr(placement_fx, name),
                   lambda fx, aliases: placement_rows(aliases))
    ours = build(getattr(gantt_fx, name),
                 lambda fx, aliases: gantt_rows(fx.db, aliases))
    assert ours.env == theirs.env
    assert ours.providers == theirs.providers
    assert ours.inventories == theirs.inventories
    assert ours.traits == theirs.traits
    assert ours.aggregates == theirs.aggregates
    assert ours.allocations == theirs.allocations
    assert ours.custom == theirs.custom
