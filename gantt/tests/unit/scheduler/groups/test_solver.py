"""The group solver on small fleets: where deciding the group together
places what placing it member by member cannot, and what each answer
says about itself."""

import numpy as np
import pytest

from gantt import exception
from gantt.scheduler.groups import greedy
from gantt.scheduler.groups import problem as problem_mod
from gantt.scheduler.groups import solve

Policy = problem_mod.Policy


def shape(count, vcpus, hosts, name="m"):
    return problem_mod.Shape(name, count, np.array([float(vcpus)]),
                             np.ones(hosts, dtype=bool))


def fleet(vcpus, **levels):
    return np.array([[float(v)] for v in vcpus]), {
        k: np.array(v) for k, v in levels.items()}


def test_row_affinity_that_member_by_member_placement_refuses():
    # row 0 has the roomiest host, which the first member takes; but
    # only row 1 has room for all four members on distinct hosts
    free, domains = fleet([64, 8, 8, 8, 8, 8], row=[0, 0, 1, 1, 1, 1])
    group = problem_mod.Problem(
        free, domains, (shape(4, 4, 6),),
        (Policy("row", "affinity"), Policy("host", "anti-affinity")))
    assert greedy.place(group) is None
    answer = solve.decide(group)
    assert answer.method == solve.OPTIMAL and answer.gap == 0.0
    assert sorted(answer.rows.tolist()) == [2, 3, 4, 5]


def test_rack_anti_affinity_with_mixed_shapes():
    # the small member comes first and takes the big host's rack
    free, domains = fleet([32, 8], rack=[0, 1])
    group = problem_mod.Problem(
        free, domains, (shape(1, 4, 2, "small"), shape(1, 16, 2, "large")),
        (Policy("rack", "anti-affinity"),))
    assert greedy.place(group) is None
    assert solve.decide(group).rows.tolist() == [1, 0]


def test_an_impossible_group_is_refused_with_its_levels():
    free, domains = fleet([32, 32, 32], rack=[0, 0, 1])
    group = problem_mod.Problem(free, domains, (shape(3, 4, 3),),
                                (Policy("rack", "anti-affinity"),))
    answer = solve.decide(group)
    assert not answer.placed
    assert "anti-affinity at rack" in answer.reason
    assert "proved" in answer.reason


def test_spread_keeps_the_skew():
    free, domains = fleet([64] * 6, rack=[0, 0, 0, 0, 1, 2])
    group = problem_mod.Problem(free, domains, (shape(6, 4, 6),),
                                (Policy("rack", "spread", limit=1),),
                                objective="fewest-hosts")
    per_rack = np.bincount(domains["rack"][solve.decide(group).rows])
    assert per_rack.max() - per_rack.min() <= 1


def test_a_growing_group_counts_its_held_members():
    free, domains = fleet([32, 32, 32, 32], rack=[0, 0, 1, 2])
    held = np.array([1, 0, 0, 0])
    group = problem_mod.Problem(free, domains, (shape(2, 4, 4),),
                                (Policy("rack", "anti-affinity"),),
                                fixed=held)
    assert sorted(solve.decide(group).rows.tolist()) == [2, 3]


def test_host_affinity_takes_one_host_that_fits_all():
    free, domains = fleet([8, 64, 16])
    group = problem_mod.Problem(free, domains, (shape(3, 4, 3),),
                                (Policy("host", "affinity"),),
                                objective="fewest-hosts")
    assert solve.decide(group).rows.tolist() == [2, 2, 2]


def test_fewest_hosts_packs():
    free, domains = fleet([16, 16, 16, 16])
    group = problem_mod.Problem(free, domains, (shape(4, 8, 4),), (),
                                objective="fewest-hosts")
    assert len(set(solve.decide(group).rows.tolist())) == 2


def test_alternates_are_unused_hosts_of_the_same_domains():
    free, domains = fleet([32] * 4, rack=[0, 0, 1, 1])
    group = problem_mod.Problem(free, domains, (shape(2, 4, 4),),
                                (Policy("rack", "anti-affinity"),))
    answer = solve.decide(group)
    for row, alternates in zip(answer.rows, answer.alternates, strict=True):
        assert alternates
        for alternate in alternates:
            assert domains["rack"][alternate] == domains["rack"][row]
            assert alternate not in answer.rows


def test_without_the_solver_the_answer_says_sequential():
    free, domains = fleet([32, 32])
    group = problem_mod.Problem(free, domains, (shape(2, 4, 2),), ())
    answer = solve.decide(group, use_solver=False)
    assert answer.method == solve.GREEDY and answer.gap is None


def test_soft_anti_affinity_prefers_distinct_racks():
    free, domains = fleet([64, 64, 8], rack=[0, 0, 1])
    group = problem_mod.Problem(
        free, domains, (shape(2, 4, 3),),
        (Policy("rack", "soft-anti-affinity", weight=5.0),),
        objective="fewest-hosts")
    assert sorted(domains["rack"][solve.decide(group).rows]) == [0, 1]


@pytest.mark.parametrize("policy, objective", [
    (Policy("rack", "nearby"), "most-spread"),
    (Policy("aisle", "anti-affinity"), "most-spread"),
    (Policy("rack", "max-per", limit=0), "most-spread"),
    (Policy("host", "spread"), "most-spread"),
    (Policy("rack", "affinity"), "cheapest"),
    (Policy("rack", "soft-anti-affinity", weight=-1.0), "most-spread"),
    (Policy("rack", "soft-affinity", weight=1e6), "most-spread"),
])
def test_bad_groups_are_refused_before_solving(policy, objective):
    free, domains = fleet([32], rack=[0])
    group = problem_mod.Problem(free, domains, (shape(1, 4, 1),), (policy,),
                                objective=objective)
    with pytest.raises(exception.InvalidRequest):
        solve.decide(group)
