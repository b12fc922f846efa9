#!/usr/bin/env python3
"""Decision time per consumer kind: instances, routers, containers.

The decision is ``engine.py``'s (filters, weighers and the pick for one
instance, no claim), on a cache of N providers of one kind each time:

* **instance**: ``engine.py``'s cloud and request (default filters and
  weighers, an anti-affinity group);
* **router**: N L3 agents (``CUSTOM_L3_ROUTER``, 0 to 500 routers each,
  3 zones), a router for one zone; the network lists of filters and
  weighers (``doc/source/admin/networks.rst``);
* **HA router**: the same with an anti-affinity group of 2 members placed;
* **container (sequential)**: N container hosts (16 VCPU, 32 GiB, 0 to
  100 % used), a 1 VCPU / 1 GiB container with ``fill=sequential``;
  default filters and weighers;
* **container (on instance)**: the same naming one instance.

    python benchmarks/kinds.py [--size 10000] [--seconds 3]
"""

import argparse
import random
import statistics
import time
import uuid

import engine
import gantt_env
import numpy as np

from gantt import objects
from gantt.objects import request_spec
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import translate
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import update as update_mod

NOW = engine.NOW
ZONES = ("az-0", "az-1", "az-2")
NETWORK_FILTERS = ["ComputeFilter", "ResourceFilter",
                   "AvailabilityZoneFilter", "ServerGroupAntiAffinityFilter"]
NETWORK_WEIGHERS = ["LeastRoutersWeigher", "LeastNetworksWeigher"]


def _report(i, inventories, zone=None, stats=None):
    name = "p%06d" % i
    return update_mod.HostUpdate(
        uuid=str(uuid.UUID(int=i + 1)), host=name, nodename=name,
        cell_uuid=engine.CELL, availability_zone=zone, disabled=False,
        report_sequence=1, num_instances=0, num_io_ops=0,
        inventories={rc: (t, 0, 1, t, 1, 1.0)
                     for rc, t in inventories.items()},
        traits=frozenset(), aggregates=frozenset(), capabilities={},
        stats=stats or {}, metrics={}, updated_at=None, received_at=NOW)


def agents_cache(n, rng):
    cache = cache_mod.HostStateCache(clock=lambda: NOW)
    for i in range(n):
        report = _report(i, {"CUSTOM_L3_ROUTER": 100000},
                         zone=ZONES[i % 3])
        cache.apply_report(report)
        cache.apply_usage(report.uuid, 1,
                          {"CUSTOM_L3_ROUTER": rng.randint(0, 500)})
    return cache


def containers_cache(n, rng):
    cache = cache_mod.HostStateCache(clock=lambda: NOW)
    for i in range(n):
        report = _report(i, {"VCPU": 16, "MEMORY_MB": 32768},
                         stats={"instance_uuid": _instance(i)})
        cache.apply_report(report)
        fill = rng.random()
        cache.apply_usage(report.uuid, 1, {"VCPU": int(16 * fill),
                                           "MEMORY_MB": int(32768 * fill)})
    return cache


def _instance(i):
    return str(uuid.UUID(int=i + 10**9))


def _flavor(name, vcpus, memory_mb, extra_specs=None):
    return request_spec.Flavor(name=name, vcpus=vcpus, memory_mb=memory_mb,
                               root_gb=0, ephemeral_gb=0, swap=0,
                               extra_specs=dict(extra_specs or {}))


def router_spec(group=False):
    fields = {}
    if group:
        fields["instance_group"] = request_spec.InstanceGroup(
            uuid=engine.GROUP, policy="anti-affinity")
    return request_spec.RequestSpec(
        project_id="p", user_id="u", availability_zone="az-1",
        flavor=_flavor("router", 0, 0,
                       {"resources:CUSTOM_L3_ROUTER": "1"}), **fields)


def container_spec(hints):
    return request_spec.RequestSpec(
        project_id="p", user_id="u", scheduler_hints=hints,
        flavor=_flavor("container", 1, 1024))


class _Lookup:
    def __init__(self, members=None):
        self.members = members or {}

    def group_hosts(self, group_uuid):
        return dict(self.members)

    def consumer_hosts(self, uuids):
        return set()


def time_decisions(eng, spec, lookup, seconds):
    """Median and p95 wall milliseconds of one decision, and the host."""
    request = translate.from_spec(spec, [str(uuid.UUID(int=7))], lookup)
    times = []
    host = None
    started_all = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - started_all
                             < seconds and len(times) < 500):
        view = host_view.HostView(eng.cache.table, NOW, 60)
        cycle = cycle_mod.CycleState(request, view)
        eng.pipeline.candidates(cycle)
        started = time.perf_counter()
        ranking = eng.pipeline.rank(cycle)
        row, _weight = eng.picker.pick(ranking.weighing, cycle)
        times.append(time.perf_counter() - started)
        host = view.hosts[row]
    times = np.array(times) * 1000
    return (statistics.median(times), float(np.percentile(times, 95)),
            host)


def _conf(filters=None, weighers=None):
    overrides = {}
    if filters:
        overrides["filter_scheduler.enabled_filters"] = filters
    if weighers:
        overrides["filter_scheduler.enabled_weighers"] = weighers
    return gantt_env.make_conf(**overrides)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    objects.register_all()
    rng = random.Random(engine.SEED)
    n = args.size
    compute, members = engine.build_cache(n, rng)
    agents = agents_cache(n, rng)
    hosts = containers_cache(n, rng)
    two = {"p%06d" % i: 1 for i in (1, 4)}
    rows = (
        ("instance", compute, _conf(), engine.make_spec(),
         _Lookup(members)),
        ("router", agents, _conf(NETWORK_FILTERS, NETWORK_WEIGHERS),
         router_spec(), _Lookup()),
        ("HA router", agents, _conf(NETWORK_FILTERS, NETWORK_WEIGHERS),
         router_spec(group=True), _Lookup(two)),
        ("container (sequential)", hosts, _conf(),
         container_spec({"fill": ["sequential"]}), _Lookup()),
        ("container (on instance)", hosts, _conf(),
         container_spec({"on_instance": [_instance(n // 2)]}), _Lookup()),
    )
    print("decision time (filters, weighers, pick; no claim) at %d "
          "providers; %s" % (n, engine.machine()))
    print("%-24s %10s %10s  %s" % ("kind", "median ms", "p95 ms", "host"))
    for name, cache, conf, spec, lookup in rows:
        eng = engine.Engine(conf, cache, vectorised=True)
        median, p95, host = time_decisions(eng, spec, lookup, args.seconds)
        print("%-24s %10.2f %10.2f  %s" % (name, median, p95, host))


if __name__ == "__main__":
    main()
