"""Containers on instances: how many instances sequential fill uses.

A container service (Magnum) places a fixed, seeded workload of
containers one request at a time through Gantt's real engine in-process
(``Placer.select_destinations``: filters, weighers, the claim in a SQLite
database), as the service would: each container host is a provider of
kind ``container`` (linked to its instance) and each container a
flavorless request of the ``container`` profile of
``doc/examples/services.conf``. When Gantt answers ``ProvidersFull`` the
service "creates an instance": a new container host reports, and the
container is asked for again. Printed per picking mode (``sequential``,
and the default spread for comparison):

* **instances**: container hosts created for the arrivals;
* **bound**: the bin-packing lower bound on the instances any placement
  needs, the larger of the per-class bound ``ceil(sum / capacity)`` and
  scipy's MILP optimum (time-limited; its proven bound when not solved);
* **ratio**: instances / bound (the target for sequential: <= 1.05);
* **churn**: after a seeded third of the containers leave and as many
  arrive, the instances still holding a container (the rest are vacant
  and can be retired) against the bound on what is left.

    nice .venv/bin/python benchmarks/containers.py      # about a minute
    .venv/bin/python benchmarks/containers.py --containers 200

Needs scipy (``pip install -e .[bench]``).
"""

import argparse
import contextlib
import dataclasses
import math
import os
import random
import tempfile
import time
import uuid

import gantt_env
import kinds
import numpy as np
from scipy import optimize

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.objects import compute_node as cn_obj
from gantt.objects import provider as provider_obj
from gantt.objects import request_spec as rs_obj

#: a container host: a Nova instance of 16 VCPU and 32 GiB
HOST = {"VCPU": 16, "MEMORY_MB": 32768}
CLASSES = tuple(HOST)


@dataclasses.dataclass(frozen=True)
class Container:
    name: str
    vcpus: int
    memory_mb: int

    @property
    def amounts(self):
        return {"VCPU": self.vcpus, "MEMORY_MB": self.memory_mb}


#: a Magnum-like mix: many small pods, a few large ones
MIX = ((Container("tiny", 1, 512), 30), (Container("small", 1, 2048), 25),
       (Container("medium", 2, 4096), 20), (Container("mem", 2, 8192), 10),
       (Container("cpu", 4, 2048), 10), (Container("large", 8, 8192), 5))


def workload(count, seed=11):
    """``count`` containers drawn from :data:`MIX`, seeded."""
    kinds, weights = zip(*MIX, strict=True)
    return random.Random(seed).choices(kinds, weights, k=count)


# -- the lower bound ------------------------------------------------------


def class_bound(containers):
    """``max over classes of ceil(sum / capacity)``."""
    return max(math.ceil(sum(c.amounts[rc] for c in containers) / HOST[rc])
               for rc in CLASSES)


def milp_bound(containers, upper, seconds):
    """(bound, solved): the fewest hosts for ``containers`` (scipy MILP
    over ``upper`` candidate hosts: one binary per host used, one integer
    per container kind and host), or the solver's proven bound when the
    time runs out."""
    kinds = sorted({c for c in containers}, key=lambda c: c.name)
    count = {k: sum(1 for c in containers if c == k) for k in kinds}
    nk, nh = len(kinds), upper
    # x[k, h] at k * nh + h, then y[h] at nk * nh + h
    nvar = nk * nh + nh
    cost = np.zeros(nvar)
    cost[nk * nh:] = 1.0
    rows, lower, higher = [], [], []
    for k, kind in enumerate(kinds):
        row = np.zeros(nvar)
        row[k * nh:(k + 1) * nh] = 1.0
        rows.append(row)
        lower.append(count[kind])
        higher.append(count[kind])
    for h in range(nh):
        for rc in CLASSES:
            row = np.zeros(nvar)
            for k, kind in enumerate(kinds):
                row[k * nh + h] = kind.amounts[rc]
            row[nk * nh + h] = -HOST[rc]
            rows.append(row)
            lower.append(-np.inf)
            higher.append(0.0)
        if h:
            # symmetry: host h is used only if host h-1 is
            row = np.zeros(nvar)
            row[nk * nh + h] = 1.0
            row[nk * nh + h - 1] = -1.0
            rows.append(row)
            lower.append(-np.inf)
            higher.append(0.0)
    upper_bounds = np.concatenate([np.repeat([count[k] for k in kinds], nh),
                                   np.ones(nh)])
    result = optimize.milp(
        cost, integrality=np.ones(nvar),
        bounds=optimize.Bounds(np.zeros(nvar), upper_bounds),
        constraints=optimize.LinearConstraint(np.array(rows), lower,
                                              higher),
        options={"time_limit": seconds})
    solved = result.status == 0
    bound = getattr(result, "mip_dual_bound", None)
    if solved:
        return round(result.fun), True
    if bound is None or not np.isfinite(bound):
        return 0, False
    return math.ceil(bound - 1e-6), False


def lower_bound(containers, upper, seconds):
    by_class = class_bound(containers)
    if not containers:
        return 0, True
    exact, solved = milp_bound(containers, upper, seconds)
    return max(by_class, exact), solved


# -- the service's loop ---------------------------------------------------


def conf_for(mode, url):
    """A worker's configuration: the profiles of services.conf."""
    conf = kinds.services_profiles(
        gantt_env.make_conf(**{"database.connection": url}))
    # as a worker deployed for many schedulers would: random among three
    conf.set_override("host_subset_size", 3, "filter_scheduler")
    return conf


def _host(index):
    """The container host of instance ``index``: a provider of kind
    ``container`` linked to its instance."""
    name = "instance-%04d" % index
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=str(uuid.UUID(int=index + 1)), name=name, inventories=[
                cn_obj.Inventory(resource_class=rc, total=total)
                for rc, total in HOST.items()]),
        report_sequence=1, kind="container", service="magnum",
        instance_uuid=str(uuid.UUID(int=index + 1000000)))


def _spec(container, mode):
    """A flavorless request of the container profile."""
    hints = {"fill": ["sequential"]} if mode == "sequential" else {}
    return rs_obj.RequestSpec(
        project_id="magnum", user_id="magnum", num_instances=1,
        scheduler_hints=hints, flavor=None, profile="container",
        request_groups=[rs_obj.RequestGroup(resources=container.amounts)])


class Service:
    """The container service: places, and creates an instance when Gantt
    says every instance is full."""

    def __init__(self, mgr, mode):
        self.mgr = mgr
        self.mode = mode
        self.instances = 0
        self.placed = {}           # consumer uuid -> (container, host)
        # a request of the container profile is a container's, hint or
        # not: when every instance is full, the answer is ProvidersFull
        self.full = exception.ProvidersFull
        # a cluster starts with one instance: with none, no host passes
        # the rules and the answer is NoValidHost, not ProvidersFull
        self.create_instance()

    def create_instance(self):
        self.mgr.stats.update_provider(_host(self.instances))
        self.instances += 1

    def place(self, container):
        consumer = str(uuid.uuid4())
        for _ in range(2):
            try:
                [sels] = self.mgr.placer.select_destinations(
                    _spec(container, self.mode), [consumer],
                    return_alternates=False)
            except self.full:
                self.create_instance()
                continue
            self.placed[consumer] = (container, sels[0].service_host)
            return
        raise RuntimeError("a new instance did not take %s" % container)

    def remove(self, consumer):
        self.mgr.claims.release(consumer)
        del self.placed[consumer]

    def hosts_in_use(self):
        return len({host for _c, host in self.placed.values()})


@dataclasses.dataclass(frozen=True)
class Run:
    instances: int
    in_use_after_churn: int
    remaining: list
    seconds: float


@contextlib.contextmanager
def _worker(mode):
    """A worker Scheduler on a throw-away SQLite database (a fixed random
    source)."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="gantt-ctr-", dir=shm) as tmp:
        url = "sqlite:///%s/gantt.sqlite" % tmp
        db = gantt_env.gantt_database(url)
        try:
            mgr = scheduler_mod.build(conf_for(mode, url), db,
                                      rng=random.Random(1))
            mgr.stats.load_cache()
            yield mgr
        finally:
            db.dispose()


def run(mode, containers, churn_seed=5):
    started = time.perf_counter()
    with _worker(mode) as mgr:
        service = Service(mgr, mode)
        for container in containers:
            service.place(container)
        instances = service.instances
        gen = random.Random(churn_seed)
        leaving = gen.sample(sorted(service.placed),
                             len(service.placed) // 3)
        for consumer in leaving:
            service.remove(consumer)
        for container in workload(len(leaving), seed=churn_seed):
            service.place(container)
        remaining = [c for c, _h in service.placed.values()]
        in_use = service.hosts_in_use()
    return Run(instances, in_use, remaining, time.perf_counter() - started)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--containers", type=int, default=300)
    parser.add_argument("--milp-seconds", type=float, default=20.0)
    args = parser.parse_args()
    containers = workload(args.containers)
    print("workload: %d containers on hosts of %s" % (
        len(containers), ", ".join("%d %s" % (v, k)
                                   for k, v in HOST.items())))
    header = ("mode", "instances", "bound", "ratio", "after churn",
              "bound", "ratio", "seconds")
    print("%-10s %9s %6s %6s | %11s %6s %6s | %7s" % header)
    timed_out = False
    for mode in ("sequential", "spread"):
        result = run(mode, containers)
        bound, solved = lower_bound(containers, result.instances,
                                    args.milp_seconds)
        after, after_solved = lower_bound(
            result.remaining, result.in_use_after_churn, args.milp_seconds)
        timed_out |= not (solved and after_solved)
        print("%-10s %9d %5d%s %6.3f | %11d %5d%s %6.3f | %7.1f" % (
            mode, result.instances, bound, "" if solved else "*",
            result.instances / bound, result.in_use_after_churn, after,
            "" if after_solved else "*",
            result.in_use_after_churn / after, result.seconds))
    if timed_out:
        print("* the MILP ran out of time: its proven bound (still a "
              "lower bound)")


if __name__ == "__main__":
    main()
