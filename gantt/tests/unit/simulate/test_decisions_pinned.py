"""The engine's decisions on a seeded churning workload, pinned.

Each run replays the same seeded stream (every flavor of the default
mix, arrivals and deletions, many refusals) on the example fleet's three
host shapes, and records the host of every placement in order. The
digests below were taken with the engine as it was before the replay was
made faster (``git show 1db9e7e``): any speed-up of the engine or of the
simulator must leave every policy's choices exactly as they were, host
for host, refusal for refusal.
"""

import hashlib

from gantt.cmd import simulate as simulate_cmd
from gantt.simulate import fleet as fleet_mod
from gantt.simulate import metrics
from gantt.simulate import replay
from gantt.simulate import workload

#: policy -> (placed, refused, sha256 of the hosts chosen, in order) on
#: 16 hosts, where a fifth of the arrivals are refused
PINNED = {
    "spread": (1251, 449, "5cd64d392eae7e3ced565c6699754bc0"
                          "27cdebb7e9aa7637aba6ec6edb5e922d"),
    "stack-ram": (1341, 359, "10697739e33bf09a4a0b058b01537fbb"
                             "327e41176c6dd213a3effb9d861e9872"),
    "stack": (1268, 432, "fee6ddbb1e3151e751e9fbee4a9d44e4"
                         "c995809da6d4c1efbac6b6682711979d"),
    "balanced": (1421, 279, "b5c81b7b3acae9ef4fc49241f985ef1e"
                            "b6720dbe7b310e388e0636a45ac0944b"),
    "balanced+stack": (1350, 350, "f8e0d454d297bc35e33509e4ccec8441"
                                  "9a50954f85ff7cb6b885bf92e407cfb8"),
    replay.FIRST_FIT: (1281, 419, "0f95325510d5e2f4bcad85d179b628df"
                                  "fd5688b088c78e3b7b73f4401ad78226"),
}
#: the same on 40 hosts, where nothing is refused (most hosts are
#: candidates: the weighers' dense path)
ROOMY = {
    "spread": (1700, 0, "45d6208d183ea2a4593c62f789bdd1d6"
                        "c510525fea4d161301a9413435e3f194"),
    "balanced+stack": (1700, 0, "37816e0c83194f31537ac3f57a56e327"
                                "e8f17790321ab0557d9a98f97295f719"),
}


def _fleet(hosts):
    """The example fleet's shapes, in its proportions, ``hosts`` in all,
    interleaved (so that ties between equal hosts are common)."""
    example = fleet_mod.load_fleet(simulate_cmd.EXAMPLE_FLEET)
    shapes = [example.shape(name) for name in example.shapes()]
    return fleet_mod.Fleet(tuple(
        fleet_mod.Host("h-%d" % i, shapes[i % len(shapes)])
        for i in range(hosts)))


def _events():
    return workload.generate(workload.Generator(
        mix=workload.DEFAULT_MIX, arrivals=1500, mean_lifetime=900.0,
        initial=200, seed=26))


def _chosen(policy, mode, hosts=16):
    fleet, events = _fleet(hosts), _events()
    with replay.database() as db:
        sched = replay.engine(replay.make_conf(policy), db, fleet, mode)
        chosen, select = [], sched.placer.select_destinations

        def recording(*args, **kwargs):
            selections = select(*args, **kwargs)
            chosen.append(selections[0][0].service_host)
            return selections

        sched.placer.select_destinations = recording
        result = replay.Replayer(fleet, sched, metrics.smallest(
            {e.flavor for e in events if e.flavor})).run(policy, mode,
                                                         events)
    digest = hashlib.sha256(",".join(chosen).encode()).hexdigest()
    return result.placed, result.refused, digest


def test_every_policy_places_as_the_engine_did_before():
    for policy, pinned in PINNED.items():
        assert _chosen(policy, "memory") == pinned, policy


def test_a_roomy_fleet_places_as_pinned_too():
    for policy, pinned in ROOMY.items():
        assert _chosen(policy, "memory", hosts=40) == pinned, policy


def test_the_sqlite_mode_places_as_pinned_too():
    assert _chosen("balanced+stack", "sqlite") == PINNED["balanced+stack"]
