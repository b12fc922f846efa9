#!/usr/bin/env python3
"""Time one scheduling decision of Gantt's engine, vectorised and per host.

A decision is what ``select_destinations`` does for each instance before it
claims: run the enabled filters over the request's candidates, the enabled
weighers over every host that passed, and pick the best host (exact top-k
over all of them). The claim (one SQL transaction) is not included. What a
request does once for all its instances (validate the spec into a
ResourceRequest, take a HostView, run the candidates step with its
pre-filters) is timed apart, in the "prep" column.

Both paths run the very same plugins: the *vectorised* path uses
``passes_columns`` / ``weigh_columns`` on numpy columns, the *per-host*
path calls ``host_passes`` / ``weigh_host`` host by host (as Nova does).

The cloud (the shape of the Nova anchor in ``shared/bench``): hosts of 32
to 128 vCPU (ratio 4), 128 to 512 GiB RAM (512 MiB reserved) and 1 to
7.5 TiB disk, 0 to 85 % used; 3 availability zones and racks of 40 hosts
as aggregates, an ``ssd`` and an ``hpc`` aggregate whose metadata override
weigher multipliers; 6 to 22 traits per host; 0.4 % disabled; QEMU on
x86_64. The request: m1.medium (2 vCPU, 4 GiB, 40 GiB) with
``capabilities:hypervisor_type=QEMU``, an x86_64/qemu/hvm image, and an
anti-affinity server group with 10 members on 10 hosts. Filters: the
default ``enabled_filters`` (which include the affinity filters);
weighers: the default ``enabled_weighers`` (all 13).

Wall-clock times include whatever else the machine runs; the CPU columns
(``time.process_time``) count only this process's own work, and show what
the engine costs when other jobs preempt it.

Usage::

    python benchmarks/engine.py [--sizes 1000,10000,100000] [--seconds 5]
"""

import argparse
import datetime
import gc
import os
import platform
import random
import statistics
import sys
import time
import uuid

import numpy as np

from gantt import conf as gantt_conf
from gantt import objects
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import picking
from gantt.scheduler.pipeline import pipeline as pipeline_mod
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import translate
from gantt.scheduler.pipeline import weighers as weighers_base
from gantt.scheduler.state import aggregates
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import update as update_mod

SEED = 42
SHAPES = ((32, 131072, 1024, 3), (64, 262144, 2048, 4),
          (96, 393216, 3840, 2), (128, 524288, 7680, 1))
ZONES = ("az-0", "az-1", "az-2")
RACK = 40
TRAITS = (
    "COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG", "COMPUTE_VOLUME_EXTEND",
    "COMPUTE_VOLUME_ATTACH_WITH_TAG", "COMPUTE_DEVICE_TAGGING",
    "COMPUTE_IMAGE_TYPE_QCOW2", "COMPUTE_IMAGE_TYPE_RAW", "HW_CPU_X86_AVX",
    "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42", "HW_CPU_X86_AESNI",
    "HW_CPU_X86_SVM", "HW_CPU_X86_AVX512F", "HW_CPU_X86_SHA",
    "COMPUTE_VOLUME_MULTI_ATTACH", "COMPUTE_TRUSTED_CERTS", "COMPUTE_NODE",
    "COMPUTE_ACCELERATORS", "HW_NIC_SRIOV", "STORAGE_DISK_SSD",
    "COMPUTE_GRAPHICS_MODEL_VIRTIO", "COMPUTE_SECURITY_TPM_2_0",
    "HW_CPU_X86_BMI2")
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
CELL = str(uuid.UUID(int=1))
NOW = 1_000_000.0


def _uuid(number, namespace):
    return str(uuid.UUID(int=(namespace << 96) | number))


def _agg_uuid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "gantt-engine-bench/" + name))


class _Lookup:
    """The group's members, without a database."""

    def __init__(self, group_hosts):
        self._group_hosts = group_hosts

    def group_hosts(self, group_uuid):
        return dict(self._group_hosts)

    def consumer_hosts(self, uuids):
        return set()


def build_cache(count, rng):
    """A HostStateCache of ``count`` hosts, and the hosts of the group."""
    cache = cache_mod.HostStateCache(clock=lambda: NOW)
    weights = [s[3] for s in SHAPES]
    names = []
    for i in range(count):
        vcpus, memory, disk, _w = rng.choices(SHAPES, weights)[0]
        name = "host%06d" % i
        names.append(name)
        aggs = {_agg_uuid(ZONES[i % 3]), _agg_uuid("rack%d" % (i // RACK))}
        if i % 7 == 0:
            aggs.add(_agg_uuid("ssd"))
        if i % 13 == 0:
            aggs.add(_agg_uuid("hpc"))
        report = update_mod.HostUpdate(
            uuid=_uuid(i, 1), host=name, nodename=name, cell_uuid=CELL,
            availability_zone=ZONES[i % 3],
            disabled=rng.random() < 0.004, report_sequence=1,
            num_instances=rng.randint(0, 34), num_io_ops=rng.randint(0, 3),
            inventories={
                "VCPU": (vcpus, 0, 1, vcpus, 1, 4.0),
                "MEMORY_MB": (memory, 512, 1, memory, 1, 1.0),
                "DISK_GB": (disk, 0, 1, disk, 1, 1.0)},
            traits=frozenset(rng.sample(TRAITS, rng.randint(6, 22))),
            aggregates=frozenset(aggs),
            capabilities={
                "hypervisor_type": "QEMU",
                "supported_instances": '[["x86_64", "qemu", "hvm"]]',
                "hypervisor_version": str(rng.choice(
                    (8000000, 9000000, 10000000)))},
            stats={"failed_builds": str(int(rng.random() < 0.01))},
            metrics={}, updated_at=None, received_at=NOW)
        cache.apply_report(report)
        fill = rng.uniform(0.0, 0.85)
        cache.apply_usage(report.uuid, 1, {
            "VCPU": int(vcpus * 4 * fill), "MEMORY_MB": int(memory * fill),
            "DISK_GB": int(disk * fill)})
    cache.apply_aggregates(aggregates.AggregateSet([
        aggregate_obj.Aggregate(
            uuid=_agg_uuid(z), name=z, metadata={"availability_zone": z})
        for z in ZONES] + [
        aggregate_obj.Aggregate(uuid=_agg_uuid("ssd"), name="ssd",
                                metadata={"ssd": "true",
                                          "disk_weight_multiplier": "2.0"}),
        aggregate_obj.Aggregate(uuid=_agg_uuid("hpc"), name="hpc",
                                metadata={"hpc": "true",
                                          "cpu_weight_multiplier": "3.0",
                                          "ram_weight_multiplier": "0.5"})]))
    members = {names[j]: 1 for j in rng.sample(range(count), 10)}
    return cache, members


def make_spec():
    return request_spec.RequestSpec(
        project_id="project-bench", user_id="user-bench",
        flavor=request_spec.Flavor(
            name="m1.medium", vcpus=2, memory_mb=4096, root_gb=40,
            extra_specs={"capabilities:hypervisor_type": "QEMU"}),
        image=request_spec.ImageMeta(id="img-1", properties={
            "hw_architecture": "x86_64", "img_hv_type": "qemu",
            "hw_vm_mode": "hvm", "os_distro": "ubuntu"}),
        instance_group=request_spec.InstanceGroup(uuid=GROUP,
                                                  policy="anti-affinity"))


class Engine:
    """The pipeline and picker of a worker, on a prepared cache."""

    def __init__(self, conf, cache, vectorised):
        self.conf = conf
        self.cache = cache
        self.pipeline = pipeline_mod.Pipeline(
            filters_base.FilterRunner(plugins.load(
                plugins.FILTERS, conf.filter_scheduler.enabled_filters,
                conf), vectorised=vectorised),
            weighers_base.WeigherRunner(plugins.load(
                plugins.WEIGHERS, conf.filter_scheduler.enabled_weighers,
                conf), vectorised=vectorised), conf)
        self.picker = picking.Picker(conf, random.Random(SEED))


def prepare(engine, spec, lookup):
    """Once per request: validate it, take a view, run the candidates."""
    request = translate.from_spec(spec, [_uuid(7, 2)], lookup)
    view = host_view.HostView(engine.cache.table, engine.cache.now(),
                              engine.conf.scheduler.service_down_time)
    cycle = cycle_mod.CycleState(request, view)
    engine.pipeline.candidates(cycle)
    return (cycle,)


def decide(engine, cycle):
    """One decision (per instance): filters, weighers, pick."""
    ranking = engine.pipeline.rank(cycle)
    return (engine.picker.pick(ranking.weighing),
            int(np.count_nonzero(ranking.outcome.mask)))


def measure(engine, spec, lookup, seconds, max_reps):
    """Wall and CPU seconds of each decision, and of each preparation."""
    prepared = prepare(engine, spec, lookup)
    decide(engine, *prepared)             # warm-up (and the answer)
    times, cpu, prep = [], [], []
    gc.collect()
    deadline = time.perf_counter() + seconds
    while len(times) < max_reps and (len(times) < 3
                                     or time.perf_counter() < deadline):
        started = time.perf_counter()
        prepared = prepare(engine, spec, lookup)
        prep.append(time.perf_counter() - started)
        started = time.perf_counter()
        started_cpu = time.process_time()
        (row, _weight), passed = decide(engine, *prepared)
        cpu.append(time.process_time() - started_cpu)
        times.append(time.perf_counter() - started)
    return times, cpu, prep, row, passed


def percentile(values, p):
    ordered = sorted(values)
    k = min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))
    return ordered[k]


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s; nproc=%d; %s; Python %s; numpy %s; %s UTC; load %s" % (
        model, os.cpu_count(), platform.platform(),
        platform.python_version(), np.__version__,
        datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M"),
        _load())


def _load():
    """The 1/5/15-minute load averages (other work on the machine)."""
    return "/".join("%.1f" % x for x in os.getloadavg())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="time budget per size and path")
    parser.add_argument("--max-reps", type=int, default=2000)
    parser.add_argument("--per-host-max-reps", type=int, default=50)
    args = parser.parse_args(argv)
    objects.register_all()
    from oslo_config import cfg
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    spec = make_spec()
    print("machine: %s" % machine())
    print("filters: %s" % ", ".join(conf.filter_scheduler.enabled_filters))
    print("weighers: %s" % ", ".join(conf.filter_scheduler.enabled_weighers))
    print()
    header = ("| hosts | path | decisions | passed | p50 ms | p99 ms "
              "| CPU p50 ms | CPU p99 ms | µs/host (p50) | prep p50 ms |")
    print(header)
    print("|" + "---|" * 10)
    loads = []
    for size in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(SEED)
        cache, members = build_cache(size, rng)
        lookup = _Lookup(members)
        picks = []
        for label, vectorised, reps in (
                ("vectorised", True, args.max_reps),
                ("per-host", False, args.per_host_max_reps)):
            engine = Engine(conf, cache, vectorised)
            times, cpu, prep, row, passed = measure(engine, spec, lookup,
                                                    args.seconds, reps)
            picks.append(row)
            p50 = statistics.median(times) * 1000
            print("| %d | %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f "
                  "| %.3f |" % (size, label, len(times), passed, p50,
                                percentile(times, 99) * 1000,
                                statistics.median(cpu) * 1000,
                                percentile(cpu, 99) * 1000,
                                p50 * 1000 / size,
                                statistics.median(prep) * 1000),
                  flush=True)
        loads.append((size, _load()))
        if picks[0] != picks[1]:
            print("ERROR: the two paths picked different hosts (rows %s)"
                  % picks, file=sys.stderr)
            return 1
    print()
    print("load averages (1/5/15 min) after each size: %s" % ", ".join(
        "%d hosts: %s" % sl for sl in loads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
