"""The most instances of a stream's prefix a fleet could hold.

Used by ``packing.py``. A stream is a list of flavors; its prefix of
length k fits a fleet when its instances can be assigned to hosts within
every host's capacity of every class. Two bounds on the longest prefix
that fits (scipy's HiGHS):

* :func:`lp_bound`: the linear relaxation, fractional instances allowed.
  Hosts of one shape are then interchangeable, so the LP has one variable
  per flavor and shape; the longest fitting prefix is found by bisection
  (fitting is monotone in k). An upper bound on any scheduler.
* :func:`milp_bound`: the exact integer problem on a small fleet (one
  integer count per flavor and host, one binary per stream position, the
  positions taken in order), time-limited: it returns the best assignment
  found (achievable) and the solver's bound (no scheduler places more).
"""

import collections
import dataclasses

import numpy as np
from scipy import optimize
from scipy import sparse

CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")


@dataclasses.dataclass(frozen=True)
class Milp:
    """A time-limited MILP's answer: ``best`` placed in a proven
    assignment, ``bound`` the most any assignment places."""

    best: int
    bound: int
    seconds: float
    optimal: bool


def _demand(flavor):
    return np.array([flavor.amounts.get(rc, 0) for rc in CLASSES], float)


def _fits(shapes, counts):
    """Whether ``counts`` ({flavor: n}) fit fractionally in ``shapes``
    (``[(capacity vector, number of hosts)]``)."""
    flavors = [f for f, n in counts.items() if n]
    if not flavors:
        return True
    nf, ns, nc = len(flavors), len(shapes), len(CLASSES)
    # y[f, s] at column f * ns + s
    a_ub = np.zeros((ns * nc, nf * ns))
    b_ub = np.zeros(ns * nc)
    for s, (capacity, hosts) in enumerate(shapes):
        for c in range(nc):
            b_ub[s * nc + c] = capacity[c] * hosts
            for f, flavor in enumerate(flavors):
                a_ub[s * nc + c, f * ns + s] = _demand(flavor)[c]
    a_eq = np.zeros((nf, nf * ns))
    for f in range(nf):
        a_eq[f, f * ns:(f + 1) * ns] = 1.0
    b_eq = np.array([counts[f] for f in flavors], float)
    result = optimize.linprog(np.zeros(nf * ns), A_ub=a_ub, b_ub=b_ub,
                              A_eq=a_eq, b_eq=b_eq, method="highs")
    return result.status == 0


def _shapes(capacities):
    """``[(capacity vector, hosts)]`` of a fleet's distinct capacities."""
    tally = collections.Counter(tuple(c) for c in capacities)
    return [(np.array(c), n) for c, n in tally.items()]


def lp_bound(capacities, stream):
    """The longest prefix of ``stream`` that fits fractionally.

    :param capacities: one vector per host (:data:`CLASSES` order)
    """
    shapes = _shapes(capacities)
    low, high = 0, len(stream)
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(shapes, collections.Counter(stream[:mid])):
            low = mid
        else:
            high = mid - 1
    if low == len(stream):
        raise ValueError("the whole stream fits: make it longer")
    return low


def milp_bound(capacities, stream, seconds):
    """The longest prefix of ``stream`` that fits ``capacities`` with whole
    instances, by a MILP stopped after ``seconds``."""
    flavors = sorted(set(stream), key=lambda f: f.name)
    nf, nh, nc, length = len(flavors), len(capacities), len(CLASSES), \
        len(stream)
    ny = nf * nh                      # y[f, h] at f * nh + h, then z[j]
    cost = np.concatenate([np.zeros(ny), -np.ones(length)])
    rows = []
    # capacity of each host and class
    cap = sparse.lil_matrix((nh * nc, ny + length))
    for h in range(nh):
        for f, flavor in enumerate(flavors):
            for c, amount in enumerate(_demand(flavor)):
                cap[h * nc + c, f * nh + h] = amount
    rows.append(optimize.LinearConstraint(
        cap.tocsr(), -np.inf, np.asarray(capacities, float).ravel()))
    # each flavor's instances are the placed positions of that flavor
    count = sparse.lil_matrix((nf, ny + length))
    for f, flavor in enumerate(flavors):
        count[f, f * nh:(f + 1) * nh] = 1.0
        for j, item in enumerate(stream):
            if item == flavor:
                count[f, ny + j] = -1.0
    rows.append(optimize.LinearConstraint(count.tocsr(), 0.0, 0.0))
    # positions in order: z[j] >= z[j + 1]
    order = sparse.lil_matrix((length - 1, ny + length))
    for j in range(length - 1):
        order[j, ny + j] = 1.0
        order[j, ny + j + 1] = -1.0
    rows.append(optimize.LinearConstraint(order.tocsr(), 0.0, np.inf))
    upper = np.concatenate([np.full(ny, np.inf), np.ones(length)])
    result = optimize.milp(
        cost, constraints=rows, integrality=np.ones(ny + length),
        bounds=optimize.Bounds(0, upper),
        options={"time_limit": seconds, "disp": False})
    best = 0 if result.x is None else int(round(-result.fun))
    bound = int(np.floor(-result.mip_dual_bound + 1e-6))
    return Milp(best=best, bound=bound, optimal=result.status == 0,
                seconds=seconds)
