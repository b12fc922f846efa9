"""Which of the weighed hosts is claimed: host_subset_size and ties."""

import collections
import random

import pytest

from gantt import scheduler as scheduler_mod
from gantt.tests import factories

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")

TRIES = 40


@pytest.fixture
def picker(conf, scheduler):
    """The shared scheduler's database, with a seeded random source."""
    fresh = scheduler_mod.build(conf, scheduler.stats.db,
                                         rng=random.Random(7))
    fresh.stats.load_cache()
    return fresh


def _sized(scheduler, name, size):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        name, vcpus=4 * size, memory_mb=4096 * size, disk_gb=100 * size))


def _chosen(scheduler, tries=TRIES):
    """How often each host is claimed, each claim released before the
    next (so that every pick sees the same weights)."""
    counts = collections.Counter()
    for consumer in factories.uuids(tries):
        [sels] = scheduler.placer.select_destinations(
            factories.request(factories.flavor(vcpus=1, memory_mb=512,
                                               root_gb=1)), [consumer])
        counts[sels[0].service_host] += 1
        scheduler.claims.release(consumer)
    return counts


def test_host_subset_size_picks_at_random_among_the_best(conf, picker):
    for size in range(1, 6):
        _sized(picker, "h%d" % size, size)
    conf.set_override("host_subset_size", 3, "filter_scheduler")
    # the three biggest, each often; never the two smallest
    counts = _chosen(picker)
    assert set(counts) == {"h5", "h4", "h3"}
    assert min(counts.values()) >= TRIES // 10


def test_a_subset_larger_than_the_fleet_takes_any_host(conf, picker):
    for size in range(1, 4):
        _sized(picker, "h%d" % size, size)
    conf.set_override("host_subset_size", 10, "filter_scheduler")
    assert set(_chosen(picker)) == {"h1", "h2", "h3"}


def test_host_subset_size_one_takes_the_best(conf, picker):
    for size in range(1, 4):
        _sized(picker, "h%d" % size, size)
    assert set(_chosen(picker, tries=5)) == {"h3"}


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("subset", [1, 2])
def test_equal_best_hosts_are_all_used(conf, picker, shuffle, subset):
    # four identical best hosts and a smaller one: ties are broken at
    # random (with or without shuffle_best_same_weighed_hosts), so every
    # worker does not race for the first
    for name in ("t1", "t2", "t3", "t4"):
        _sized(picker, name, 4)
    _sized(picker, "small", 1)
    conf.set_override("shuffle_best_same_weighed_hosts", shuffle,
                      "filter_scheduler")
    conf.set_override("host_subset_size", subset, "filter_scheduler")
    assert set(_chosen(picker)) == {"t1", "t2", "t3", "t4"}


def test_shuffle_takes_the_ties_even_when_fewer_than_the_subset(conf, picker):
    # two tied best hosts, a subset of 3: the third best is in the subset
    for name in ("t1", "t2"):
        _sized(picker, name, 4)
    _sized(picker, "third", 2)
    _sized(picker, "small", 1)
    conf.set_override("shuffle_best_same_weighed_hosts", True,
                      "filter_scheduler")
    conf.set_override("host_subset_size", 3, "filter_scheduler")
    assert set(_chosen(picker)) == {"t1", "t2", "third"}
