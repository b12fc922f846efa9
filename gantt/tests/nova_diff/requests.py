"""Seeded requests for the Nova differential test (plain data, like
:mod:`worlds`, whose hosts they are drawn against).

A request is a flavor with extra specs (``capabilities:`` scoped,
unscoped, ``aggregate_instance_extra_specs:``, ignored scopes, ``trait:``,
NUMA and CPU pinning, PCI aliases), an image with properties, a project,
sometimes a zone, a server group (any of the four policies,
``max_server_per_host``), ``same_host`` / ``different_host`` hints, a
``query`` hint for JsonFilter, ``build_near_host_ip`` / ``cidr``, and now
and then ignored or forced hosts and nodes.
"""

import dataclasses
import random

from gantt.tests.nova_diff import worlds
from gantt.tests.nova_diff.worlds import DEFAULT_ZONE
from gantt.tests.nova_diff.worlds import FLAVORS
from gantt.tests.nova_diff.worlds import IMAGES
from gantt.tests.nova_diff.worlds import PCI_KINDS
from gantt.tests.nova_diff.worlds import PROJECTS


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
    dest_host: str | None = None    # requested_destination
    dest_node: str | None = None
    dest_aggregates: tuple = ()     # "uuid,uuid" any-of sets
    dest_cell: int | None = None    # index into worlds.CELLS
    cross_cell: bool = False        # allow_cross_cell_move

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


def gantt_hints(req):
    """:func:`hints`, and ``allow_cross_cell_move``: a field of Nova's
    Destination, a scheduler hint on Gantt's wire."""
    out = hints(req)
    if req.cross_cell:
        out["allow_cross_cell_move"] = ["true"]
    return out


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
    ("hw:maxphysaddr_bits", ("42", "46")),
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


def _extra_specs(rng):
    specs = worlds.draw(rng, EXTRA_SPECS, 2)
    if rng.random() < 0.35:
        specs.update(worlds.draw(rng, NUMA_SPECS, 3))
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
        image_properties=worlds.draw(rng, IMAGE_PROPERTIES, 4),
        project_id=rng.choice(PROJECTS),
        availability_zone=rng.choice((None, None, DEFAULT_ZONE) + zones),
        group_policy=policy, group_members=members, group_rules=rules,
        same_host=_hint(rng, world, 0.15),
        different_host=_hint(rng, world, 0.15),
        query=rng.choice(QUERIES) if rng.random() < 0.2 else None,
        **_near(rng, world), **_forced(rng, world),
        **_destination(rng, world))


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


def _destination(rng, world):
    """A requested destination (a host, maybe its node; a cell, maybe
    with a cross-cell move allowed; required aggregates), now and then."""
    out = {}
    if rng.random() < 0.08:
        out["dest_host"] = rng.choice(world.hosts).name
        if rng.random() < 0.5:
            out["dest_node"] = out["dest_host"]
    if len({h.cell for h in world.hosts}) > 1 and rng.random() < 0.3:
        out["dest_cell"] = rng.randint(0, 1)
        out["cross_cell"] = rng.random() < 0.6
    if world.aggregates and rng.random() < 0.08:
        out["dest_aggregates"] = (",".join(a.uuid for a in rng.sample(
            world.aggregates, min(2, rng.randint(1, len(world.aggregates))))),)
    return out


def _near(rng, world):
    """``build_near_host_ip`` and ``cidr``, now and then."""
    if rng.random() >= 0.15:
        return {"near_ip": None, "cidr": None}
    return {"near_ip": worlds.host_ip(rng.choice(world.hosts)),
            "cidr": rng.choice(("/24", "/30", "/32"))}


def case(seed, count):
    """The world of ``seed`` and its ``count`` requests."""
    w = worlds.world(seed)
    rng = random.Random(seed * 7919 + 1)
    return w, [request(w, rng) for _ in range(count)]
