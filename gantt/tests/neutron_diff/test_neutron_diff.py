"""Gantt against the real Neutron agent schedulers, on generated agents.

Each seeded case is a set of agents (a router or network count each, a
zone each) and a request; the real Neutron classes answer in their own
virtualenv (``neutron_side.py``, run by ``$GANTT_NEUTRON_PYTHON``), Gantt
answers from a worker Scheduler on SQLite holding the agents as providers
of kind ``network`` offering ``CUSTOM_L3_ROUTER`` (``CUSTOM_DHCP_NETWORK``)
with their routers claimed, and scheduling them with the network profile
of ``doc/examples/services.conf``. Run with ``tools/neutron_diff.sh``.

What must agree: the router (network) counts of the agents chosen, as a
multiset. Which of several equally loaded agents is chosen may differ
(Neutron takes the database's order, Gantt its picking rule): the
deviation table in ``doc/source/admin/networks.rst`` lists this and the
others, and cases that fall under one are generated and asserted as the
table says: an HA router over several zone hints takes as many agents
in each zone as Neutron's ``AZLeastRoutersScheduler`` does, and the same
loads, except that when the bindings do not fill a last round of the
zones, Gantt gives the extra bindings to the least loaded agents of the
round where Neutron follows its zone order (never more loaded in sum).
"""

import collections
import json
import os
import random
import subprocess

import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.scheduler.pipeline import zones as zones_mod
from gantt.tests import factories
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.scheduler import agents as agents_mod

PYTHON = os.environ.get("GANTT_NEUTRON_PYTHON")
SIDE = os.path.join(os.path.dirname(__file__), "neutron_side.py")
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
CASES = 120

pytestmark = pytest.mark.skipif(
    not PYTHON, reason="run from tools/neutron_diff.sh (needs neutron)")


def make_case(seed):
    """Plain data: agents with loads and zones, and what is asked."""
    gen = random.Random(seed)
    kind = gen.choice(["l3", "l3", "dhcp"])
    zones = ["az%d" % i for i in range(gen.randint(1, 3))]
    agents = [{"name": "agent-%02d" % i, "load": gen.randint(0, 6),
               "zone": gen.choice(zones)}
              for i in range(gen.randint(1, 9))]
    ha = kind == "dhcp" or gen.random() < 0.5
    n = gen.randint(2, 3) if ha else 1
    hints = []
    if kind == "l3" and gen.random() < 0.6:
        # one zone, or several (Gantt's scheduler hint
        # availability_zone_hints)
        hints = gen.sample(zones, gen.randint(1, len(zones)))
    return {"seed": seed, "kind": kind, "agents": agents, "ha": ha, "n": n,
            "az_hints": hints}


def neutron_answers(cases):
    out = subprocess.run([PYTHON, SIDE], input=json.dumps(cases),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def answers():
    cases = [make_case(seed) for seed in range(CASES)]
    return dict(zip(range(CASES), neutron_answers(cases), strict=True))


def gantt_answer(case):
    """The agents Gantt claims for the case's request."""
    conf_fx = gantt_fixtures.Conf()
    db_fx = gantt_fixtures.Database("sqlite")
    conf_fx.setUp()
    db_fx.setUp()
    try:
        conf = conf_fx.conf
        conf.set_override("connection", db_fx.db.url, "database")
        scheduler = scheduler_mod.build(agents_mod.network_conf(conf),
                                        db_fx.db)
        scheduler.stats.load_cache()
        rc = agents_mod.ROUTER if case["kind"] == "l3" else agents_mod.DHCP
        for a in case["agents"]:
            scheduler.stats.update_provider(agents_mod.agent(
                a["name"], resource_class=rc, zone=a["zone"]))
            for _ in range(a["load"]):
                scheduler.claims.claimer.claim(factories.uuids(1)[0], {
                    factories.host_uuid(a["name"]): {rc: 1}})
        scheduler.stats.load_cache()
        hints = case["az_hints"]
        allowed = [a for a in case["agents"]
                   if not hints or a["zone"] in hints]
        # as Neutron, no more agents than there are candidates
        count = min(case["n"], len(allowed)) if case["ha"] else 1
        if not count:
            return []
        several = len(hints) > 1
        spec = agents_mod.unit_spec(
            rc, zone=hints[0] if len(hints) == 1 else None,
            hints={zones_mod.HINT: hints} if several else None,
            group=GROUP if case["ha"] else None, num_instances=count)
        try:
            result = scheduler.placer.select_destinations(
                spec, factories.uuids(count))
        except exception.NoValidHost:
            return []
        return [sels[0].service_host for sels in result]
    finally:
        db_fx.cleanUp()
        conf_fx.cleanUp()


def _loads(case, names):
    load = {a["name"]: a["load"] for a in case["agents"]}
    return sorted(load[n] for n in names)


def _per_zone(case, names):
    zone = {a["name"]: a["zone"] for a in case["agents"]}
    return sorted(collections.Counter(zone[n] for n in names).values())


def _last_round_partial(case, names):
    """Whether the bindings leave a last round of the zones unfilled
    (some zone with agents left got one binding fewer than another)."""
    zones = collections.Counter(a["zone"] for a in case["agents"]
                                if a["zone"] in case["az_hints"])
    taken = collections.Counter(
        a["zone"] for a in case["agents"] if a["name"] in names)
    return len({taken[z] for z in zones if taken[z] < zones[z]}
               | {max(taken.values())}) > 1


@pytest.mark.parametrize("seed", range(CASES))
def test_gantt_chooses_agents_as_loaded_as_neutrons(answers, seed):
    case = make_case(seed)
    theirs = answers[seed]
    ours = gantt_answer(case)
    assert len(set(ours)) == len(ours), "an agent chosen twice"
    assert len(ours) == len(theirs), (case, ours, theirs)
    if case["ha"] and len(case["az_hints"]) > 1:
        # spread as evenly over the zones as Neutron's round robin
        assert _per_zone(case, ours) == _per_zone(case, theirs), (
            case, ours, theirs)
        if _last_round_partial(case, theirs):
            assert sum(_loads(case, ours)) <= sum(_loads(case, theirs))
            return
    assert _loads(case, ours) == _loads(case, theirs), (case, ours, theirs)
    hints = case["az_hints"]
    zone = {a["name"]: a["zone"] for a in case["agents"]}
    assert all(zone[n] in hints for n in ours if hints)


def test_the_cases_cover_every_scheduler():
    cases = [make_case(seed) for seed in range(CASES)]
    kinds = {(c["kind"], c["ha"], min(len(c["az_hints"]), 2))
             for c in cases}
    assert kinds == {("l3", False, 0), ("l3", False, 1), ("l3", False, 2),
                     ("l3", True, 0), ("l3", True, 1), ("l3", True, 2),
                     ("dhcp", True, 0)}
    # ties among the least loaded are common: the rule that matters
    assert any(len({a["load"] for a in c["agents"]}) < len(c["agents"])
               for c in cases)
