"""What a simulation measures, from hosts' used and allocatable amounts.

Arrays are ``hosts x classes`` (:data:`~gantt.simulate.fleet.CLASSES`
order): ``capacity`` what placement may allocate ((total - reserved) x
allocation ratio), ``used`` what instances hold.

* utilisation: each class's used share of the fleet's capacity;
* stranded capacity: free room of a class on hosts that are *full in
  another class*, i.e. that have less free of it than the smallest flavor
  of the mix asks: room no instance of the mix can use, bought for
  nothing. Shown as a share of the class's capacity. A class no flavor
  asks for (local disk when every instance boots from volume) never makes
  a host full.
"""

import typing

import numpy as np

from gantt.simulate import fleet as fleet_mod


def capacity_of(fleet):
    """``hosts x classes`` allocatable amounts of a fleet."""
    return np.array([[h.shape.capacity(rc) for rc in fleet_mod.CLASSES]
                     for h in fleet.hosts], dtype=float)


def demand(flavor):
    """A flavor's amounts as a vector."""
    return np.array([flavor.amounts.get(rc, 0) for rc in fleet_mod.CLASSES],
                    dtype=float)


def smallest(flavors):
    """Per class, the least any flavor asks for (0 where none asks)."""
    vectors = np.array([demand(f) for f in flavors])
    asked = np.where(vectors > 0, vectors, np.inf).min(axis=0)
    return np.where(np.isinf(asked), 0.0, asked)


def utilisation(used, capacity):
    """Per class, the used share of the fleet's capacity."""
    total = capacity.sum(axis=0)
    return np.divide(used.sum(axis=0), total, out=np.zeros_like(total),
                     where=total > 0)


def full(used, capacity, least):
    """``hosts x classes``: the host cannot hold the smallest ask of that
    class any more (False for classes nobody asks for)."""
    return (capacity - used < least) & (least > 0)


def stranded(used, capacity, least):
    """Per class, the free share of capacity on hosts full in another
    class."""
    free = np.maximum(capacity - used, 0.0)
    is_full = full(used, capacity, least)
    # full in some class other than this one: count how many are full,
    # less this class itself
    others = is_full.sum(axis=1, keepdims=True) - is_full > 0
    total = capacity.sum(axis=0)
    lost = np.where(others, free, 0.0).sum(axis=0)
    return np.divide(lost, total, out=np.zeros_like(total), where=total > 0)


def shape_fill(used, capacity, shape_rows):
    """``{shape: per-class used share}`` of each host shape.

    :param shape_rows: ``{shape name: row indexes}``
    """
    return {name: utilisation(used[rows], capacity[rows])
            for name, rows in shape_rows.items()}


class Sample(typing.NamedTuple):
    """The fleet at one moment of a run."""

    time: float
    alive: int
    utilisation: tuple
    stranded: tuple


def sample(time, alive, used, capacity, least):
    return Sample(time, alive, tuple(utilisation(used, capacity)),
                  tuple(stranded(used, capacity, least)))


class Steady(typing.NamedTuple):
    """Means over a run's steady state."""

    alive: float
    utilisation: tuple
    stranded: tuple


def steady(samples, start):
    """Means of the samples at or after ``start`` (the steady state)."""
    window = [s for s in samples if s.time >= start] or samples[-1:]
    return Steady(float(np.mean([s.alive for s in window])),
                  tuple(np.mean([s.utilisation for s in window], axis=0)),
                  tuple(np.mean([s.stranded for s in window], axis=0)))
