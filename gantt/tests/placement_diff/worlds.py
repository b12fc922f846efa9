"""Seeded worlds and requests for the Placement differential test.

A *world* is a small cloud as Placement sees it: provider trees (compute
roots with NUMA, SR-IOV PF and GPU children, flat computes, baremetal
nodes), sharing providers in aggregates, inventories with reserved amounts,
allocation ratios, min/max units and step sizes, and existing usage made of
real consumers' allocations, sometimes above what a provider has now (its
inventory shrank after the allocations were made). Every 80th world is a
large fleet of 500 compute hosts. A *request* is one
``GET /allocation_candidates`` (microversion 1.39): an unsuffixed group
and/or granular groups, group_policy, same_subtree (with resourceless
groups), root_required, in_tree, member_of (any-of and forbidden) and
required / forbidden / any-of traits.

Both are plain data, independent of Placement and of Gantt: each side
turns them into its own form (placement_side.py, gantt_side.py). The same
seed always gives the same world and the same requests.
"""

import dataclasses
import random
import uuid as uuidlib

SHARES = "MISC_SHARES_VIA_AGGREGATE"
DISABLED = "COMPUTE_STATUS_DISABLED"

# resource classes, traits and aggregates the generator draws from
BAREMETAL_CLASSES = ("CUSTOM_BAREMETAL_GOLD", "CUSTOM_BAREMETAL_SILVER")
PHYSNETS = ("CUSTOM_PHYSNET_A", "CUSTOM_PHYSNET_B")
VGPU_TYPES = ("CUSTOM_VGPU_A", "CUSTOM_VGPU_B")
ROOT_TRAITS = ("HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "CUSTOM_GOLD",
               "CUSTOM_SILVER")
NUMA_TRAITS = ("HW_NUMA_ROOT", "CUSTOM_NUMA_FAST")
NIC_TRAITS = ("HW_NIC_OFFLOAD_GENEVE", "HW_NIC_SRIOV")
BM_TRAITS = ("CUSTOM_BM_RAID", "CUSTOM_GOLD")
# a trait Placement knows (it is created) that no provider has
NOWHERE = "CUSTOM_NOWHERE"
CUSTOM_TRAITS = tuple(sorted(
    {t for t in ROOT_TRAITS + NUMA_TRAITS + NIC_TRAITS + BM_TRAITS
     + PHYSNETS + VGPU_TYPES + (NOWHERE,) if t.startswith("CUSTOM_")}))
CUSTOM_CLASSES = BAREMETAL_CLASSES
AGGREGATES = ("az1", "az2", "rack1", "ssd")
#: what a scenario needs of a tree: a flat compute (one provider)
FLAT = "flat"
#: worlds ``seed % LARGE_EVERY == LARGE_EVERY - 1`` are large fleets
LARGE_EVERY = 80
LARGE_HOSTS = 500


@dataclasses.dataclass(frozen=True)
class Inventory:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 0          # 0: the total
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def max(self):
        return self.max_unit or self.total

    @property
    def capacity(self):
        return int((self.total - self.reserved) * self.allocation_ratio)

    def fits(self, used, amount):
        """Whether Placement accepts ``amount`` more on ``used``."""
        return (self.min_unit <= amount <= self.max
                and amount % self.step_size == 0
                and used + amount <= self.capacity)

    def as_dict(self):
        return {"total": self.total, "reserved": self.reserved,
                "min_unit": self.min_unit, "max_unit": self.max,
                "step_size": self.step_size,
                "allocation_ratio": self.allocation_ratio}


@dataclasses.dataclass
class Provider:
    uuid: str
    name: str
    parent: str | None
    inventories: dict          # resource class -> Inventory
    traits: frozenset
    aggregates: frozenset      # aggregate uuids


@dataclasses.dataclass
class World:
    seed: int
    providers: list            # parents before their children
    consumers: list            # of {rp uuid: {rc: amount}}
    aggregates: dict           # name -> uuid
    # rp uuid -> {rc: Inventory} the inventories had when the consumers
    # were allocated; the providers hold the smaller ones they have now
    # (usage above capacity: loaded into Placement in that order)
    before: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.by_uuid = {p.uuid: p for p in self.providers}

    def root_of(self, uuid):
        p = self.by_uuid[uuid]
        while p.parent:
            p = self.by_uuid[p.parent]
        return p.uuid

    def roots(self):
        return [p for p in self.providers if p.parent is None]

    def tree(self, root):
        return [p for p in self.providers if self.root_of(p.uuid) == root]

    def usage(self):
        """{rp uuid: {rc: used}} summed over the consumers."""
        used = {}
        for consumer in self.consumers:
            for rp, amounts in consumer.items():
                for rc, amount in amounts.items():
                    used.setdefault(rp, {}).setdefault(rc, 0)
                    used[rp][rc] += amount
        return used

    def names(self):
        """uuid -> readable name, for providers and aggregates."""
        out = {p.uuid: p.name for p in self.providers}
        out.update({u: "agg:" + n for n, u in self.aggregates.items()})
        return out

    def describe(self):
        used = self.usage()
        agg_names = {u: n for n, u in self.aggregates.items()}
        lines = ["world seed=%d" % self.seed]
        for p in self.providers:
            depth = 0
            q = p
            while q.parent:
                depth += 1
                q = self.by_uuid[q.parent]
            lines.append("%s%s %s traits=%s aggs=%s" % (
                "  " * depth, p.name, p.uuid, sorted(p.traits),
                sorted(agg_names[a] for a in p.aggregates)))
            for rc, inv in sorted(p.inventories.items()):
                old = self.before.get(p.uuid, {}).get(rc)
                lines.append("%s    %s %s used=%d%s" % (
                    "  " * depth, rc, _inv_text(inv),
                    used.get(p.uuid, {}).get(rc, 0),
                    " (shrunk from total=%d)" % old.total
                    if old and old != inv else ""))
        return "\n".join(lines)


def _inv_text(inv):
    return "total=%d reserved=%d min=%d max=%d step=%d ratio=%g cap=%d" % (
        inv.total, inv.reserved, inv.min_unit, inv.max, inv.step_size,
        inv.allocation_ratio, inv.capacity)


@dataclasses.dataclass(frozen=True)
class Group:
    suffix: str                          # "" for the unsuffixed group
    resources: tuple = ()                # of (rc, amount), sorted
    required: tuple = ()                 # of frozensets: one of each
    forbidden: frozenset = frozenset()
    member_of: tuple = ()                # of frozensets: one of each
    forbidden_aggs: frozenset = frozenset()
    in_tree: str | None = None

    def describe(self, names):
        def n(x):
            return names.get(x, x)

        parts = ["resources%s=%s" % (self.suffix, ",".join(
            "%s:%d" % ra for ra in self.resources))]
        for anyof in self.required:
            parts.append("required%s=%s" % (self.suffix, "in:" * (
                len(anyof) > 1) + ",".join(sorted(anyof))))
        if self.forbidden:
            parts.append("required%s=%s" % (self.suffix, ",".join(
                "!" + t for t in sorted(self.forbidden))))
        for anyof in self.member_of:
            parts.append("member_of%s=%s" % (self.suffix, "in:" * (
                len(anyof) > 1) + ",".join(sorted(n(a) for a in anyof))))
        if self.forbidden_aggs:
            parts.append("member_of%s=!%s" % (self.suffix, ",".join(
                sorted(n(a) for a in self.forbidden_aggs))))
        if self.in_tree:
            parts.append("in_tree%s=%s" % (self.suffix, n(self.in_tree)))
        return "&".join(parts)


@dataclasses.dataclass(frozen=True)
class Request:
    groups: tuple                        # of Group
    group_policy: str | None = None      # None, "none", "isolate"
    same_subtree: tuple = ()             # of frozensets of suffixes
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()

    def describe(self, names=None):
        names = names or {}
        parts = [g.describe(names) for g in self.groups]
        if self.group_policy:
            parts.append("group_policy=" + self.group_policy)
        for s in self.same_subtree:
            parts.append("same_subtree=" + ",".join(sorted(s)))
        if self.root_required or self.root_forbidden:
            parts.append("root_required=" + ",".join(
                sorted(self.root_required)
                + ["!" + t for t in sorted(self.root_forbidden)]))
        return "&".join(parts)


# --------------------------------------------------------------- worlds


class _Builder:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.providers = []
        self.aggregates = {name: self.uuid() for name in AGGREGATES}

    def uuid(self):
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def add(self, name, parent=None, inventories=None, traits=(),
            aggregates=()):
        p = Provider(self.uuid(), name, parent, dict(inventories or {}),
                     frozenset(traits),
                     frozenset(self.aggregates[a] for a in aggregates))
        self.providers.append(p)
        return p

    def some(self, choices, p):
        return [c for c in choices if self.rng.random() < p]

    def root_aggs(self):
        r = self.rng
        aggs = []
        if r.random() < 0.8:
            aggs.append(r.choice(("az1", "az2")))
        if r.random() < 0.4:
            aggs.append("rack1")
        return aggs

    def root_traits(self):
        traits = self.some(ROOT_TRAITS, 0.4)
        if self.rng.random() < 0.15:
            traits.append(DISABLED)
        return traits

    # inventories --------------------------------------------------------

    def vcpu(self, lo=4, hi=16):
        r = self.rng
        total = r.randint(lo, hi)
        return Inventory(
            total=total, reserved=r.choice((0, 0, 0, 1, 2)),
            max_unit=r.choice((0, 0, 0, max(1, total // 2))),
            step_size=r.choice((1, 1, 1, 1, 2)),
            allocation_ratio=r.choice((1.0, 1.0, 1.5, 2.0, 4.0)))

    def memory(self, lo=2, hi=16):
        r = self.rng
        total = 1024 * r.randint(lo, hi)
        return Inventory(
            total=total, reserved=r.choice((0, 0, 512)),
            min_unit=r.choice((1, 1, 256)),
            max_unit=r.choice((0, 0, 0, total // 2)),
            step_size=r.choice((1, 1, 256)),
            allocation_ratio=r.choice((1.0, 1.0, 1.5)))

    def disk(self, lo=50, hi=800):
        r = self.rng
        total = r.randint(lo, hi)
        return Inventory(
            total=total, reserved=r.choice((0, 0, 10)),
            max_unit=r.choice((0, 0, 0, total // 2)),
            step_size=r.choice((1, 1, 1, 5)),
            allocation_ratio=r.choice((1.0, 1.0, 1.2)))

    def small(self, lo, hi):
        r = self.rng
        total = r.randint(lo, hi)
        return Inventory(total=total, reserved=r.choice((0, 0, 0, 1)),
                         max_unit=r.choice((0, 0, max(1, total // 2))))

    # trees --------------------------------------------------------------

    def nested_compute(self, i):
        r = self.rng
        inv = {}
        if r.random() < 0.7:
            inv["DISK_GB"] = self.disk()
        root = self.add("cn%d" % i, None, inv, self.root_traits(),
                        self.root_aggs())
        numas = []
        for n in range(r.choice((1, 2, 2, 2))):
            inv = {"VCPU": self.vcpu(), "MEMORY_MB": self.memory()}
            if r.random() < 0.3:
                inv["PCPU"] = Inventory(total=r.randint(2, 8))
            traits = self.some(NUMA_TRAITS[1:], 0.3)
            if r.random() < 0.85:
                traits.append("HW_NUMA_ROOT")
            aggs = ["ssd"] if r.random() < 0.08 else []
            numas.append(self.add("cn%d-numa%d" % (i, n), root.uuid, inv,
                                  traits, aggs))
        for n in range(r.choice((0, 1, 1, 2))):
            # a PF sits under a NUMA node (same_subtree) or under the root
            parent = (r.choice(numas) if r.random() < 0.7 else root).uuid
            traits = [r.choice(PHYSNETS)] + self.some(NIC_TRAITS, 0.4)
            self.add("cn%d-pf%d" % (i, n), parent,
                     {"SRIOV_NET_VF": self.small(2, 8)}, traits)
        if r.random() < 0.35:
            parent = (r.choice(numas) if r.random() < 0.5 else root).uuid
            self.add("cn%d-gpu0" % i, parent,
                     {"VGPU": self.small(1, 4)}, [r.choice(VGPU_TYPES)])
        return root

    def flat_compute(self, i):
        inv = {"VCPU": self.vcpu(8, 32), "MEMORY_MB": self.memory(8, 32),
               "DISK_GB": self.disk()}
        return self.add("flat%d" % i, None, inv, self.root_traits(),
                        self.root_aggs())

    def baremetal(self, i):
        r = self.rng
        rc = r.choice(BAREMETAL_CLASSES)
        reserved = 1 if r.random() < 0.1 else 0
        inv = {rc: Inventory(total=1, reserved=reserved, min_unit=1,
                             max_unit=1)}
        return self.add("bm%d" % i, None, inv, self.some(BM_TRAITS, 0.5),
                        self.root_aggs())

    def sharing(self, i):
        r = self.rng
        if r.random() < 0.7:
            inv = {"DISK_GB": self.disk(200, 3000)}
            traits = ["STORAGE_DISK_SSD"] if r.random() < 0.4 else []
        else:
            inv = {"IPV4_ADDRESS": self.small(2, 16)}
            traits = []
        if r.random() < 0.9:
            traits.append(SHARES)
        aggs = self.some(AGGREGATES, 0.35) or [r.choice(AGGREGATES)]
        if r.random() < 0.05:
            aggs = []
        return self.add("share%d" % i, None, inv, traits, aggs)

    # usage --------------------------------------------------------------

    def consumers(self, world):
        """Valid allocations (each fits when made), one tree at a time."""
        r = self.rng
        used = {}
        out = []
        sharing = [p for p in world.providers if p.parent is None
                   and SHARES in p.traits]
        for root in world.roots():
            if SHARES in root.traits:
                continue
            tree = world.tree(root.uuid) + sharing
            for _ in range(r.choice((0, 1, 1, 2, 3))):
                consumer = {}
                for p in tree:
                    for rc, inv in sorted(p.inventories.items()):
                        if r.random() >= (0.06 if inv.total == 1 else 0.3):
                            continue
                        amount = self._amount(inv, used.get((p.uuid, rc), 0))
                        if amount:
                            consumer.setdefault(p.uuid, {})[rc] = amount
                            used[p.uuid, rc] = used.get(
                                (p.uuid, rc), 0) + amount
                if consumer:
                    out.append(consumer)
        return out

    def shrink(self, world):
        """Now and then, shrink the inventory of a provider or two below
        what their consumers use (a host lost memory or CPUs, or an
        operator lowered a ratio, after the allocations were made)."""
        r = self.rng
        used = world.usage()
        if r.random() >= 0.25:
            return
        held = [(p, rc) for p in world.providers if SHARES not in p.traits
                and (p.parent is not None or r.random() < 0.3)
                for rc in sorted(p.inventories)
                if used.get(p.uuid, {}).get(rc, 0) > 1]
        for p, rc in r.sample(held, min(len(held), r.choice((1, 1, 2)))):
            inv = p.inventories[rc]
            total = inv.reserved + max(
                1, int((used[p.uuid][rc] - 1) / inv.allocation_ratio))
            smaller = dataclasses.replace(
                inv, total=total,
                max_unit=0 if inv.max_unit > total else inv.max_unit)
            if (smaller.capacity >= used[p.uuid][rc]
                    or smaller.min_unit > total or total >= inv.total):
                continue
            world.before.setdefault(p.uuid, dict(p.inventories))
            p.inventories[rc] = smaller

    def _amount(self, inv, used):
        free = inv.capacity - used
        hi = min(inv.max, free)
        hi -= hi % inv.step_size
        lo = max(inv.min_unit, inv.step_size)
        lo += -lo % inv.step_size
        if hi < lo:
            return 0
        amount = self.rng.randint(lo, max(lo, (lo + hi) // 2))
        amount -= amount % inv.step_size
        return amount if inv.fits(used, amount) else 0


def make_world(seed):
    b = _Builder(seed)
    r = b.rng
    n_nested = r.choice((1, 2, 2, 3))
    n_flat = r.choice((0, 0, 1, 2))
    n_bm = r.choice((0, 0, 1, 2))
    n_share = r.choice((0, 1, 1, 2))
    if seed % LARGE_EVERY == LARGE_EVERY - 1:
        n_nested, n_bm, n_share = 40, 10, 3
        n_flat = LARGE_HOSTS - n_nested - n_bm
    for i in range(n_nested):
        b.nested_compute(i)
    for i in range(n_flat):
        b.flat_compute(i)
    for i in range(n_bm):
        b.baremetal(i)
    for i in range(n_share):
        b.sharing(i)
    world = World(seed, b.providers, [], b.aggregates)
    world.consumers = b.consumers(world)
    b.shrink(world)
    return world


# ------------------------------------------------------------- requests


def _consistent(required, forbidden):
    """Drop what Placement would reject as a required/forbidden conflict
    (an any-of set all of whose traits are forbidden)."""
    forbidden = frozenset(forbidden) - {
        t for anyof in required if len(anyof) == 1 for t in anyof}
    kept = []
    for anyof in required:
        if anyof not in kept and not anyof <= forbidden:
            kept.append(anyof)
    return tuple(kept), forbidden


class _RequestMaker:
    """Draws requests that the world can often, not always, satisfy.

    Each request aims at one tree (its *target*): the groups' amounts are
    drawn from the free capacity of providers of that tree (or of the
    sharing providers it can reach) and their traits, aggregates and
    in_tree mostly from those providers, so that roughly half the requests
    have candidates; then random choices (other trees' traits, amounts too
    big, root_required, forbidden traits or aggregates...) make the rest
    fail, or succeed elsewhere.
    """

    def __init__(self, world, seed):
        self.w = world
        self.rng = random.Random(seed)
        self.used = world.usage()
        self.all_rcs = {rc for p in world.providers for rc in p.inventories}
        self.suffix_no = 0
        self.near = []

    def suffix(self, hint):
        self.suffix_no += 1
        if self.rng.random() < 0.5:
            return str(self.suffix_no)
        return "_%s%d" % (hint, self.suffix_no)

    def reach(self, root):
        """The tree of ``root`` and the sharing providers it can use."""
        tree = self.w.tree(root)
        aggs = {a for p in tree for a in p.aggregates}
        return tree + [p for p in self.w.roots()
                       if SHARES in p.traits and p.aggregates & aggs]

    def aim(self, need=None):
        """Pick the tree this request is (mostly) drawn from: one whose
        reach has ``need`` (a resource class or SHARES), if any has."""
        r = self.rng
        roots = [p for p in self.w.roots() if SHARES not in p.traits]
        fit = [p for p in roots if need in self._needs(p.uuid)]
        if fit and r.random() < 0.95:
            roots = fit
        self.near = self.reach(r.choice(roots).uuid)

    def _needs(self, root):
        have = set()
        for p in self.reach(root):
            have |= set(p.inventories)
            if SHARES in p.traits and p.parent is None:
                have.add(SHARES)
        tree = self.w.tree(root)
        if len(tree) == 1 and "VCPU" in tree[0].inventories:
            have.add(FLAT)
        if have & set(BAREMETAL_CLASSES):
            have.add(None)
        return have

    def pick(self, rc, where=None, near=None):
        """A provider with ``rc``: mostly one near the target."""
        r = self.rng
        near = [p for p in (near or self.near) if rc in p.inventories
                and (where is None or where(p))]
        every = [p for p in self.w.providers if rc in p.inventories
                 and (where is None or where(p))]
        if near and r.random() < 0.9:
            return r.choice(near)
        return r.choice(every) if every else None

    def amount(self, rc, p, share=2):
        """An amount of ``rc`` that ``p`` likely has free (about a
        ``share``-th of it at most, so that several groups can fit)."""
        r = self.rng
        if p is None or rc not in p.inventories:
            return r.choice((1, 1, 2))
        inv = p.inventories[rc]
        lo = max(inv.min_unit, inv.step_size)
        lo += -lo % inv.step_size
        free = inv.capacity - self.used.get(p.uuid, {}).get(rc, 0)
        hi = min(free, inv.max)
        if hi < lo or r.random() < 0.06:     # sometimes too big
            return max(lo, hi + r.randint(1, 3) * inv.step_size)
        amount = r.randint(lo, max(lo, hi // share))
        if r.random() < 0.93:                # mostly honour the step size
            amount = max(lo, amount - amount % inv.step_size)
        return amount

    # group templates ----------------------------------------------------

    def flavor(self):
        """VCPU (or PCPU) + MEMORY_MB from one provider, DISK_GB and
        IPV4_ADDRESS from wherever they are. Returns (resources, the
        provider of the CPUs)."""
        r = self.rng
        cpu = "PCPU" if "PCPU" in self.all_rcs and r.random() < 0.2 \
            else "VCPU"
        p = self.pick(cpu)
        res = {cpu: self.amount(cpu, p, 3)}
        if r.random() < 0.9:
            res["MEMORY_MB"] = self.amount("MEMORY_MB", p, 3)
        near = self.reach(self.w.root_of(p.uuid)) if p else None
        if r.random() < 0.7:
            res["DISK_GB"] = self.amount("DISK_GB", self.pick(
                "DISK_GB", near=near), 3)
        if "IPV4_ADDRESS" in self.all_rcs and r.random() < 0.3:
            res["IPV4_ADDRESS"] = self.amount(
                "IPV4_ADDRESS", self.pick("IPV4_ADDRESS", near=near), 3)
        return res, p

    def numa_group(self, share=3):
        r = self.rng
        p = self.pick("VCPU", lambda p: p.parent is not None)
        res = {"VCPU": self.amount("VCPU", p, share)}
        if r.random() < 0.8:
            res["MEMORY_MB"] = self.amount("MEMORY_MB", p, share)
        return res, p

    def decorate(self, g, p):
        """Random traits, aggregates and in_tree on group ``g``, mostly
        ones that ``p`` (the provider its amounts were drawn from) meets."""
        r = self.rng
        root = self.w.by_uuid[self.w.root_of(p.uuid)] if p else None
        mine = sorted(p.traits - {SHARES}) if p else []
        pool = sorted({t for q in self.w.providers for t in q.traits
                       if t != SHARES} | {NOWHERE})
        required, forbidden = [], set()
        if r.random() < 0.3:
            required.append(frozenset([r.choice(
                mine if mine and r.random() < 0.7 else pool)]))
        if r.random() < 0.2:
            anyof = set(r.sample(pool, min(2, len(pool))))
            if mine and r.random() < 0.7:
                anyof = {r.choice(mine), r.choice(pool)}
            required.append(frozenset(anyof))
        if r.random() < 0.15:
            forbidden.add(r.choice(pool))
        aggs = sorted(self.w.aggregates.values())
        theirs = sorted((p.aggregates | root.aggregates) if p else ())
        member_of, forbidden_aggs = (), frozenset()
        if r.random() < 0.3:
            first = r.choice(theirs) if theirs and r.random() < 0.7 \
                else r.choice(aggs)
            member_of = (frozenset({first, r.choice(aggs)}),)
            if r.random() < 0.2:
                member_of += (frozenset([r.choice(aggs)]),)
        if r.random() < 0.15:
            forbidden_aggs = frozenset(r.sample(aggs, r.choice((1, 2))))
        in_tree = None
        if r.random() < 0.2:
            if root and r.random() < 0.7:
                in_tree = r.choice(self.w.tree(root.uuid)).uuid
            else:
                in_tree = r.choice(self.w.providers).uuid
            if r.random() < 0.05:
                in_tree = str(uuidlib.UUID(int=r.getrandbits(128),
                                           version=4))
        required, forbidden = _consistent(g.required + tuple(required),
                                          g.forbidden | forbidden)
        return dataclasses.replace(
            g, required=required, forbidden=forbidden, member_of=member_of,
            forbidden_aggs=forbidden_aggs, in_tree=in_tree)

    def group(self, suffix, res, p=None, decorate=0.3, required=(),
              forbidden=frozenset()):
        g = Group(suffix, tuple(sorted(res.items())), tuple(required),
                  frozenset(forbidden))
        if self.rng.random() < decorate:
            g = self.decorate(g, p)
        return g

    # scenarios ----------------------------------------------------------

    def s_flavor(self):
        res, p = self.flavor()
        return [self.group("", res, p, decorate=0.6)], []

    def s_numa(self):
        r = self.rng
        groups = []
        for _ in range(r.choice((1, 2, 2, 3))):
            res, p = self.numa_group()
            groups.append(self.group(self.suffix("numa"), res, p))
        if r.random() < 0.6:
            p = self.pick("DISK_GB")
            groups.insert(0, self.group("", {"DISK_GB": self.amount(
                "DISK_GB", p)}, p))
        return groups, []

    def below(self, anchor):
        """``anchor`` and the providers under it."""
        out = []
        for p in self.w.providers:
            q = p
            while q and q.uuid != anchor.uuid:
                q = self.w.by_uuid.get(q.parent)
            if q:
                out.append(p)
        return out

    def net_group(self, near=None):
        r = self.rng
        p = self.pick("SRIOV_NET_VF", near=near)
        nets = sorted(p.traits & set(PHYSNETS)) if p else []
        net = r.choice(nets) if nets and r.random() < 0.9 \
            else r.choice(PHYSNETS)
        return self.group(
            self.suffix("net"),
            {"SRIOV_NET_VF": self.amount("SRIOV_NET_VF", p, 3)}, p,
            required=[frozenset([net])])

    def s_sriov(self):
        r = self.rng
        res, p = self.flavor()
        groups = [self.group("", res, p)]
        for _ in range(r.choice((1, 1, 2))):
            groups.append(self.net_group())
        return groups, []

    def s_same_subtree(self):
        r = self.rng
        groups, subtree = [], []
        numa = self.pick("VCPU", lambda p: p.parent is not None)
        if r.random() < 0.6:
            anchor = self.resourceless(numa)
            if anchor.suffix.startswith("_root"):
                numa = self.w.by_uuid[self.w.root_of(numa.uuid)] \
                    if numa else None
        else:
            res, numa = self.numa_group()
            anchor = self.group(self.suffix("numa"), res, numa, decorate=0.2)
        groups.append(anchor)
        subtree.append(anchor.suffix)
        under = self.below(numa) if numa and r.random() < 0.8 else None
        if r.random() < 0.8 or not anchor.resources:
            g = self.net_group(near=under)
            groups.append(g)
            subtree.append(g.suffix)
        if r.random() < 0.4:
            gpu = self.pick("VGPU", near=under)
            g = self.group(self.suffix("gpu"), {"VGPU": 1}, gpu,
                           decorate=0.2)
            groups.append(g)
            subtree.append(g.suffix)
        if r.random() < 0.5:
            p = self.pick("DISK_GB")
            groups.insert(0, self.group("", {"DISK_GB": self.amount(
                "DISK_GB", p)}, p, decorate=0.2))
        return groups, [frozenset(subtree)]

    def resourceless(self, numa):
        """A resourceless group naming a NUMA node (by trait or any-of
        traits) or the root (by trait or aggregate)."""
        r = self.rng
        root = self.w.by_uuid[self.w.root_of(numa.uuid)] if numa else None
        how = r.random()
        if how < 0.5 or root is None:
            forbidden = ["CUSTOM_NUMA_FAST"] if r.random() < 0.2 else []
            return self.group(
                self.suffix("numa"), {}, decorate=0,
                required=[frozenset(["HW_NUMA_ROOT"])], forbidden=forbidden)
        if how < 0.65:
            return self.group(
                self.suffix("numa"), {}, decorate=0,
                required=[frozenset(["HW_NUMA_ROOT", "CUSTOM_NUMA_FAST"])])
        if how < 0.85 and root.traits:
            return self.group(
                self.suffix("root"), {}, decorate=0,
                required=[frozenset([r.choice(sorted(root.traits))])],
                forbidden=[NOWHERE] if r.random() < 0.3 else [])
        aggs = sorted(root.aggregates) or sorted(self.w.aggregates.values())
        g = Group(self.suffix("root"), member_of=(frozenset(
            [r.choice(aggs)]),))
        if r.random() < 0.3:
            g = dataclasses.replace(g, forbidden_aggs=frozenset(
                [r.choice(sorted(self.w.aggregates.values()))]) - set(
                    g.member_of[0]))
        return g

    def s_vgpu(self):
        r = self.rng
        res, p = self.flavor()
        groups = [self.group("", res, p)]
        gpu = self.pick("VGPU")
        types = {r.choice(VGPU_TYPES)} | (gpu.traits & set(VGPU_TYPES)
                                          if gpu else set())
        if r.random() < 0.3:
            types = {r.choice(VGPU_TYPES)}
        groups.append(self.group(
            self.suffix("gpu"), {"VGPU": self.amount("VGPU", gpu)}, gpu,
            required=[frozenset(types)]))
        return groups, []

    def s_baremetal(self):
        r = self.rng
        bms = [p for p in self.w.providers
               if set(p.inventories) & set(BAREMETAL_CLASSES)]
        near = [b for b in bms if b in self.near]
        rc = r.choice(sorted(set(r.choice(near or bms).inventories))) \
            if bms else r.choice(BAREMETAL_CLASSES)
        res = {rc: 1}
        p = r.choice([b for b in bms if rc in b.inventories] or [None])
        unsuffixed = r.random() < 0.5
        if p and unsuffixed and "IPV4_ADDRESS" in self._needs(p.uuid) \
                and r.random() < 0.5:
            res["IPV4_ADDRESS"] = 1
        return [self.group("" if unsuffixed else self.suffix("bm"), res, p,
                           decorate=0.5)], []

    def s_shared(self):
        r = self.rng
        res, p = self.flavor()
        shared = self.pick("DISK_GB", lambda p: SHARES in p.traits)
        res["DISK_GB"] = self.amount("DISK_GB", shared, 3)
        groups = [self.group("", res, shared if r.random() < 0.5 else p,
                             decorate=0.5)]
        if r.random() < 0.4:
            q = self.pick("DISK_GB")
            groups.append(self.group(self.suffix("disk"), {
                "DISK_GB": self.amount("DISK_GB", q, 3)}, q))
        return groups, []

    def s_storage(self):
        """Shared or local storage (and addresses) alone: candidates made
        of a pool only, anchored on every tree it serves and on itself."""
        r = self.rng
        p = self.pick("DISK_GB", lambda p: SHARES in p.traits) \
            or self.pick("DISK_GB")
        res = {"DISK_GB": self.amount("DISK_GB", p, 3)}
        if r.random() < 0.3:
            res["IPV4_ADDRESS"] = self.amount(
                "IPV4_ADDRESS", self.pick("IPV4_ADDRESS"), 3)
        return [self.group("", res, p, decorate=0.5)], []

    def s_twins(self):
        """Alike suffixed groups (interchangeable: Gantt tries one order
        of them only), sometimes with an unsuffixed group asking the same
        class and a same_subtree over them."""
        r = self.rng
        groups, subtree = [], []
        if r.random() < 0.5:
            p = self.pick("SRIOV_NET_VF")
            nets = sorted(p.traits & set(PHYSNETS)) if p else []
            res = {"SRIOV_NET_VF": self.amount("SRIOV_NET_VF", p, 4)}
            required = [frozenset([r.choice(nets or PHYSNETS)])]
        else:
            p = self.pick("VCPU", lambda p: p.parent is not None)
            res = {"VCPU": self.amount("VCPU", p, 4)}
            required = []
        for _ in range(r.choice((2, 2, 3))):
            groups.append(self.group(self.suffix("twin"), res, p,
                                     decorate=0, required=required))
        if r.random() < 0.3:
            groups.insert(0, self.group("", dict(res), p, decorate=0.2))
        if r.random() < 0.3:
            subtree.append(frozenset(g.suffix for g in groups if g.suffix))
        return groups, subtree

    def s_flat(self):
        """A flavor on a flat compute (one provider), with forbidden
        traits and forbidden aggregates: its own (it fails) or others'
        (it may pass)."""
        r = self.rng
        flat = self.pick("VCPU", lambda p: p.parent is None and len(
            self.w.tree(p.uuid)) == 1)
        res, p = self.flavor()
        if flat is not None:
            res = {rc: self.amount(rc, flat, 3)
                   for rc in ("VCPU", "MEMORY_MB", "DISK_GB")
                   if rc in flat.inventories and r.random() < 0.9} or res
            p = flat
        pool = sorted({t for q in self.w.providers for t in q.traits
                       if t != SHARES} | {NOWHERE})
        mine = sorted(p.traits - {SHARES}) if p else []
        forbidden = {r.choice(mine if mine and r.random() < 0.5 else pool)}
        aggs = sorted(self.w.aggregates.values())
        theirs = sorted(p.aggregates) if p else []
        forbidden_aggs = frozenset()
        if r.random() < 0.7:
            forbidden_aggs = frozenset([r.choice(
                theirs if theirs and r.random() < 0.5 else aggs)])
        g = self.group("", res, p, decorate=0.3)
        required, forbidden = _consistent(g.required,
                                          g.forbidden | forbidden)
        return [dataclasses.replace(
            g, required=required, forbidden=forbidden,
            forbidden_aggs=g.forbidden_aggs | forbidden_aggs)], []

    def s_shared_granular(self):
        """Shared storage in the unsuffixed group next to suffixed (NUMA)
        groups: the pool serves the unsuffixed group, the tree's children
        the granular ones."""
        r = self.rng
        shared = self.pick("DISK_GB", lambda p: SHARES in p.traits)
        res = {"DISK_GB": self.amount("DISK_GB", shared, 3)}
        if "IPV4_ADDRESS" in self.all_rcs and r.random() < 0.3:
            res["IPV4_ADDRESS"] = self.amount(
                "IPV4_ADDRESS", self.pick("IPV4_ADDRESS"), 3)
        groups = [self.group("", res, shared, decorate=0.3)]
        for _ in range(r.choice((1, 1, 2))):
            numa_res, p = self.numa_group()
            groups.append(self.group(self.suffix("numa"), numa_res, p,
                                     decorate=0.2))
        return groups, []

    # scenario -> what it needs in the world to be likely
    SCENARIOS = (("s_flavor", "VCPU"), ("s_numa", "VCPU"),
                 ("s_sriov", "SRIOV_NET_VF"),
                 ("s_same_subtree", "SRIOV_NET_VF"), ("s_vgpu", "VGPU"),
                 ("s_baremetal", None), ("s_shared", SHARES),
                 ("s_storage", SHARES), ("s_twins", "VCPU"),
                 ("s_flat", FLAT), ("s_shared_granular", SHARES))

    def scenario(self):
        """A scenario (most often one the world can satisfy somewhere),
        and aim at a tree that can."""
        r = self.rng
        have = set()
        for root in self.w.roots():
            have |= self._needs(root.uuid)
        fitting = [(s, n) for s, n in self.SCENARIOS if n in have]
        if not fitting or r.random() < 0.1:
            fitting = self.SCENARIOS
        name, need = r.choice(fitting)
        self.aim(need)
        return name

    def make(self):
        r = self.rng
        self.suffix_no = 0
        groups, subtree = getattr(self, self.scenario())()
        if r.random() < 0.1:
            # mix in a second scenario's groups, on the same target
            near = self.near
            more, more_subtree = getattr(self, self.scenario())()
            self.near = near
            have = {g.suffix for g in groups}
            groups += [g for g in more if g.suffix not in have]
            subtree += more_subtree
        granular = [g for g in groups if g.suffix]
        policy = None
        if len(granular) > 1 or r.random() < 0.3:
            policy = r.choice(("none", "isolate"))
        root_required, root_forbidden = set(), set()
        target = self.w.by_uuid[self.w.root_of(self.near[0].uuid)]
        mine = sorted(target.traits)
        if r.random() < 0.3:
            root_forbidden.add(DISABLED)
        if r.random() < 0.12:
            root_required.add(r.choice(mine) if mine and r.random() < 0.7
                              else r.choice(ROOT_TRAITS + BM_TRAITS))
        if r.random() < 0.05:
            root_forbidden.add(r.choice(ROOT_TRAITS))
        root_forbidden -= root_required
        return Request(tuple(groups), policy, tuple(subtree),
                       frozenset(root_required), frozenset(root_forbidden))


def make_requests(world, seed, count):
    maker = _RequestMaker(world, seed)
    return [maker.make() for _ in range(count)]


def case(seed, count):
    """The world of ``seed`` and its ``count`` requests."""
    world = make_world(seed)
    return world, make_requests(world, seed * 7919 + 1, count)
