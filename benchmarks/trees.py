"""The provider-tree cloud: NUMA cells, SR-IOV PFs and sharing disk pools.

Plain Python like :mod:`fleet` (no Gantt, Nova or Placement import), so
that both venvs build the very same providers, usage and request. It starts
from the hosts of :func:`fleet.build` (names, uuids, sizes, traits,
aggregates, running instances) and turns each host into a provider tree,
the shape Nova's libvirt driver reports with NUMA in Placement and
Neutron's SR-IOV agent adds its physical functions to:

* the compute root keeps the host's traits and aggregates and its local
  ``DISK_GB``, except on diskless hosts (:data:`DISKLESS_SHARE`), which
  have no inventory of their own;
* two NUMA cells (trait ``HW_NUMA_ROOT``) hold half of the ``VCPU`` and of
  the ``MEMORY_MB`` each;
* one SR-IOV physical function per cell (``SRIOV_NET_VF`` inventory, trait
  ``CUSTOM_PHYSNET_A`` or ``CUSTOM_PHYSNET_B``);
* one sharing ``DISK_GB`` pool (trait ``MISC_SHARES_VIA_AGGREGATE``) per
  aggregate of :data:`POOL_HOSTS` hosts; every root of the aggregate is a
  member, so diskless hosts take their disk from it (and the others may).

Every running instance holds its VCPU and MEMORY_MB in one cell (the one
with the most free memory), its disk on the root or, for a diskless host,
on its pool, and one in :data:`VF_EVERY` a VF of its cell's PF.

The request (Nova's, for an instance with an SR-IOV port and NUMA
affinity): ``resources=DISK_GB:20`` unsuffixed, ``resources_CPU=VCPU:2,
MEMORY_MB:4096``, ``resources_NET=SRIOV_NET_VF:1`` with
``required_NET=CUSTOM_PHYSNET_A``, ``same_subtree=_CPU,_NET``,
``group_policy=isolate``, ``root_required=!COMPUTE_STATUS_DISABLED`` (what
Nova's compute-status request filter adds) and ``limit=1000``.

Providers are counted as Placement counts them: every provider row (five
per host, plus the pools).

Placement (16.0) returns fewer candidates for this request than the data
allows: when the unsuffixed group is served by a sharing provider alone
and granular groups are present, it pairs each pool with one host of its
aggregate only. ``_alloc_candidates_multiple_providers`` builds one
AllocationRequest per (pool, anchor host) into a set, and
``AllocationRequest.__eq__``/``__hash__`` ignore the anchor, so all but
one of them collapse. Gantt pairs the pool with every host of the
aggregate; the candidates that take nothing from a pool are the same on
both sides (``candidates.py`` checks it at ``--check-hosts`` sizes).

``python benchmarks/trees.py --hosts 1000`` prints the cloud's size.
"""

import argparse
import hashlib
import json
import random
import sys

import fleet

#: hosts per sharing aggregate (and pool)
POOL_HOSTS = 100
#: the share of hosts without local disk
DISKLESS_SHARE = 0.5
#: capacity of each sharing pool
POOL_DISK_GB = 256 * 1024
#: VFs per physical function
VFS_PER_PF = 16
#: one running instance in VF_EVERY has a VF
VF_EVERY = 4
#: per host, the physnet of the PF of cell 0 and of cell 1
PHYSNET_PATTERNS = (("A", "B"), ("A", "B"), ("B", "A"), ("B", "A"),
                    ("A", "A"), ("B", "B"))
PHYSNET_TRAITS = ("CUSTOM_PHYSNET_A", "CUSTOM_PHYSNET_B")
NUMA_TRAIT = "HW_NUMA_ROOT"
SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
#: provider ids: pool k, then its hosts, each root then cell 0, PF 0,
#: cell 1, PF 1 (stable whatever the cloud's size)
PER_HOST = 5
PER_POOL = 1 + POOL_HOSTS * PER_HOST

#: the request, as plain data: suffix -> (resources, required traits)
REQUEST_GROUPS = (
    ("", {"DISK_GB": 20}, ()),
    ("_CPU", {"VCPU": 2, "MEMORY_MB": 4096}, ()),
    ("_NET", {"SRIOV_NET_VF": 1}, ("CUSTOM_PHYSNET_A",)),
)
GROUP_POLICY = "isolate"
SAME_SUBTREE = (("_CPU", "_NET"),)
ROOT_FORBIDDEN = (fleet.DISABLED_TRAIT,)
LIMIT = 1000

# uuid namespaces (fleet's end at 6)
_NS_CHILD, _NS_POOL = 11, 12


def inventory(total, reserved=0, ratio=1.0):
    """``(total, reserved, min_unit, max_unit, step_size, ratio)``."""
    return (total, reserved, 1, total, 1, ratio)


def grow(populator, count, batch, progress=None):
    """Insert the hosts of ``populator.tc`` (and their pools) not inserted
    yet, up to ``count`` hosts, ``batch`` at a time through
    ``populator._insert(lo, hi)``; the two sides' populators share this.

    :returns: whether any host was inserted
    """
    count = min(count, len(populator.tc.hosts))
    start = populator.done
    for lo in range(start, count, batch):
        hi = min(lo + batch, count)
        populator._insert(lo, hi)
        if progress:
            progress(populator.tc.provider_count(hi))
    populator.done = max(start, count)
    return count > start


def pool_name(k):
    return "pool-%d" % k


class TreeCloud:
    """The fleet's hosts as provider trees, plus the sharing pools.

    ``providers``: every provider, in id order, as a dict with ``id``,
    ``uuid``, ``name``, ``parent`` (uuid or None), ``root`` (uuid),
    ``parent_id``, ``root_id``, ``inventories`` (class -> inventory
    tuple), ``traits``, ``aggregates`` (uuids), ``kind`` (root, numa, pf,
    pool) and ``host`` (the fleet host index, None for a pool).
    ``consumers``: ``(uuid, host index, {provider uuid: {class: used}})``.
    """

    def __init__(self, cloud, providers, consumers):
        self.cloud = cloud
        self.hosts = cloud.hosts
        self.providers = providers
        self.consumers = consumers
        self.aggregates = dict(cloud.aggregates)
        for k in range(self.pool_count(len(cloud.hosts))):
            name = pool_name(k)
            self.aggregates[name] = {"uuid": fleet.aggregate_uuid(name),
                                     "metadata": {}}
        self.by_uuid = {p["uuid"]: p for p in providers}

    @staticmethod
    def pool_count(hosts):
        return (hosts + POOL_HOSTS - 1) // POOL_HOSTS

    def provider_count(self, hosts):
        """Placement's count of providers once ``hosts`` are in."""
        return hosts * PER_HOST + self.pool_count(hosts)

    def providers_upto(self, lo, hi):
        """The providers of hosts ``lo..hi-1`` and of their pools not
        among the first ``lo`` hosts' pools, parents before children."""
        first_pool = self.pool_count(lo)
        return [p for p in self.providers
                if (p["host"] is not None and lo <= p["host"] < hi)
                or (p["host"] is None and first_pool <= p["pool"]
                    < self.pool_count(hi))]

    def consumers_upto(self, lo, hi):
        return [c for c in self.consumers if lo <= c[1] < hi]

    def request(self):
        return {"groups": [(s, dict(r), list(t))
                           for s, r, t in REQUEST_GROUPS],
                "group_policy": GROUP_POLICY,
                "same_subtree": [list(s) for s in SAME_SUBTREE],
                "root_forbidden": list(ROOT_FORBIDDEN), "limit": LIMIT,
                "project_id": fleet.PROJECT_ID, "user_id": fleet.USER_ID}


def _pool(k):
    name = pool_name(k)
    pid = k * PER_POOL + 1
    uuid = fleet.make_uuid(k + 1, _NS_POOL)
    return {"id": pid, "uuid": uuid, "name": name, "parent": None,
            "root": uuid, "parent_id": None, "root_id": pid,
            "inventories": {"DISK_GB": inventory(POOL_DISK_GB)},
            "traits": [SHARING_TRAIT],
            "aggregates": [fleet.aggregate_uuid(name)], "kind": "pool",
            "host": None, "pool": k}


def _tree(host, diskless, physnets):
    """The five providers of one host, parents before children."""
    i = host["index"]
    k = i // POOL_HOSTS
    root_id = k * PER_POOL + 2 + (i % POOL_HOSTS) * PER_HOST
    root = {"id": root_id, "uuid": host["uuid"], "name": host["name"],
            "parent": None, "root": host["uuid"], "parent_id": None,
            "root_id": root_id,
            "inventories": {} if diskless else {
                "DISK_GB": inventory(host["disk_gb"], 0, fleet.DISK_RATIO)},
            "traits": list(host["traits"]),
            "aggregates": [fleet.aggregate_uuid(a) for a in
                           host["aggregates"]]
            + [fleet.aggregate_uuid(pool_name(k))],
            "kind": "root", "host": i, "pool": k}
    out = [root]
    for cell in range(2):
        numa_id = root_id + 1 + 2 * cell
        numa = {
            "id": numa_id,
            "uuid": fleet.make_uuid(i * 4 + 2 * cell + 1, _NS_CHILD),
            "name": "%s_numa%d" % (host["name"], cell),
            "parent": root["uuid"], "root": root["uuid"],
            "parent_id": root_id, "root_id": root_id,
            "inventories": {
                "VCPU": inventory(host["vcpus"] // 2, 0, fleet.CPU_RATIO),
                "MEMORY_MB": inventory(host["memory_mb"] // 2,
                                       fleet.RESERVED_MB // 2,
                                       fleet.RAM_RATIO)},
            "traits": [NUMA_TRAIT], "aggregates": [], "kind": "numa",
            "host": i, "pool": k, "cell": cell}
        pf = {
            "id": numa_id + 1,
            "uuid": fleet.make_uuid(i * 4 + 2 * cell + 2, _NS_CHILD),
            "name": "%s_pf%d" % (host["name"], cell),
            "parent": numa["uuid"], "root": root["uuid"],
            "parent_id": numa_id, "root_id": root_id,
            "inventories": {"SRIOV_NET_VF": inventory(VFS_PER_PF)},
            "traits": ["CUSTOM_PHYSNET_" + physnets[cell]],
            "aggregates": [], "kind": "pf", "host": i, "pool": k,
            "cell": cell}
        out += [numa, pf]
    return out


def _usage(cloud, host, tree, pool, consumers):
    """Place the host's running instances in its tree (see the module
    doc); appends to ``consumers``."""
    root, cells = tree[0], (tree[1], tree[3])
    pfs = (tree[2], tree[4])
    free = [c["inventories"]["MEMORY_MB"][0] - c["inventories"][
        "MEMORY_MB"][1] for c in cells]
    vfs = [0, 0]
    disk = root if root["inventories"] else pool
    for n, (consumer, (vcpus, memory_mb, disk_gb)) in enumerate(
            cloud.instances_of(host)):
        cell = 0 if free[0] >= free[1] else 1
        free[cell] -= memory_mb
        alloc = {cells[cell]["uuid"]: {"VCPU": vcpus,
                                       "MEMORY_MB": memory_mb},
                 disk["uuid"]: {"DISK_GB": disk_gb}}
        if n % VF_EVERY == 0 and vfs[cell] < VFS_PER_PF:
            vfs[cell] += 1
            alloc[pfs[cell]["uuid"]] = {"SRIOV_NET_VF": 1}
        consumers.append((consumer, host["index"], alloc))


def build(count, seed=fleet.SEED):
    """The tree cloud of ``count`` hosts (same input, same cloud)."""
    cloud = fleet.build(count, seed)
    rng = random.Random(seed * 7919 + 1)
    providers, consumers = [], []
    pool = None
    for host in cloud.hosts:
        k = host["index"] // POOL_HOSTS
        if pool is None or pool["pool"] != k:
            pool = _pool(k)
            providers.append(pool)
        diskless = rng.random() < DISKLESS_SHARE
        tree = _tree(host, diskless, rng.choice(PHYSNET_PATTERNS))
        providers += tree
        _usage(cloud, host, tree, pool, consumers)
    return TreeCloud(cloud, providers, consumers)


def digest(tc):
    """A short hash of everything a side is given."""
    h = hashlib.sha256()
    h.update(fleet.digest(tc.cloud).encode())
    h.update(json.dumps(tc.request(), sort_keys=True).encode())
    for p in tc.providers:
        h.update(repr(sorted(p.items())).encode())
    for c in tc.consumers:
        h.update(repr((c[0], c[1], sorted(c[2].items()))).encode())
    return h.hexdigest()[:16]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=fleet.SEED)
    args = parser.parse_args(argv)
    tc = build(args.hosts, args.seed)
    diskless = sum(1 for p in tc.providers
                   if p["kind"] == "root" and not p["inventories"])
    with_a = sum(1 for p in tc.providers if p["kind"] == "pf"
                 and p["traits"] == ["CUSTOM_PHYSNET_A"])
    print("%d hosts, %d providers (%d pools), %d diskless, %d PFs on "
          "physnet A, %d consumers, %d allocations, digest %s" % (
              len(tc.hosts), len(tc.providers),
              tc.pool_count(len(tc.hosts)), diskless, with_a,
              len(tc.consumers),
              sum(len(a) for _c, _h, alloc in tc.consumers
                  for a in alloc.values()), digest(tc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
