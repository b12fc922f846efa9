"""Replays on Gantt's real engine: policies decide, deletions release,
and the memory mode decides as the SQLite one does."""

import numpy as np

from gantt.simulate import fleet as fleet_mod
from gantt.simulate import metrics
from gantt.simulate import replay
from gantt.simulate import workload

SMALL = workload.Flavor("small", 2, 4096, 20)
HUGE = workload.Flavor("huge", 4, 10 ** 7, 20)
SHAPE = fleet_mod.Shape("h", {"VCPU": (8, 0, 1.0),
                              "MEMORY_MB": (16384, 0, 1.0),
                              "DISK_GB": (100, 0, 1.0)})


def _fleet(count=3):
    return fleet_mod.Fleet(tuple(fleet_mod.Host("h-%d" % i, SHAPE)
                                 for i in range(count)))


def _creates(*flavors):
    return [workload.Event(float(i), "create", "i%d" % i, f)
            for i, f in enumerate(flavors)]


def _per_host(result):
    return result.used[:, 0].tolist()


def test_first_fit_fills_the_first_host_first():
    result = replay.replay(_fleet(), _creates(SMALL, SMALL, SMALL),
                           replay.FIRST_FIT)
    assert _per_host(result) == [6, 0, 0]


def test_spread_and_stack_policies_decide():
    spread = replay.replay(_fleet(), _creates(SMALL, SMALL, SMALL),
                           "spread")
    assert _per_host(spread) == [2, 2, 2]
    stack = replay.replay(_fleet(), _creates(SMALL, SMALL, SMALL), "stack")
    assert sorted(_per_host(stack)) == [0, 0, 6]


def test_refusals_are_counted_with_their_reason():
    events = _creates(SMALL, HUGE, SMALL, HUGE)
    result = replay.replay(_fleet(), events, "spread")
    assert (result.placed, result.refused, result.first_refusal) == (2, 2, 1)
    assert result.reasons == {"lacked MEMORY_MB": 2}
    assert result.refusal_times == (1.0, 3.0)


def test_deletes_release_the_claim_in_the_engine():
    fleet = _fleet(2)
    events = _creates(SMALL, SMALL) + [
        workload.Event(5.0, "delete", "i0", None)]
    with replay.database() as db:
        sched = replay.engine(replay.make_conf(replay.FIRST_FIT), db, fleet)
        result = replay.Replayer(fleet, sched, metrics.smallest(
            [SMALL])).run("first-fit", "sqlite", events)
        engine_used = {s.host: {r.resource_class: r.used
                                for r in s.resources}["VCPU"]
                       for s in sched.operator.get_host_states()}
    assert result.deleted == 1
    assert _per_host(result) == [2, 0]
    assert engine_used == {"h-0": 2, "h-1": 0}


def test_memory_mode_places_as_the_sqlite_mode_does():
    mix = ((SMALL, 3), (workload.Flavor("big", 4, 8192, 50), 1))
    events = workload.generate(workload.Generator(
        mix=mix, arrivals=60, mean_lifetime=8.0, initial=6, seed=3))
    runs = [replay.replay(_fleet(4), events, "balanced+stack", mode=mode)
            for mode in replay.MODES]
    assert runs[0].placed > 40 and runs[0].deleted > 20
    assert (runs[0].placed, runs[0].refused) == (runs[1].placed,
                                                 runs[1].refused)
    assert np.array_equal(runs[0].used, runs[1].used)
    assert [s.utilisation for s in runs[0].samples] == [
        s.utilisation for s in runs[1].samples]


def test_hosts_of_a_live_fleet_start_with_what_they_hold():
    fleet = fleet_mod.Fleet((fleet_mod.Host("h-0", SHAPE, {"VCPU": 7}),
                             fleet_mod.Host("h-1", SHAPE)))
    for mode in replay.MODES:
        result = replay.replay(fleet, _creates(SMALL), replay.FIRST_FIT,
                               mode=mode)
        # 1 VCPU left on h-0: first-fit must pass it over
        assert _per_host(result) == [7, 2]
