"""Seeded worlds for the Nova differential test (requests: ``requests``).

Plain data only (no Nova, no Gantt import): ``nova_side`` turns a world
into Nova's ComputeNode / service / aggregate / instance records and
``gantt_side`` into Gantt host reports, from the very same records.

A world is a handful of hosts (4-14) with everything a filter or weigher
of Nova reads: services up, down or disabled; vCPU, RAM and disk with
allocation ratios and reserved memory, sometimes overcommitted (usage
above what the ratios allow now); hypervisor type and version, the
``supported_instances`` triples and a ``cpu_info`` document; stats
(instances, I/O operations, failed builds, free-form keys some hosts lack),
metrics some hosts lack, running instances (some of them server-group
members) with their images' properties, NUMA cells and PCI device pools on
some hosts. Aggregates carry metadata for every aggregate filter and
weigher multiplier (availability zones, tenants, flavors, limits, extra
specs, image properties, multipliers, some of them unparsable). The world
also draws the scheduler options both sides are configured with.

(Over 400 lines: one generator with its record types and its printer.)
"""

import dataclasses
import json
import random
import uuid

ZONES = ("az1", "az2")
DEFAULT_ZONE = "nova"       # Nova's [DEFAULT] default_availability_zone
PROJECTS = ("p1", "p2", "p3")
FLAVORS = ("m1.tiny", "m1.small", "m1.large")
#: (architecture, hypervisor type, vm mode) triples hosts may support
TRIPLES = (("x86_64", "qemu", "hvm"), ("x86_64", "kvm", "hvm"),
           ("aarch64", "qemu", "hvm"), ("i686", "qemu", "hvm"),
           ("x86_64", "xen", "xen"))
HV_TYPES = ("QEMU", "QEMU", "kvm", "VMware vCenter Server")
HV_VERSIONS = (6002000, 8002000, 8002000, 10000000, 0)
CPU_FEATURES = ("avx", "avx2", "sse4.2", "aes", "svm", "vmx", "x2apic")
CPU_VENDORS = ("Intel", "AMD")
METRICS = ("cpu.percent", "cpu.frequency")
FREE_FORM_STATS = ("gpu", "rack", "tier")
#: the image properties running instances have (canonical values)
INSTANCE_IMAGE_PROPERTIES = (("os_distro", ("ubuntu", "centos")),
                             ("hw_architecture", ("x86_64", "aarch64")))

#: the cells hosts may be in (uuids of Nova's CellMapping)
CELLS = ("00000000-0000-0000-0000-0000000000c0",
         "00000000-0000-0000-0000-0000000000c1")

#: image ids (uuids, as Nova's ImageMeta wants them); the last is the one
#: worlds may list in ``isolated_images``
IMAGES = tuple(str(uuid.uuid5(uuid.NAMESPACE_URL, "gantt-nova-diff/img/%d"
                              % k)) for k in range(3))
ISOLATED_IMAGE = IMAGES[-1]


@dataclasses.dataclass(frozen=True)
class Cell:
    """One host NUMA cell (CPU numbers, MiB, pages as (size_kb, total,
    used))."""

    id: int
    cpuset: tuple               # shared CPUs (cpu_shared_set)
    pcpuset: tuple              # dedicated CPUs (cpu_dedicated_set)
    siblings: tuple             # of tuples: one per core (1 CPU without SMT)
    pinned: tuple
    cpu_usage: int
    memory_mb: int
    memory_usage: int
    pages: tuple


@dataclasses.dataclass(frozen=True)
class PciPool:
    vendor_id: str
    product_id: str
    dev_type: str
    numa_node: int | None
    count: int


#: the device kinds hosts have: (alias name, vendor, product, type)
PCI_KINDS = (("nic", "8086", "1520", "type-PCI"),
             ("gpu", "10de", "1eb8", "type-PCI"),
             ("pf", "8086", "154d", "type-PF"))
#: ``[pci] alias``, the same on both sides
PCI_ALIASES = [json.dumps({"name": name, "vendor_id": vendor,
                           "product_id": product, "device_type": dev_type})
               for name, vendor, product, dev_type in PCI_KINDS]


@dataclasses.dataclass(frozen=True)
class Host:
    name: str
    uuid: str
    state: str                  # "up", "down" or "disabled"
    vcpus: int
    vcpus_used: int
    cpu_ratio: float
    memory_mb: int
    ram_reserved: int           # host memory, counted in memory_mb_used
    ram_used: int               # by instances
    ram_ratio: float
    disk_gb: int
    disk_used: int
    disk_ratio: float
    hv_type: str
    hv_version: int
    supported: tuple            # of (arch, hv_type, vm_mode)
    cpu_info: str               # JSON, as a virt driver reports it
    io_ops: int
    failed_builds: int
    stats: dict                 # the free-form stats (besides the counts)
    metrics: dict               # name -> float
    instances: tuple            # uuids running there (members included)
    # per instance, its image's properties: ((key, value), ...)
    instance_images: tuple
    aggregates: tuple           # names
    numa: tuple = ()            # of Cell; a NUMA host also has PCPU
    cell: int = 0               # index into CELLS
    pci: tuple = ()             # of PciPool (free devices)

    @property
    def num_instances(self):
        return len(self.instances)

    @property
    def pcpus(self):
        return sum(len(c.pcpuset) for c in self.numa)

    @property
    def pcpus_used(self):
        return sum(len(c.pinned) for c in self.numa)


@dataclasses.dataclass(frozen=True)
class Aggregate:
    name: str
    uuid: str
    metadata: dict


@dataclasses.dataclass(frozen=True)
class World:
    seed: int
    hosts: tuple
    aggregates: tuple
    config: dict                # "group.option" -> value, for both sides

    def host(self, name):
        return next(h for h in self.hosts if h.name == name)


def draw(rng, pool, most):
    """Up to ``most`` keys of ``pool`` ((key, values) pairs), each with
    one of its values."""
    return {key: rng.choice(values)
            for key, values in rng.sample(pool, rng.randint(0, most))}


def make_uuid(seed, kind, number):
    return str(uuid.uuid5(uuid.NAMESPACE_URL,
                          "gantt-nova-diff/%d/%s/%d" % (seed, kind, number)))


# -- hosts -----------------------------------------------------------------


def _cpu_info(rng, supported):
    arch = supported[0][0] if supported else "x86_64"
    return json.dumps({
        "arch": arch, "vendor": rng.choice(CPU_VENDORS),
        "model": rng.choice(("EPYC-Rome", "Skylake-Server", "Neoverse")),
        "topology": {"cells": rng.choice((1, 2)), "sockets": 1,
                     "cores": rng.choice((8, 16)), "threads": 2},
        "features": sorted(rng.sample(CPU_FEATURES, rng.randint(0, 5))),
        **_maxphysaddr(rng)}, sort_keys=True)


def _maxphysaddr(rng):
    """The host's physical address bits, on some hosts."""
    if rng.random() < 0.5:
        return {}
    return {"maxphysaddr": {"mode": "passthrough",
                            "bits": rng.choice((39, 46, 52))}}


def _metric(rng, name):
    """A metric value as Nova's scheduler sees it: an integer (Nova's
    ``MonitorMetric.value`` is one); a ``*.percent`` one is reported as a
    fraction and scaled by 100 on the way in, so only values that survive
    ``int(v / 100 * 100)`` are drawn."""
    while True:
        value = rng.randint(0, 100 if name.endswith("percent") else 3000)
        if int(value / 100 * 100) == value:
            return value


def _usage(rng, total, ratio, overcommitted):
    """Units in use: up to 70 % of the capacity, or above it (the ratio
    was lowered, or the inventory shrank, after the instances landed)."""
    capacity = total * ratio
    if overcommitted:
        return int(capacity * rng.uniform(1.0, 1.3)) + 1
    return int(capacity * rng.uniform(0.0, 0.7))


def _cell(rng, k, threads, cpu_ratio, memory_mb):
    """Cell ``k`` of 4 cores: two shared, two dedicated (Nova's
    ``cpu_shared_set`` / ``cpu_dedicated_set`` layout)."""
    first = k * 4 * threads
    cores = [tuple(range(first + c * threads, first + (c + 1) * threads))
             for c in range(4)]
    shared = tuple(cpu for core in cores[:2] for cpu in core)
    dedicated = cores[2:]
    if rng.random() < 0.5:
        pinned = tuple(cpu for core in dedicated[:rng.randint(0, 2)]
                       for cpu in core)
    else:
        pinned = tuple(rng.sample([c for core in dedicated for c in core],
                                  rng.randint(0, 2)))
    usage = int(memory_mb * rng.uniform(0, 0.7))
    pages = [(4, memory_mb * 256, usage * 256)]
    if rng.random() < 0.5:
        pages.append((2048, 512, rng.choice((0, 128, 512))))
    return Cell(id=k, cpuset=shared,
                pcpuset=tuple(c for core in dedicated for c in core),
                siblings=tuple(cores),
                pinned=tuple(sorted(pinned)),
                cpu_usage=int(len(shared) * cpu_ratio * rng.uniform(0, .7)),
                memory_mb=memory_mb, memory_usage=usage,
                pages=tuple(pages))


def _numa(rng, cpu_ratio, memory_mb):
    """The NUMA cells of a host, or () (no topology reported)."""
    if rng.random() >= 0.35:
        return ()
    count, threads = rng.choice((1, 2)), rng.choice((1, 2))
    return tuple(_cell(rng, k, threads, cpu_ratio, memory_mb // count)
                 for k in range(count))


def _pci(rng, numa):
    """The free PCI devices of a host, in pools, or ()."""
    if rng.random() >= 0.3:
        return ()
    nodes = [c.id for c in numa] or [None]
    return tuple(PciPool(vendor_id=vendor, product_id=product,
                         dev_type=dev_type, numa_node=rng.choice(nodes),
                         count=rng.randint(0, 4))
                 for _name, vendor, product, dev_type in rng.sample(
                     PCI_KINDS, rng.randint(1, 2)))


def _host(rng, seed, index, instance_numbers):
    vcpus = rng.choice((8, 16, 32, 64))
    memory_mb = rng.choice((8192, 16384, 65536, 131072))
    disk_gb = rng.choice((100, 500, 2000))
    cpu_ratio = rng.choice((1.0, 4.0, 16.0))
    ram_ratio = rng.choice((1.0, 1.0, 1.5))
    disk_ratio = rng.choice((1.0, 1.0, 2.0))
    ram_reserved = rng.choice((0, 512, 2048))
    over = rng.random() < 0.15
    supported = tuple(rng.sample(TRIPLES, rng.choice((0, 1, 1, 2, 3))))
    stats = {key: rng.choice(("true", "false", "r1", "r2", "gold"))
             for key in FREE_FORM_STATS if rng.random() < 0.5}
    metrics = {name: _metric(rng, name) for name in METRICS
               if rng.random() < 0.8}
    count = rng.choice((0, 1, 2, 3, 5, 8))
    instances = tuple(make_uuid(seed, "instance", next(instance_numbers))
                      for _ in range(count))
    images = tuple(tuple(sorted(draw(rng, INSTANCE_IMAGE_PROPERTIES,
                                      2).items()))
                   for _ in instances)
    host = Host(
        name="host%02d" % index, uuid=make_uuid(seed, "host", index),
        state=rng.choice(("up",) * 8 + ("down", "disabled")),
        vcpus=vcpus, cpu_ratio=cpu_ratio,
        vcpus_used=_usage(rng, vcpus, cpu_ratio, over and rng.random() < .7),
        memory_mb=memory_mb, ram_reserved=ram_reserved, ram_ratio=ram_ratio,
        ram_used=_usage(rng, memory_mb - ram_reserved, ram_ratio,
                        over and rng.random() < 0.7),
        disk_gb=disk_gb, disk_ratio=disk_ratio,
        disk_used=_usage(rng, disk_gb, disk_ratio,
                         over and rng.random() < 0.5),
        hv_type=rng.choice(HV_TYPES), hv_version=rng.choice(HV_VERSIONS),
        supported=supported, cpu_info=_cpu_info(rng, supported),
        io_ops=rng.choice((0, 0, 1, 2, 4, 8, 12)),
        failed_builds=rng.choice((0,) * 6 + (1, 3)), stats=stats,
        metrics=metrics, instances=instances, instance_images=images,
        aggregates=())
    numa = _numa(rng, cpu_ratio, memory_mb)
    host = dataclasses.replace(host, pci=_pci(rng, numa))
    if not numa:
        return host
    # the VCPU inventory is the shared CPUs, their use the cells' use
    return dataclasses.replace(
        host, numa=numa, vcpus=sum(len(c.cpuset) for c in numa),
        vcpus_used=sum(c.cpu_usage for c in numa),
        ram_used=sum(c.memory_usage for c in numa))


def traits(h):
    """The traits of a host in Placement: HW_CPU_X86_AVX where its CPU
    has AVX, HW_CPU_HYPERTHREADING where its cores have several threads,
    COMPUTE_STATUS_DISABLED while its service is disabled (all set by
    nova-compute)."""
    out = set()
    if any(len(core) > 1 for c in h.numa for core in c.siblings):
        out.add("HW_CPU_HYPERTHREADING")
    if "avx" in json.loads(h.cpu_info).get("features", ()):
        out.add("HW_CPU_X86_AVX")
    if h.state == "disabled":
        out.add("COMPUTE_STATUS_DISABLED")
    return frozenset(out)


def host_ip(h):
    return "10.0.%d.%d" % (int(h.name[4:]) // 4, int(h.name[4:]) % 4 + 1)


# -- aggregates ------------------------------------------------------------

#: metadata an aggregate may carry: key -> values to draw from
METADATA = {
    "availability_zone": ZONES,
    "filter_tenant_id": ("p1", "p2", "p1,p3"),
    "filter_tenant_id_2": ("p2",),
    "instance_type": ("m1.small", "m1.tiny,m1.large"),
    "max_io_ops_per_host": ("2", "5", "bad"),
    "max_instances_per_host": ("2", "4", "none"),
    "ssd": ("true", "false"),
    "gpu": ("true", "false,true"),
    "os_distro": ("ubuntu", "ubuntu,centos", "windows"),
    "hw_architecture": ("x86_64", "aarch64"),
    "ram_weight_multiplier": ("2.0", "-1.0", "0.5", "abc"),
    "cpu_weight_multiplier": ("3.0", "-2.0"),
    "disk_weight_multiplier": ("2.0", "0"),
    "io_ops_weight_multiplier": ("-3.0", "1.0"),
    "num_instances_weight_multiplier": ("1.5", "-1.0"),
    "build_failure_weight_multiplier": ("10.0",),
    "hypervisor_version_weight_multiplier": ("-1.0", "5.0"),
    "soft_affinity_weight_multiplier": ("4.0",),
    "soft_anti_affinity_weight_multiplier": ("0.5",),
    "pci_weight_multiplier": ("2.0",),
    "metrics_weight_multiplier": ("-1.0", "2.0"),
}


def _aggregates(rng, seed, hosts):
    aggs = []
    zones = list(ZONES)
    for k in range(rng.randint(1, 6)):
        metadata = {}
        for key in rng.sample(sorted(METADATA), rng.randint(1, 4)):
            if key == "availability_zone" and not zones:
                continue
            value = rng.choice(METADATA[key])
            if key == "availability_zone":
                # a host is in one zone only: zones partition the hosts
                value = zones.pop(0)
            metadata[key] = value
        aggs.append(Aggregate(name="agg%d" % k,
                              uuid=make_uuid(seed, "aggregate", k),
                              metadata=metadata))
    members = {a.name: set() for a in aggs}
    zoned = set()
    for host in hosts:
        for agg in aggs:
            in_zone = "availability_zone" in agg.metadata
            if in_zone and host.name in zoned:
                continue
            if rng.random() < 0.4:
                members[agg.name].add(host.name)
                if in_zone:
                    zoned.add(host.name)
    return aggs, members


# -- configuration ---------------------------------------------------------


def _config(rng, hosts):
    """Scheduler options, the same on both sides (``group.option``)."""
    config = {
        "filter_scheduler.max_io_ops_per_host": rng.choice((8, 3)),
        "filter_scheduler.max_instances_per_host": rng.choice((50, 4)),
        "metrics.required": False,
        "pci.alias": list(PCI_ALIASES),
    }
    multipliers = ("ram", "cpu", "disk", "io_ops", "num_instances",
                   "soft_affinity", "soft_anti_affinity", "build_failure",
                   "hypervisor_version", "pci")
    for name in multipliers:
        if rng.random() < 0.2:
            config["filter_scheduler.%s_weight_multiplier" % name] = (
                rng.choice((0.0, 2.0, -1.0, 0.5)) if name not in (
                    "soft_affinity", "soft_anti_affinity", "pci")
                else rng.choice((0.0, 2.0)))
    if rng.random() < 0.3:
        config["filter_scheduler.image_props_weight_multiplier"] = (
            rng.choice((1.0, -2.0)))
        if rng.random() < 0.5:
            config["filter_scheduler.image_props_weight_setting"] = [
                "os_distro=2.0", "hw_architecture=0.5"]
    if rng.random() < 0.5:
        config["metrics.weight_setting"] = [
            "%s=%s" % (name, rng.choice((1.0, -1.0, 0.5)))
            for name in rng.sample(METRICS, rng.randint(1, 2))]
        config["metrics.weight_multiplier"] = rng.choice((1.0, -2.0))
    if rng.random() < 0.3:
        config["filter_scheduler.isolated_images"] = [ISOLATED_IMAGE]
        config["filter_scheduler.isolated_hosts"] = [
            h.name for h in rng.sample(hosts, min(2, len(hosts)))]
        config["filter_scheduler.restrict_isolated_hosts_to_isolated_"
               "images"] = rng.random() < 0.5
    if rng.random() < 0.2:
        config["filter_scheduler.aggregate_image_properties_isolation_"
               "namespace"] = "os"
        config["filter_scheduler.aggregate_image_properties_isolation_"
               "separator"] = "_"
    return config


def world(seed, size=None):
    """The world of ``seed``: hosts, aggregates and options."""
    rng = random.Random(seed)
    numbers = iter(range(1, 1000))
    count = size or rng.randint(4, 14)
    hosts = [_host(rng, seed, i, numbers) for i in range(count)]
    aggs, members = _aggregates(rng, seed, hosts)
    # two cells in some worlds (a rng of their own: the rest of the world
    # is the same with or without them)
    cells = random.Random(seed + 1_000_003)
    split = cells.random() < 0.3
    hosts = tuple(dataclasses.replace(h, aggregates=tuple(sorted(
        name for name, names in members.items() if h.name in names)),
        cell=cells.randint(0, 1) if split else 0)
        for h in hosts)
    return World(seed=seed, hosts=hosts, aggregates=tuple(aggs),
                 config=_config(rng, hosts))


def describe(world, req=None):
    """A compact, printable account of a world (and a request)."""
    lines = ["world %d, options %s" % (world.seed, json.dumps(
        world.config, sort_keys=True))]
    for agg in world.aggregates:
        lines.append("  %s %s" % (agg.name, json.dumps(agg.metadata,
                                                      sort_keys=True)))
    for h in world.hosts:
        lines.append(
            "  %s %s cell %d cpu %d/%dx%g ram %d+%d/%dx%g disk %d/%dx%g"
            " %s %d %s"
            " io %d fail %d inst %d %s %s %s aggs %s" % (
                h.name, h.state, h.cell, h.vcpus_used, h.vcpus, h.cpu_ratio,
                h.ram_used, h.ram_reserved, h.memory_mb, h.ram_ratio,
                h.disk_used, h.disk_gb, h.disk_ratio, h.hv_type,
                h.hv_version, [list(t) for t in h.supported], h.io_ops,
                h.failed_builds, h.num_instances, h.cpu_info,
                json.dumps(h.stats, sort_keys=True),
                json.dumps(h.metrics, sort_keys=True),
                ",".join(h.aggregates)))
        for p in h.pci:
            lines.append("    pci %s:%s %s node %s free %d" % (
                p.vendor_id, p.product_id, p.dev_type, p.numa_node,
                p.count))
        for c in h.numa:
            lines.append("    cell %d shared %s dedicated %s siblings %s "
                         "pinned %s cpu_usage %d mem %d/%d pages %s" % (
                             c.id, list(c.cpuset), list(c.pcpuset),
                             [list(x) for x in c.siblings], list(c.pinned),
                             c.cpu_usage, c.memory_usage, c.memory_mb,
                             [list(p) for p in c.pages]))
    if req is not None:
        lines.append("request %s" % json.dumps(
            dataclasses.asdict(req), sort_keys=True))
    return "\n".join(lines)
