"""Seeded volume backends and volume requests, as plain data.

Neither Cinder nor Gantt is imported here: ``cinder_side`` and
``gantt_side`` each turn the same :class:`Backend` and :class:`Volume`
into their own records. The generator covers thin and thick pools,
``infinite``/``unknown`` capacities, reserved percentages, over-
subscription ratios (below 1 too), capabilities with and without the
keys a volume type asks for, and filter/goodness functions.
"""

import dataclasses
import math
import random

SIZES = (0, 1, 10, 50, 100, 500, 1000)
FILTER_FUNCTIONS = (
    "volume.size < 100",
    "stats.free_capacity_gb > volume.size",
    "stats.vendor_name == 'Acme' or volume.size <= 10",
    "extra.tier == gold",
    "capabilities.iops >= 1000 and volume.size < 500",
    "stats.reserved_percentage < 10",
    "stats.allocated_capacity_gb / stats.total_capacity_gb < 0.8",
    "max(stats.free_capacity_gb, 0) > 50",
    "volume.size > 10 ? stats.free_capacity_gb > 100 : 1",
    "not capabilities.QoS_support",
    "stats.storage_protocol == 'iscsi' or stats.storage_protocol == 'fc'",
    "volume.size <",
)
GOODNESS_FUNCTIONS = (
    "100 - stats.allocated_capacity_gb / stats.total_capacity_gb * 100",
    "stats.free_capacity_gb / 10",
    "volume.size < 50 ? 100 : 50",
    "capabilities.iops / 100",
    "stats.total_capacity_gb > 500",
    "abs(50 - volume.size)",
    "150",
    "min(stats.free_capacity_gb, 100)",
    "-2 ^ 2 + 60",
    "1 / 0",
    "capabilities.storage_protocol == 'nvmeof' ? 90 : 30",
)
#: volume-type extra specs a request may carry (a random subset)
SPECS = (
    ("provisioning:type", ("thick", "thin")),
    ("capabilities:vendor_name", ("Acme", "Other")),
    ("vendor_name", ("<in> Ac", "s!= Acme")),
    ("QoS_support", ("<is> True", "<is> False")),
    ("tier", ("<or> gold <or> silver", "gold", "s>= h")),
    ("capabilities:iops", (">= 1000", "<= 500", "== 2000")),
    ("compression", ("<is> True", "<is> False")),
    ("acme:feature", ("x",)),
    ("storage_protocol", ("iscsi", "<in> FC", "NVMe-oF", "s== RBD")),
)


@dataclasses.dataclass(frozen=True)
class Backend:
    """One pool, as the backend reports it to Cinder."""

    name: str                  # host@backend#pool
    total: object              # GB, or "infinite"/"unknown"
    free: object
    reserved_percentage: int
    thin: bool
    ratio: float
    provisioned: int
    volumes: int
    extra: tuple               # ((capability, value), ...)

    @property
    def reserved_gb(self):
        """What Gantt's inventory reserves: Cinder's floor(total * pct)."""
        if isinstance(self.total, str):
            return 0
        return math.floor(self.total * self.reserved_percentage / 100.0)


@dataclasses.dataclass(frozen=True)
class Volume:
    """One volume request: its size and its volume type's extra specs."""

    size: int
    specs: tuple               # ((key, value), ...)


@dataclasses.dataclass(frozen=True)
class World:
    seed: int
    backends: tuple
    volumes: tuple
    multipliers: tuple         # ((option, value), ...)


def _capacity(rng):
    if rng.random() < 0.08:
        return rng.choice(("infinite", "unknown"))
    return rng.choice((0, 100, 500, 1000, 2048, 10240))


def backend(rng, index):
    total = _capacity(rng)
    size = total if isinstance(total, int) else 5000
    free = (rng.choice(("infinite", "unknown")) if rng.random() < 0.08
            else rng.choice((rng.randint(0, max(size, 1)),
                             rng.randint(0, max(size, 1)) + 0.5)))
    thin = rng.random() < 0.5
    ratio = rng.choice((1.0, 1.5, 2.0, 20.0, 0.8)) if thin else 1.0
    extra = {"vendor_name": rng.choice(("Acme", "Other")),
             "storage_protocol": rng.choice(("RBD", "iSCSI", "iscsi", "FC",
                                             "fibre_channel", "NVMeOF",
                                             "nfs")),
             "QoS_support": rng.random() < 0.5,
             "iops": rng.choice((500, 1000, 2000))}
    if rng.random() < 0.6:
        extra["tier"] = rng.choice(("gold", "silver", "lead"))
    if rng.random() < 0.6:
        extra["compression"] = rng.choice(("True", "False"))
    if rng.random() < 0.35:
        extra["filter_function"] = rng.choice(FILTER_FUNCTIONS)
    if rng.random() < 0.35:
        extra["goodness_function"] = rng.choice(GOODNESS_FUNCTIONS)
    return Backend(
        name="host%d@lvm#pool%d" % (index // 2, index),
        total=total, free=free,
        reserved_percentage=rng.choice((0, 0, 5, 10, 25)), thin=thin,
        ratio=ratio,
        provisioned=rng.randint(0, int(size * ratio * 1.1) + 1),
        volumes=rng.randint(0, 50), extra=tuple(sorted(extra.items())))


def volume(rng):
    specs = {}
    for key, values in SPECS:
        if rng.random() < 0.3:
            specs[key] = rng.choice(values)
    return Volume(size=rng.choice(SIZES), specs=tuple(sorted(specs.items())))


def world(seed, backends=12, volumes=15):
    rng = random.Random(seed)
    return World(
        seed=seed,
        backends=tuple(backend(rng, i) for i in range(backends)),
        volumes=tuple(volume(rng) for _ in range(volumes)),
        multipliers=(
            ("capacity_weight_multiplier", rng.choice((1.0, -1.0, 2.5))),
            ("allocated_capacity_weight_multiplier",
             rng.choice((-1.0, 1.0))),
            ("volume_number_multiplier", rng.choice((-1.0, 0.5))),
        ))
