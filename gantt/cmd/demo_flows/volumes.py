"""The volume flow: a Cinder-like service using Gantt for volumes.

1. Four pools of three backends report as providers of kind ``volume``
   (``ProviderReport`` 1.2), as ``doc/source/admin/volumes.rst`` maps
   Cinder's pool stats: the ``DISK_GB`` inventory is the pool's total,
   ``reserved`` its ``reserved_percentage`` of it, the allocation ratio
   its ``max_over_subscription_ratio`` when thin (1.0 when thick), and
   the capabilities ``thin_provisioning_support``,
   ``reserved_percentage``, ``volume_backend_name``, ``free_capacity_gb``
   (the physical free space)…
2. Volumes of five volume types arrive, each a flavorless RequestSpec
   (1.2) asking for ``DISK_GB=<size>`` with the type's extra specs as
   ``capabilities``, in the profile ``volume``: Cinder's filters and
   weighers. A thin volume writes only part of its size, so the pools'
   physical free space (re-reported every few volumes) falls slower than
   their provisioned space grows.
3. A third of the volumes are deleted.

The summary shows, per pool, the volumes, provisioned and physical
capacity and the over-subscription reached, and the refusals by volume
type and reason; it checks that what Gantt holds allocated is exactly the
sizes of the volumes that live.
"""

import collections
import dataclasses
import math
import time
import uuid

import sqlalchemy as sa

from gantt import exception
from gantt.cmd import demo_flows
from gantt.db import audit
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.objects import request_spec

PROFILE = "volume"
FILTERS = ("AvailabilityZoneFilter", "ResourceFilter", "CapacityFilter",
           "CapabilitiesFilter", "DriverFilter")
WEIGHERS = ("CapacityWeigher", "AllocatedCapacityWeigher",
            "VolumeNumberWeigher", "GoodnessWeigher")
#: the share of a thin volume's size it writes (a thick one takes all of
#: it): low enough that the most over-subscribed pool (10x) still fits
#: physically when its virtual capacity is used up
THIN_WRITTEN = 0.1
#: re-report every pool's physical free space after this many volumes
REPORT_EVERY = 20


@dataclasses.dataclass(frozen=True)
class Pool:
    name: str            # Cinder's host@backend#pool
    backend: str         # volume_backend_name
    total_gb: int
    reserved_percentage: int
    thin: bool
    ratio: float         # max_over_subscription_ratio
    vendor: str
    protocol: str
    qos: bool = False

    @property
    def uuid(self):
        return str(uuid.uuid5(uuid.NAMESPACE_DNS, self.name + ".gantt-demo"))

    @property
    def reserved_gb(self):
        return math.floor(self.total_gb * self.reserved_percentage / 100)


POOLS = (
    Pool("cinder-1@lvm#vg-a", "lvm", 2000, 5, False, 1.0, "Open Source",
         "iSCSI"),
    Pool("cinder-1@lvm#vg-b", "lvm", 1500, 5, False, 1.0, "Open Source",
         "iSCSI"),
    Pool("cinder-2@ceph#rbd", "ceph", 3000, 0, True, 10.0, "Ceph", "ceph"),
    Pool("cinder-3@netapp#gold", "netapp", 1000, 10, True, 4.0, "NetApp",
         "NFS", qos=True),
)

#: name, extra specs, (smallest, largest) size in GB, weight
VOLUME_TYPES = (
    ("standard", {}, (10, 200), 40),
    ("thin", {"thin_provisioning_support": "<is> True"}, (100, 1000), 30),
    ("gold", {"volume_backend_name": "netapp", "QoS_support": "<is> True"},
     (50, 400), 15),
    ("thick", {"provisioning:type": "thick"}, (50, 400), 10),
    # no backend replicates: every one of these is refused, with a reason
    ("replicated", {"capabilities:replication_enabled": "<is> True"},
     (10, 100), 5),
)


def config(topic):
    """The ``volume`` profile: Cinder's filters and weighers, the best
    pool always (no random pick among the top ones)."""
    return {
        "profile:" + PROFILE: (
            "provider_kinds = volume\nenabled_filters = %s\n"
            "enabled_weighers = %s\nhost_subset_size = 1\n"
            % (",".join(FILTERS), ",".join(WEIGHERS))),
        "volume_scheduler": (
            "capacity_weight_multiplier = 1.0\n"
            "allocated_capacity_weight_multiplier = -1.0\n"
            "volume_number_multiplier = -1.0\n"),
    }


@dataclasses.dataclass(frozen=True)
class Volume:
    uuid: str
    type: str
    size: int
    pool: str           # the pool's name
    written: int        # GB it occupies physically


@dataclasses.dataclass
class Tally:
    live: dict = dataclasses.field(default_factory=dict)   # uuid -> Volume
    refused: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)   # type -> count
    # type -> {cause: pools it removed, summed over the type's refusals}
    causes: dict = dataclasses.field(
        default_factory=lambda: collections.defaultdict(
            collections.Counter))
    asked: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)   # type -> count
    deleted: int = 0
    latencies: list = dataclasses.field(default_factory=list)


def run(ctx):
    print("\n--- volume flow: %d volumes of %d volume types on %d pools "
          "(thin provisioning) ---" % (ctx.args.volumes, len(VOLUME_TYPES),
                                       len(POOLS)), flush=True)
    tally = Tally()
    _report_pools(ctx, tally)
    seen = demo_flows.wait_until(lambda: len(ctx.client.get_host_states(
        None, hosts=[p.uuid for p in POOLS])) == len(POOLS), timeout=30)
    if not seen:
        raise RuntimeError("the scheduler did not see the pools")
    for pool in POOLS:
        demo_flows.say("pool %-22s %5d GB, reserved %2d%%, %s" % (
            pool.name, pool.total_gb, pool.reserved_percentage,
            "thin, max_over_subscription_ratio %.1f" % pool.ratio
            if pool.thin else "thick"))
    _arrive(ctx, tally)
    _delete_some(ctx, tally)
    _report_pools(ctx, tally)
    return _summary(ctx, tally)


def _written(tally, pool):
    return sum(v.written for v in tally.live.values() if v.pool == pool.name)


def _report_pools(ctx, tally):
    """Every pool's full state, its physical free space included; back
    once the scheduler weighs with it (a report reaches the workers'
    caches by a cast, after the call that stores it)."""
    sent = {}
    for pool in POOLS:
        free = max(pool.total_gb - pool.reserved_gb - _written(tally, pool),
                   0)
        sent[pool.name] = free
        ctx.client.update_provider(None, provider.ProviderReport(
            provider=provider.ResourceProvider(
                uuid=pool.uuid, name=pool.name, inventories=[
                    compute_node.Inventory(
                        resource_class="DISK_GB", total=pool.total_gb,
                        reserved=pool.reserved_gb,
                        allocation_ratio=pool.ratio if pool.thin else 1.0)]),
            report_sequence=time.time_ns(), kind="volume",
            service="cinder-volume@" + pool.backend,
            availability_zone="az1", capabilities={
                "volume_backend_name": pool.backend,
                "vendor_name": pool.vendor,
                "storage_protocol": pool.protocol,
                "total_capacity_gb": pool.total_gb,
                "free_capacity_gb": free,
                "reserved_percentage": pool.reserved_percentage,
                "thin_provisioning_support": pool.thin,
                "thick_provisioning_support": not pool.thin,
                "max_over_subscription_ratio": pool.ratio,
                "QoS_support": pool.qos,
            }))
    demo_flows.wait_until(lambda: {
        s.host: s.capabilities.get("free_capacity_gb")
        for s in ctx.client.get_host_states(None, hosts=list(sent))} == sent,
        timeout=10, interval=0.05)


def _spec(specs, size):
    return request_spec.RequestSpec(
        flavor=None, profile=PROFILE, capabilities=dict(specs),
        request_groups=[request_spec.RequestGroup(
            suffix="", resources={"DISK_GB": size})])


def _arrive(ctx, tally):
    pools = {p.name: p for p in POOLS}
    weights = [t[-1] for t in VOLUME_TYPES]
    progress = demo_flows.Progress("volumes", ctx.args.volumes)
    for i in range(ctx.args.volumes):
        name, specs, (low, high), _w = ctx.rng.choices(VOLUME_TYPES,
                                                       weights)[0]
        size = ctx.rng.randrange(low, high + 1, 10)
        volume = str(uuid.uuid4())
        tally.asked[name] += 1
        started = time.monotonic()
        try:
            [selections] = ctx.client.select_destinations(
                None, _spec(specs, size), [volume], return_alternates=False)
        except exception.NoValidHost as refused:
            tally.refused[name] += 1
            tally.causes[name].update(_causes(str(refused)))
        else:
            tally.latencies.append(time.monotonic() - started)
            pool = pools[selections[0].service_host]
            thick = not pool.thin or specs.get(
                "provisioning:type") == "thick"
            tally.live[volume] = Volume(
                volume, name, size, pool.name,
                size if thick else math.ceil(size * THIN_WRITTEN))
        if (i + 1) % REPORT_EVERY == 0:
            _report_pools(ctx, tally)
        progress.step(i + 1, "placed %d, refused %d" % (
            len(tally.live), sum(tally.refused.values())))


def _causes(message):
    """``{cause: pools}`` from a NoValidHost message ("… available: 3
    lacked DISK_GB, 1 CapabilitiesFilter"), without the providers of
    other kinds (every compute host, container host…)."""
    causes = {}
    for part in demo_flows.reason_key(message).split(", "):
        count, _, cause = part.partition(" ")
        if count.isdigit() and not cause.startswith("not of kind"):
            causes[cause.strip()] = int(count)
    return causes


def _delete_some(ctx, tally):
    doomed = list(tally.live)     # in arrival order: the seed decides
    ctx.rng.shuffle(doomed)
    doomed = doomed[:len(doomed) // 3]
    for volume in doomed:
        ctx.client.release(None, volume)
        del tally.live[volume]
    tally.deleted = len(doomed)
    demo_flows.say("%d volumes deleted, %d remain" % (len(doomed),
                                                      len(tally.live)))


def _summary(ctx, tally):
    states = {s.host: s for s in ctx.client.get_host_states(
        None, hosts=[p.uuid for p in POOLS])}
    print("\n=== Volumes summary " + "=" * 48)
    asked = sum(tally.asked.values())
    print("volumes        %d asked, %d placed, %d refused, %d deleted, %d "
          "live; select_destinations p50 %.1f ms" % (
              asked, asked - sum(tally.refused.values()),
              sum(tally.refused.values()), tally.deleted, len(tally.live),
              demo_flows.percentile(tally.latencies, 50) * 1000))
    print("\n  %-22s %7s %11s %9s %9s %8s %7s" % (
        "pool", "volumes", "provisioned", "usable", "physical", "ratio",
        "max"))
    mismatched = 0
    for pool in POOLS:
        live = [v for v in tally.live.values() if v.pool == pool.name]
        provisioned = sum(v.size for v in live)
        held = _disk_used(states.get(pool.name))
        mismatched += held != provisioned
        usable = pool.total_gb - pool.reserved_gb
        print("  %-22s %7d %8d GB %6d GB %6d GB %7.2fx %6.1fx" % (
            pool.name, len(live), provisioned, usable,
            _written(tally, pool), provisioned / usable,
            pool.ratio if pool.thin else 1.0))
    print("  provisioned: the volumes' sizes (Gantt's allocations); usable:"
          " total - reserved;\n  physical: what they wrote (a thin volume "
          "%d%% of its size); ratio: provisioned / usable;\n  max: the "
          "pool's max_over_subscription_ratio" % (THIN_WRITTEN * 100))
    print("\nrefusals by volume type (and the pools each cause removed, "
          "over those refusals)")
    if not tally.refused:
        print("  none")
    for name, count in tally.refused.most_common():
        print("  %-10s %4d of %3d  %s" % (
            name, count, tally.asked[name], ", ".join(
                "%s %d" % item
                for item in tally.causes[name].most_common(4))[:90]))
    over = _overcommitted(ctx.db_url)
    print("\ncheck          allocations equal the live volumes' sizes on "
          "%d of %d pools; %d overcommitted provider classes"
          % (len(POOLS) - mismatched, len(POOLS), over))
    ok = not mismatched and not over and bool(tally.live)
    print("result         %s" % ("OK" if ok else "INCONSISTENT"))
    return ok


def _disk_used(state):
    if state is None:
        return -1
    return sum(r.used for r in state.resources
               if r.resource_class == "DISK_GB")


def _overcommitted(db_url):
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return len(audit.overcommitted(conn))
    finally:
        engine.dispose()
