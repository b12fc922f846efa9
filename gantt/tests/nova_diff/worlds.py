"""Seeded worlds and requests for the Nova differential test.

Plain data only (no Nova, no Gantt import): ``nova_side`` turns a world
into Nova's ComputeNode / service / aggregate / instance records and
``gantt_side`` into Gantt host reports, from the very same records.

A world is a handful of hosts (4-14) with everything a filter or weigher
of Nova reads: services up, down or disabled; vCPU, RAM and disk with
allocation ratios and reserved memory, sometimes overcommitted (usage
above what the ratios allow now); hypervisor type and version, the
``supported_instances`` triples and a ``cpu_info`` document; stats
(instances, I/O operations, failed builds, free-form keys some hosts lack),
metrics some hosts lack, and running instances (some of them server-group
members). Aggregates carry metadata for every aggregate filter and weigher
multiplier (availability zones, tenants, flavors, limits, extra specs,
image properties, multipliers, some of them unparsable). The world also
draws the scheduler options both sides are configured with.

A request is a flavor with extra specs (``capabilities:`` scoped, unscoped,
``aggregate_instance_extra_specs:``, ignored scopes), an image with
properties, a project, sometimes a zone, a server group (any of the four
policies, ``max_server_per_host``), ``same_host`` / ``different_host``
hints and a ``query`` hint for JsonFilter.
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


@dataclasses.dataclass(frozen=True)
class Request:
    flavor: str
    vcpus: int
    memory_mb: int
    root_gb: int
    ephemeral_gb: int
    swap: int
    extra_specs: dict
    image_id: str
    image_properties: dict
    project_id: str
    availability_zone: str | None
    group_policy: str | None    # server group policy, None: no group
    group_members: tuple        # instance uuids
    group_rules: dict
    same_host: tuple
    different_host: tuple
    query: str | None           # JsonFilter's hint
    near_ip: str | None         # SimpleCIDRAffinityFilter's hints
    cidr: str | None
    ignore_hosts: tuple = ()    # host names, in any case
    force_hosts: tuple = ()
    force_nodes: tuple = ()

    @property
    def disk_gb(self):
        return self.root_gb + self.ephemeral_gb + -(-self.swap // 1024)


def hints(req):
    """The request's scheduler hints (lists of strings, on both sides)."""
    out = {}
    if req.same_host:
        out["same_host"] = list(req.same_host)
    if req.different_host:
        out["different_host"] = list(req.different_host)
    if req.query:
        out["query"] = [req.query]
    if req.near_ip:
        out["build_near_host_ip"] = [req.near_ip]
        out["cidr"] = [req.cidr]
    return out


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
        "features": sorted(rng.sample(CPU_FEATURES, rng.randint(0, 5)))},
        sort_keys=True)


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
    images = tuple(tuple(sorted(_draw(rng, INSTANCE_IMAGE_PROPERTIES,
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
    hosts = tuple(dataclasses.replace(h, aggregates=tuple(sorted(
        name for name, names in members.items() if h.name in names)))
        for h in hosts)
    return World(seed=seed, hosts=hosts, aggregates=tuple(aggs),
                 config=_config(rng, hosts))


# -- requests --------------------------------------------------------------

#: extra specs a flavor may carry: (key, values)
EXTRA_SPECS = (
    ("capabilities:hypervisor_type", ("QEMU", "s== QEMU", "kvm",
                                      "<in> VMware", "<or> QEMU <or> kvm")),
    ("capabilities:hypervisor_version", (">= 8002000", "= 6002000",
                                         "< 9000000")),
    ("capabilities:cpu_info:arch", ("x86_64", "aarch64")),
    ("capabilities:cpu_info:vendor", ("Intel", "AMD")),
    ("capabilities:cpu_info:features", ("<in> avx", "<all-in> avx avx2",
                                        "<in> svm")),
    ("capabilities:cpu_info:topology:cores", (">= 16", "8")),
    ("capabilities:gpu", ("true", "<in> tr")),
    ("capabilities:num_instances", ("< 3", ">= 2")),
    ("capabilities:free_ram_mb", (">= 4096",)),
    ("aggregate_instance_extra_specs:ssd", ("true", "<in> tru")),
    ("aggregate_instance_extra_specs:gpu", ("true", "false")),
    ("ssd", ("true",)),
    ("hw:watchdog_action", ("none",)),
    ("quota:cpu_shares", ("1024",)),
    ("trait:HW_CPU_X86_AVX", ("required",)),
)

#: NUMA and CPU pinning extra specs: (key, values)
NUMA_SPECS = (
    ("hw:numa_nodes", ("1", "2")),
    ("hw:cpu_policy", ("dedicated", "dedicated", "shared", "mixed")),
    ("hw:cpu_thread_policy", ("prefer", "isolate", "require")),
    ("hw:mem_page_size", ("small", "large", "any", "2048")),
    ("hw:emulator_threads_policy", ("isolate", "share")),
)

IMAGE_PROPERTIES = (
    ("hw_architecture", ("x86_64", "aarch64", "amd64", "i686")),
    ("img_hv_type", ("qemu", "kvm", "xen")),
    ("hw_vm_mode", ("hvm", "xen")),
    ("img_hv_requested_version", (">=6.0", ">=8.2,<10", "<7")),
    ("os_distro", ("ubuntu", "centos", "windows")),
)

QUERIES = (
    '[">=", "$free_ram_mb", 4096]',
    '["and", [">=", "$free_disk_mb", 200000], ["<", "$num_instances", 4]]',
    '["or", ["=", "$hypervisor_type", "QEMU"], [">", "$vcpus_total", 16]]',
    '["not", ["<", "$vcpus_used", 8]]',
    '["in", "$host", "host01", "host03", "host05"]',
    '[">", "$num_io_ops", 1]',
    '["=", "$stats.gpu", "true"]',
    '["and", [">=", "$total_usable_ram_mb", 16384], '
    '["<=", "$vcpus_total", 16]]',
    '["or", [">", "$total_usable_disk_gb", 400], '
    '["=", "$availability_zone", "az1"]]',
    '["in", "$hypervisor_hostname", "host00", "host02"]',
    '["not", ["=", "$stats.rack", "r1"], ["=", "$host", "host01"]]',
)


def _draw(rng, pool, most):
    return {key: rng.choice(values)
            for key, values in rng.sample(pool, rng.randint(0, most))}


def _extra_specs(rng):
    specs = _draw(rng, EXTRA_SPECS, 2)
    if rng.random() < 0.35:
        specs.update(_draw(rng, NUMA_SPECS, 3))
        if specs.get("hw:cpu_policy") == "mixed":
            specs["hw:cpu_dedicated_mask"] = "^0"
    elif rng.random() < 0.25:
        # not with NUMA: Gantt does not model PCI NUMA affinity
        specs["pci_passthrough:alias"] = ",".join(
            "%s:%d" % (kind[0], rng.randint(1, 2))
            for kind in rng.sample(PCI_KINDS, rng.randint(1, 2)))
    return specs


def _group(rng, world):
    """(policy, members, rules) of the request's server group, or Nones."""
    policy = rng.choice((None, None, "affinity", "anti-affinity",
                         "soft-affinity", "soft-anti-affinity"))
    if policy is None:
        return None, (), {}
    running = [u for h in world.hosts for u in h.instances]
    members = tuple(rng.sample(running, min(len(running),
                                            rng.randint(0, 4))))
    rules = {}
    if policy == "anti-affinity" and rng.random() < 0.3:
        rules = {"max_server_per_host": 2}
    return policy, members, rules


def _hint(rng, world, chance):
    running = [u for h in world.hosts for u in h.instances]
    if not running or rng.random() >= chance:
        return ()
    return tuple(rng.sample(running, min(len(running), rng.randint(1, 2))))


def request(world, rng):
    """One request for ``world``, drawn from ``rng``."""
    policy, members, rules = _group(rng, world)
    # Nova's API refuses a zone no aggregate defines, but for its default
    zones = tuple(sorted({a.metadata["availability_zone"]
                          for a in world.aggregates
                          if "availability_zone" in a.metadata}))
    return Request(
        flavor=rng.choice(FLAVORS), vcpus=rng.choice((1, 1, 2, 4)),
        memory_mb=rng.choice((512, 1024, 2048, 8192)),
        root_gb=rng.choice((0, 10, 20, 40)),
        ephemeral_gb=rng.choice((0, 0, 20)), swap=rng.choice((0, 0, 512)),
        extra_specs=_extra_specs(rng),
        image_id=rng.choice(IMAGES),
        image_properties=_draw(rng, IMAGE_PROPERTIES, 4),
        project_id=rng.choice(PROJECTS),
        availability_zone=rng.choice((None, None, DEFAULT_ZONE) + zones),
        group_policy=policy, group_members=members, group_rules=rules,
        same_host=_hint(rng, world, 0.15),
        different_host=_hint(rng, world, 0.15),
        query=rng.choice(QUERIES) if rng.random() < 0.2 else None,
        **_near(rng, world), **_forced(rng, world))


def _names(rng, world, most, case=True):
    names = [h.name for h in rng.sample(world.hosts, rng.randint(
        1, min(most, len(world.hosts))))]
    if case and rng.random() < 0.3:
        names = [n.upper() for n in names]      # Nova ignores the case
    return tuple(names)


def _forced(rng, world):
    """``ignore_hosts``, ``force_hosts`` and ``force_nodes``, now and
    then (an admin's ``az:host:node`` or a rebuild's ignored host)."""
    out = {}
    if rng.random() < 0.1:
        out["ignore_hosts"] = _names(rng, world, 2)
    if rng.random() < 0.1:
        out["force_hosts"] = _names(rng, world, 2)
    if rng.random() < 0.05:
        out["force_nodes"] = _names(rng, world, 2, case=False)
    return out


def _near(rng, world):
    """``build_near_host_ip`` and ``cidr``, now and then."""
    if rng.random() >= 0.15:
        return {"near_ip": None, "cidr": None}
    return {"near_ip": host_ip(rng.choice(world.hosts)),
            "cidr": rng.choice(("/24", "/30", "/32"))}


def case(seed, count):
    """The world of ``seed`` and its ``count`` requests."""
    w = world(seed)
    rng = random.Random(seed * 7919 + 1)
    return w, [request(w, rng) for _ in range(count)]


def describe(world, req=None):
    """A compact, printable account of a world (and a request)."""
    lines = ["world %d, options %s" % (world.seed, json.dumps(
        world.config, sort_keys=True))]
    for agg in world.aggregates:
        lines.append("  %s %s" % (agg.name, json.dumps(agg.metadata,
                                                      sort_keys=True)))
    for h in world.hosts:
        lines.append(
            "  %s %s cpu %d/%dx%g ram %d+%d/%dx%g disk %d/%dx%g %s %d %s"
            " io %d fail %d inst %d %s %s %s aggs %s" % (
                h.name, h.state, h.vcpus_used, h.vcpus, h.cpu_ratio,
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
