"""The synthetic cloud every benchmark feeds to both sides.

One seeded generator, plain Python: no Gantt, Nova or Placement import, so
the Gantt venv and the reference venv build the very same hosts and the
very same request from it. Each side turns the plain records into its own
objects (Gantt ``ComputeNode``/SQL rows, Nova ``ComputeNode``/``HostState``,
Placement providers/consumers/allocations) and reports :func:`digest` of
what it was given, so that ``run_all.py`` can check that both sides saw
identical inputs.

The cloud (the shape of the reference harnesses in ``shared/bench``):

* hosts of 32 to 128 vCPU (allocation ratio 4), 128 to 512 GiB RAM (512 MiB
  reserved) and 1 to 7.5 TiB disk, filled 0 to 85 % by real instances of
  1 to 8 vCPU (about 30 per host);
* 3 availability zones, racks of 40 hosts, an ``ssd`` and an ``hpc``
  aggregate whose metadata overrides weigher multipliers (Nova reads it);
* 6 to 22 standard traits per host; 0.4 % of the hosts disabled;
* hypervisor QEMU on x86_64 (capabilities and supported instances);
* the request: m1.medium (2 vCPU, 4 GiB, 40 GiB) with
  ``capabilities:hypervisor_type=QEMU``, an x86_64/qemu/hvm image, and an
  anti-affinity server group whose 10 members run on 10 hosts.

``python benchmarks/fleet.py --hosts 1000 --json fleet.json`` writes the
cloud as JSON for a look at it.
"""

import argparse
import hashlib
import json
import random
import sys
import uuid

SEED = 42

#: (vcpus, memory_mb, local_gb, share)
HOST_SHAPES = (
    (32, 131072, 1024, 3),
    (64, 262144, 2048, 4),
    (96, 393216, 3840, 2),
    (128, 524288, 7680, 1),
)
CPU_RATIO = 4.0
RAM_RATIO = 1.0
DISK_RATIO = 1.0
RESERVED_MB = 512
MAX_FILL = 0.85

#: the sizes of the instances already running: (vcpus, memory_mb, disk_gb)
INSTANCE_SIZES = ((1, 2048, 20), (2, 4096, 40), (2, 4096, 40),
                  (4, 8192, 80), (4, 8192, 80), (8, 16384, 160))

ZONES = ("az-0", "az-1", "az-2")
RACK_SIZE = 40
COMMON_TRAITS = (
    "COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG", "COMPUTE_VOLUME_EXTEND",
    "COMPUTE_VOLUME_ATTACH_WITH_TAG", "COMPUTE_DEVICE_TAGGING",
    "COMPUTE_IMAGE_TYPE_QCOW2", "COMPUTE_IMAGE_TYPE_RAW")
OPTIONAL_TRAITS = (
    "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42",
    "HW_CPU_X86_AESNI", "HW_CPU_X86_SVM", "HW_CPU_X86_AVX512F",
    "HW_CPU_X86_SHA", "COMPUTE_VOLUME_MULTI_ATTACH", "COMPUTE_TRUSTED_CERTS",
    "COMPUTE_NODE", "COMPUTE_ACCELERATORS", "HW_NIC_SRIOV",
    "STORAGE_DISK_SSD", "COMPUTE_GRAPHICS_MODEL_VIRTIO",
    "COMPUTE_SECURITY_TPM_2_0", "HW_CPU_X86_BMI2")
DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"
CPU_FEATURES = ("avx", "avx2", "sse4.2", "aes", "sha-ni", "svm", "x2apic")

#: aggregates besides the zones and racks: name, every Nth host, metadata
WEIGHER_AGGREGATES = (
    ("ssd", 7, {"ssd": "true", "disk_weight_multiplier": "2.0"}),
    ("hpc", 13, {"hpc": "true", "cpu_weight_multiplier": "3.0",
                 "ram_weight_multiplier": "0.5"}),
)

#: the request every benchmark asks for
FLAVOR = {"name": "m1.medium", "vcpus": 2, "memory_mb": 4096, "root_gb": 40,
          "ephemeral_gb": 0, "swap": 0,
          "extra_specs": {"capabilities:hypervisor_type": "QEMU"}}
IMAGE_PROPERTIES = {"hw_architecture": "x86_64", "img_hv_type": "qemu",
                    "hw_vm_mode": "hvm", "os_distro": "ubuntu"}
GROUP_SIZE = 10
PROJECT_ID = "project-bench"
USER_ID = "user-bench"

# uuid namespaces (the top 32 bits of the 128)
_NS_HOST, _NS_INSTANCE, _NS_AGGREGATE, _NS_MISC = 1, 2, 3, 4


def make_uuid(number, namespace):
    """A deterministic uuid string, distinct per (number, namespace)."""
    return str(uuid.UUID(int=(namespace << 96) | number))


def instance_uuid(number):
    return make_uuid(number, _NS_INSTANCE)


def aggregate_uuid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "gantt-bench-agg/" + name))


class Cloud:
    """``hosts`` (list of dicts), ``aggregates``, ``group`` and ``request``.

    A host dict holds: ``index``, ``name``, ``uuid``, ``vcpus``,
    ``memory_mb``, ``disk_gb``, ``instances`` (list of indexes into
    :data:`INSTANCE_SIZES`), ``first_instance`` (instance ``k`` of the host
    has uuid ``instance_uuid(first_instance + k)``), ``members`` (uuids of
    server-group members also running there), ``used`` (per resource class,
    members included), ``traits``, ``aggregates`` (names), ``zone``,
    ``rack``, ``disabled``, ``io_ops``, ``failed_builds``,
    ``hypervisor_version``.
    """

    def __init__(self, hosts, aggregates, group, seed):
        self.hosts = hosts
        self.aggregates = aggregates
        self.group = group
        self.seed = seed

    def __len__(self):
        return len(self.hosts)

    @property
    def instance_count(self):
        return sum(len(h["instances"]) + len(h["members"])
                   for h in self.hosts)

    def request(self):
        """The request (plain data): flavor, image, server group."""
        return {"flavor": FLAVOR, "image_properties": IMAGE_PROPERTIES,
                "group": self.group, "project_id": PROJECT_ID,
                "user_id": USER_ID,
                "instance_uuid": make_uuid(1, _NS_MISC)}

    def instances_of(self, host):
        """``(uuid, (vcpus, memory_mb, disk_gb))`` of every instance there,
        server-group members included."""
        first = host["first_instance"]
        for k, size in enumerate(host["instances"]):
            yield instance_uuid(first + k), INSTANCE_SIZES[size]
        for member in host["members"]:
            yield member, INSTANCE_SIZES[1]

    def as_json(self):
        return {"seed": self.seed, "hosts": self.hosts,
                "aggregates": self.aggregates, "request": self.request()}


def capacity(host):
    """Usable amount per class: ``(total - reserved) * ratio``."""
    return {"VCPU": host["vcpus"] * CPU_RATIO,
            "MEMORY_MB": (host["memory_mb"] - RESERVED_MB) * RAM_RATIO,
            "DISK_GB": host["disk_gb"] * DISK_RATIO}


def _fill(rng, vcpus, memory_mb, disk_gb):
    """Instance sizes filling a host up to a random 0..85 % of its room."""
    target = rng.random() * MAX_FILL
    room = (vcpus * CPU_RATIO * target,
            (memory_mb - RESERVED_MB) * RAM_RATIO * target,
            disk_gb * DISK_RATIO * target)
    used = [0, 0, 0]
    sizes = []
    misses = 0
    while misses < 3:
        k = rng.randrange(len(INSTANCE_SIZES))
        size = INSTANCE_SIZES[k]
        if all(used[i] + size[i] <= room[i] for i in range(3)):
            sizes.append(k)
            for i in range(3):
                used[i] += size[i]
        else:
            misses += 1
    return sizes, used


def _host(rng, index, shapes, next_instance):
    vcpus, memory_mb, disk_gb, _share = rng.choice(shapes)
    sizes, used = _fill(rng, vcpus, memory_mb, disk_gb)
    name = "compute-%06d" % index
    disabled = index % 250 == 7
    traits = list(COMMON_TRAITS) + rng.sample(
        OPTIONAL_TRAITS, rng.randint(0, len(OPTIONAL_TRAITS)))
    if disabled:
        traits.append(DISABLED_TRAIT)
    aggregates = [ZONES[index % len(ZONES)], "rack-%d" % (index // RACK_SIZE)]
    aggregates += [name_ for name_, every, _md in WEIGHER_AGGREGATES
                   if index % every == 0]
    return {
        "index": index, "name": name, "uuid": make_uuid(index + 1, _NS_HOST),
        "vcpus": vcpus, "memory_mb": memory_mb, "disk_gb": disk_gb,
        "instances": sizes, "first_instance": next_instance, "members": [],
        "used": {"VCPU": used[0], "MEMORY_MB": used[1], "DISK_GB": used[2]},
        "traits": sorted(traits), "aggregates": aggregates,
        "zone": ZONES[index % len(ZONES)], "rack": index // RACK_SIZE,
        "disabled": disabled, "io_ops": rng.randint(0, 4),
        "failed_builds": 1 if index % 97 == 0 else 0,
        "hypervisor_version": 8002000 + (index % 3) * 1000,
    }


def _aggregates(count):
    """name -> {"uuid", "metadata"} for every aggregate of the cloud."""
    aggs = {}
    for zone in ZONES:
        aggs[zone] = {"uuid": aggregate_uuid(zone),
                      "metadata": {"availability_zone": zone}}
    for rack in range((count + RACK_SIZE - 1) // RACK_SIZE):
        name = "rack-%d" % rack
        aggs[name] = {"uuid": aggregate_uuid(name),
                      "metadata": {"rack": str(rack)}}
    for name, _every, metadata in WEIGHER_AGGREGATES:
        aggs[name] = {"uuid": aggregate_uuid(name), "metadata": metadata}
    return aggs


def build(count, seed=SEED):
    """The cloud of ``count`` hosts for ``seed`` (same input, same cloud)."""
    rng = random.Random(seed)
    shapes = [s for s in HOST_SHAPES for _ in range(s[3])]
    hosts = []
    next_instance = 1
    for index in range(count):
        host = _host(rng, index, shapes, next_instance)
        next_instance += len(host["instances"])
        hosts.append(host)
    group = {"uuid": make_uuid(9, _NS_MISC), "name": "web-tier",
             "policy": "anti-affinity", "members": [], "hosts": []}
    member_size = INSTANCE_SIZES[1]
    for host in rng.sample(hosts, min(GROUP_SIZE, count)):
        member = instance_uuid(next_instance)
        next_instance += 1
        host["members"].append(member)
        for i, rc in enumerate(("VCPU", "MEMORY_MB", "DISK_GB")):
            host["used"][rc] += member_size[i]
        group["members"].append(member)
        group["hosts"].append(host["name"])
    return Cloud(hosts, _aggregates(count), group, seed)


def digest(cloud):
    """A short hash of everything a side is given (hosts and request)."""
    h = hashlib.sha256()
    h.update(json.dumps([cloud.seed, cloud.aggregates, cloud.request()],
                        sort_keys=True).encode())
    for host in cloud.hosts:
        h.update(repr(sorted(host.items())).encode())
    return h.hexdigest()[:16]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--json", help="write the cloud to this file")
    args = parser.parse_args(argv)
    cloud = build(args.hosts, args.seed)
    print("%d hosts, %d instances, %d aggregates, digest %s" % (
        len(cloud), cloud.instance_count, len(cloud.aggregates),
        digest(cloud)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(cloud.as_json(), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
