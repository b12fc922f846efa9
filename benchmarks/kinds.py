#!/usr/bin/env python3
"""Decision time per profile: compute, volume, network, container.

The decision is ``engine.py``'s (filters, weighers and the pick for one
instance, no claim), with the same engine and the same budget for every
profile: the routes a worker builds from its configuration (Nova's
default profile and the ``volume``, ``network`` and ``container``
profiles of ``doc/examples/services.conf``), on a cache of N providers of
the profile's kind each time (N compute nodes, or N volume backends, or N
L3 agents, or N container hosts):

* **compute**: ``engine.py``'s cloud and request (its filters and
  weighers, an anti-affinity group), on the default profile;
* **volume**: N volume backends (kind ``volume``; thin and thick pools,
  ``DISK_GB`` 0 to 90 % provisioned, Cinder's capabilities), a 100 GB
  volume whose type asks ``QoS_support <is> True``, on the volume profile
  with the GoodnessWeigher added. Twice: no backend reporting a
  ``filter_function`` or ``goodness_function``, then every backend
  reporting both (drawn from the differential test's functions, so a few
  texts shared by many backends, as one driver's backends share theirs);
* **router**, **HA router**, **HA router, 3 zones**: N L3 agents (kind
  ``network``, 0 to 500 routers each, 3 zones), a router for one zone; 3
  bindings with an anti-affinity group; 3 bindings spread over the zones
  (``availability_zone_hints``);
* **container (sequential)**, **container (on instance)**: N container
  hosts (kind ``container``, 16 VCPU, 32 GiB, 0 to 100 % used, each
  linked to its instance), a 1 VCPU / 1 GiB container filling
  sequentially, then one naming an instance.

Each ``x comp.`` column is the ratio to the compute decision of the same
run: of the median wall time, then of the median process CPU time (which
the other processes of a loaded machine inflate less).

    python benchmarks/kinds.py [--size 10000] [--seconds 3]
"""

import argparse
import configparser
import os
import random
import statistics
import time
import uuid

import engine
import gantt_env
import numpy as np

from gantt import objects
from gantt.conf import profiles as conf_profiles
from gantt.objects import request_spec
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import profiles as profiles_mod
from gantt.scheduler.pipeline import translate
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import update as update_mod
from gantt.tests.cinder_diff import worlds

NOW = engine.NOW
ZONES = ("az-0", "az-1", "az-2")
SERVICES_CONF = os.path.join(os.path.dirname(__file__), os.pardir, "doc",
                             "examples", "services.conf")
ROUTER = "CUSTOM_L3_ROUTER"


def profiles_conf():
    """``engine.py``'s configuration with the profiles of services.conf
    (the volume profile weighing goodness too)."""
    conf = services_profiles(gantt_env.make_conf())
    conf.set_override("enabled_weighers",
                      ["CapacityWeigher", "GoodnessWeigher"],
                      "profile:volume")
    return conf


def services_profiles(conf):
    """``conf`` with the profiles of doc/examples/services.conf."""
    parser = configparser.ConfigParser()
    parser.read(SERVICES_CONF)
    conf.set_override("profiles", parser["scheduler"]["profiles"].split(","),
                      "scheduler")
    conf_profiles.register(conf)
    for section in parser.sections():
        if section.startswith("profile:"):
            for option, value in parser[section].items():
                conf.set_override(option, value.split(","), section)
    return conf


def _provider(i, kind, inventories, *, zone=None, ratio=1.0, caps=None,
              instance=None):
    """A standalone provider's parts: (Provider, Standalone)."""
    provider_uuid = str(uuid.UUID(int=i + 1))
    name = "%s%06d" % (kind, i)
    return provider_tree.Provider(
        uuid=provider_uuid, name=name, parent_uuid=None,
        root_uuid=provider_uuid, inventories={
            rc: update_mod.Inventory(t, 0, 1, t, 1, ratio)
            for rc, t in inventories.items()},
        traits=frozenset(), aggregates=frozenset()), update_mod.Standalone(
            kind=kind, service="bench", availability_zone=zone,
            capabilities=dict(caps or {}), instance_uuid=instance)


def _cache(n, make):
    """A cache of ``n`` providers: ``make(i)`` gives (Provider,
    Standalone, usage)."""
    cache = cache_mod.HostStateCache(clock=lambda: NOW)
    for i in range(n):
        provider, details, usage = make(i)
        cache.apply_provider(provider, 1, details=details, received_at=NOW)
        cache.apply_usage(provider.uuid, 1, usage)
    return cache


def volumes_cache(n, rng, functions):
    def backend(i):
        thin = rng.random() < 0.5
        total = rng.choice((1000, 2048, 10240, 51200))
        caps = {"thin_provisioning_support": thin,
                "thick_provisioning_support": not thin,
                "QoS_support": rng.random() < 0.8,
                "volume_backend_name": "lvm%d" % (i % 10),
                "storage_protocol": rng.choice(("iSCSI", "FC", "NVMe-oF")),
                "iops": rng.choice((500, 1000, 2000)),
                "free_capacity_gb": int(total * rng.uniform(0.1, 1.0))}
        if functions:
            caps["filter_function"] = rng.choice(
                worlds.FILTER_FUNCTIONS[:-1])
            caps["goodness_function"] = rng.choice(
                worlds.GOODNESS_FUNCTIONS)
        provider, details = _provider(
            i, "volume", {"DISK_GB": total}, ratio=20.0 if thin else 1.0,
            zone=ZONES[i % 3], caps=caps)
        return provider, details, {"DISK_GB": int(total * rng.uniform(
            0.0, 0.9))}
    return _cache(n, backend)


def agents_cache(n, rng):
    def agent(i):
        provider, details = _provider(i, "network", {ROUTER: 100000},
                                      zone=ZONES[i % 3])
        return provider, details, {ROUTER: rng.randint(0, 500)}
    return _cache(n, agent)


def containers_cache(n, rng):
    def host(i):
        provider, details = _provider(
            i, "container", {"VCPU": 16, "MEMORY_MB": 32768},
            instance=_instance(i))
        fill = rng.random()
        return provider, details, {"VCPU": int(16 * fill),
                                   "MEMORY_MB": int(32768 * fill)}
    return _cache(n, host)


def _instance(i):
    return str(uuid.UUID(int=i + 10**9))


def _spec(profile, resources, **fields):
    return request_spec.RequestSpec(
        project_id="p", user_id="u", flavor=None, profile=profile,
        request_groups=[request_spec.RequestGroup(resources=resources)],
        **fields)


def _group():
    return request_spec.InstanceGroup(uuid=engine.GROUP,
                                      policy="anti-affinity")


def volume_spec():
    return _spec("volume", {"DISK_GB": 100},
                 capabilities={"QoS_support": "<is> True"})


def router_spec(count=1, group=False, hints=None):
    fields = {"num_instances": count}
    if group:
        fields["instance_group"] = _group()
    if hints:
        fields["scheduler_hints"] = {"availability_zone_hints": hints}
    else:
        fields["availability_zone"] = "az-1"
    return _spec("network", {ROUTER: 1}, **fields)


def container_spec(hints):
    return _spec("container", {"VCPU": 1, "MEMORY_MB": 1024},
                 scheduler_hints=hints)


class _Lookup:
    def __init__(self, members=None):
        self.members = members or {}

    def group_hosts(self, group_uuid):
        return dict(self.members)

    def consumer_hosts(self, uuids):
        return set()


def time_decisions(routes, cache, spec, lookup, seconds):
    """Median and p95 wall milliseconds of one decision, its median
    process CPU milliseconds, and the host."""
    count = spec.num_instances
    request = translate.from_spec(
        spec, [str(uuid.UUID(int=7 + k)) for k in range(count)], lookup,
        routes.profiles)
    route = routes.for_request(request)
    times, cpu = [], []
    host = None
    started_all = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - started_all
                             < seconds and len(times) < 500):
        request.forget_placements()
        view = host_view.HostView(cache.table, NOW, 60)
        cycle = cycle_mod.CycleState(request, view)
        route.pipeline.candidates(cycle)
        started, cpu_started = time.perf_counter(), time.process_time()
        ranking = route.pipeline.rank(cycle)
        row, _weight = route.picker.pick(ranking.weighing, cycle)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
        host = view.hosts[row]
    times = np.array(times) * 1000
    return (statistics.median(times), float(np.percentile(times, 95)),
            statistics.median(cpu) * 1000, host)


def rows(n, rng):
    """(name, cache, spec, lookup) of every line of the table."""
    compute, members = engine.build_cache(n, rng)
    plain = volumes_cache(n, rng, functions=False)
    functions = volumes_cache(n, rng, functions=True)
    agents = agents_cache(n, rng)
    hosts = containers_cache(n, rng)
    two = {"network%06d" % i: 1 for i in (1, 4)}
    return (
        ("compute", compute, engine.make_spec(), _Lookup(members)),
        ("volume", plain, volume_spec(), _Lookup()),
        ("volume, functions", functions, volume_spec(), _Lookup()),
        ("router", agents, router_spec(), _Lookup()),
        ("HA router", agents, router_spec(3, group=True), _Lookup(two)),
        ("HA router, 3 zones", agents,
         router_spec(3, group=True, hints=list(ZONES)), _Lookup(two)),
        ("container (sequential)", hosts,
         container_spec({"fill": ["sequential"]}), _Lookup()),
        ("container (on instance)", hosts,
         container_spec({"on_instance": [_instance(n // 2)]}), _Lookup()),
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    objects.register_all()
    routes = profiles_mod.build(profiles_conf(),
                                rng=random.Random(engine.SEED))
    print("decision time (filters, weighers, pick; no claim) at %d "
          "providers of each kind; %s" % (args.size, engine.machine()))
    print("%-24s %10s %10s %8s %8s %8s  %s" % (
        "profile: request", "median ms", "p95 ms", "x comp.", "CPU ms",
        "x comp.", "host"))
    first = None
    for name, cache, spec, lookup in rows(args.size,
                                          random.Random(engine.SEED)):
        median, p95, cpu, host = time_decisions(routes, cache, spec, lookup,
                                                args.seconds)
        first = first or (median, cpu)
        print("%-24s %10.2f %10.2f %8.2f %8.2f %8.2f  %s" % (
            name, median, p95, median / first[0], cpu, cpu / first[1],
            host))


if __name__ == "__main__":
    main()
