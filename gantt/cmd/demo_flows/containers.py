"""The container flow: a Magnum-like service using Gantt for containers.

1. A few hypervisors report as compute nodes.
2. Containers of mixed sizes arrive, one request each, in the profile
   ``container`` with ``fill=sequential``: the first instance fills until
   nothing more fits, then the next.
3. When Gantt answers ``ProvidersFull`` ("every instance is full"), the
   service creates an instance: Gantt places it (an ordinary Nova-shaped
   request on the hypervisors), the instance's agent reports it as a
   container host (``kind=container``, linked to the instance's uuid),
   and the waiting container is asked for again.
4. Half the containers are deleted, then the rest. Each instance left
   empty is announced (``provider.vacant``, with its generation); the
   service retires it with ``retire_provider`` at that generation and
   deletes the instance (releases its claim on the hypervisor).

The summary compares the instances used with the fewest any placement
could use (the larger of the VCPU and MEMORY_MB bounds).
"""

import collections
import dataclasses
import math
import queue
import time
import uuid

import kombu
import oslo_messaging as messaging

from gantt import exception
from gantt import rpc
from gantt.cmd import demo_flows
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.objects import request_spec

PROFILE = "container"
FILTERS = ("ResourceFilter", "AvailabilityZoneFilter",
           "ServerGroupAffinityFilter", "ServerGroupAntiAffinityFilter")
WEIGHERS = ("RAMWeigher", "CPUWeigher")
#: what one instance offers its containers, and the flavor it boots with
INSTANCE_VCPUS, INSTANCE_MEMORY_MB = 8, 16384
INSTANCE_FLAVOR = request_spec.Flavor(
    name="ctr.host", vcpus=INSTANCE_VCPUS, memory_mb=INSTANCE_MEMORY_MB,
    root_gb=40)
#: (vcpus, memory_mb, weight) of the containers that arrive
SIZES = ((1, 512, 30), (1, 1024, 25), (2, 2048, 20), (2, 4096, 12),
         (4, 4096, 8), (4, 8192, 5))
HYPERVISORS = 3
SERVICE = "magnum-conductor"
VACANT = "provider.vacant"


def config(topic):
    """The profile (the command lists it in ``[scheduler] profiles``),
    and notifications on a topic the flow listens to."""
    return {
        "profile:" + PROFILE: (
            "provider_kinds = container\nenabled_filters = %s\n"
            "enabled_weighers = %s\n" % (",".join(FILTERS),
                                         ",".join(WEIGHERS))),
        "oslo_messaging_notifications": (
            "driver = messagingv2\ntopics = %s\n" % notify_topic(topic)),
    }


def notify_topic(topic):
    return topic + "-notifications"


@dataclasses.dataclass
class Instance:
    uuid: str
    name: str
    provider_uuid: str
    hypervisor: str
    containers: set = dataclasses.field(default_factory=set)
    retired: bool = False


@dataclasses.dataclass
class Tally:
    sizes: dict = dataclasses.field(default_factory=dict)  # uuid -> size
    placed: dict = dataclasses.field(default_factory=dict)  # uuid -> inst
    instances: list = dataclasses.field(default_factory=list)
    full_answers: int = 0
    stale_answers: int = 0
    announced: int = 0
    retired: int = 0
    retire_conflicts: int = 0
    first_fit: int = 0    # placements on the first instance with room
    phases: list = dataclasses.field(default_factory=list)
    first_wave: tuple = (0, 0)   # instances used, fewest possible
    refill: tuple = (0, 0)       # containers, instances created for them


class _Vacancies:
    """provider.vacant notifications, as the service's listener gets
    them (every other event of the topic is dropped)."""

    def __init__(self):
        self.received = queue.Queue()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        if event_type == VACANT:
            self.received.put(payload)


def run(ctx):
    vacancies = _Vacancies()
    listener = messaging.get_notification_listener(
        ctx.notifications, [messaging.Target(topic=notify_topic(ctx.topic))],
        [vacancies], executor="threading", serializer=rpc.Serializer())
    listener.start()
    try:
        return _run(ctx, vacancies)
    finally:
        listener.stop()
        listener.wait()
        if str(ctx.conf.transport_url).startswith("rabbit:"):
            _delete_queues(ctx.conf.transport_url, notify_topic(ctx.topic))


def _run(ctx, vacancies):
    print("\n--- container flow: %d containers, instances of %d VCPU / "
          "%d MiB, sequential fill ---" % (
              ctx.args.containers, INSTANCE_VCPUS, INSTANCE_MEMORY_MB),
          flush=True)
    _report_hypervisors(ctx)
    tally = Tally()
    _create_instance(ctx, tally, "the first instance")
    # four clusters, one after the other
    clusters = [_arrive(ctx, tally, ctx.args.containers // 4 + (
        i < ctx.args.containers % 4), "cluster-" + "abcd"[i])
        for i in range(4)]
    tally.first_wave = (len(tally.instances), lower_bound(
        list(tally.sizes.values())))
    # cluster-b is deleted, and a quarter of the others' containers
    rest = [c for cluster in clusters[:1] + clusters[2:] for c in cluster]
    ctx.rng.shuffle(rest)
    _leave(ctx, tally, vacancies, clusters[1] + rest[:len(rest) // 4],
           "churn")
    # new containers fill the holes the churn left before any new instance
    before = len(tally.instances)
    refill = _arrive(ctx, tally, max(ctx.args.containers // 6, 1),
                     "cluster-e")
    tally.refill = (len(refill), len(tally.instances) - before)
    _leave(ctx, tally, vacancies, sorted(
        c for c, inst in tally.placed.items() if c in inst.containers),
        "teardown")
    return _summary(ctx, tally)


def _report_hypervisors(ctx):
    names = ["ctr-hv-%02d" % i for i in range(1, HYPERVISORS + 1)]
    for name in names:
        ctx.client.report_resource_stats(None, compute_node.ComputeNode(
            uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt-demo")),
            host=name, nodename=name, availability_zone="az1",
            inventories=[
                compute_node.Inventory(resource_class="VCPU", total=64,
                                       allocation_ratio=1.0),
                compute_node.Inventory(resource_class="MEMORY_MB",
                                       total=262144, allocation_ratio=1.0),
                compute_node.Inventory(resource_class="DISK_GB",
                                       total=2000)],
            report_sequence=time.time_ns()))
    seen = demo_flows.wait_until(lambda: len(ctx.client.get_host_states(
        None, hosts=names)) == len(names), timeout=30)
    if not seen:
        raise RuntimeError("the scheduler did not see the hypervisors")
    demo_flows.say("%d hypervisors reported (%s)" % (len(names),
                                                     ", ".join(names)))


def _arrive(ctx, tally, count, cluster):
    """``count`` containers of ``cluster``, one request each: their
    uuids."""
    sizes = [(v, m) for v, m, _w in SIZES]
    weights = [w for _v, _m, w in SIZES]
    progress = demo_flows.Progress(cluster, count, every=10)
    arrived = []
    for i in range(count):
        size = ctx.rng.choices(sizes, weights)[0]
        container = str(uuid.uuid4())
        tally.sizes[container] = size
        first = _first_with_room(tally, size)
        tally.placed[container] = _place(ctx, tally, container, size)
        # sequential fill: the first instance in name order with room,
        # or (none had room) the one created for it
        tally.first_fit += tally.placed[container] is (
            first or tally.instances[-1])
        tally.placed[container].containers.add(container)
        arrived.append(container)
        progress.step(i + 1, "on %d instance(s)" % _live(tally))
    return arrived


def _first_with_room(tally, size):
    """The first live instance, in name order, that ``size`` fits in."""
    for inst in sorted(tally.instances, key=lambda i: i.name):
        used = [sum(tally.sizes[c][k] for c in inst.containers)
                for k in (0, 1)]
        if not inst.retired and (
                used[0] + size[0] <= INSTANCE_VCPUS
                and used[1] + size[1] <= INSTANCE_MEMORY_MB):
            return inst
    return None


def _spec(size):
    vcpus, memory_mb = size
    return request_spec.RequestSpec(
        flavor=request_spec.Flavor(name="container-%dc%dm" % size,
                                   vcpus=vcpus, memory_mb=memory_mb,
                                   root_gb=0),
        profile=PROFILE, scheduler_hints={"fill": ["sequential"]})


def _place(ctx, tally, container, size, attempts=50):
    """The instance the container went to, creating instances as asked."""
    by_provider = {inst.provider_uuid: inst for inst in tally.instances}
    for _ in range(attempts):
        try:
            [selections] = ctx.client.select_destinations(
                None, _spec(size), [container], return_alternates=False)
        except exception.ProvidersFull as full:
            if full.kwargs.get("hosts", 0) < _live(tally):
                # a worker has not read the newest instance's report yet
                tally.stale_answers += 1
                time.sleep(0.2)
                continue
            tally.full_answers += 1
            inst = _create_instance(ctx, tally, "every instance full")
            by_provider[inst.provider_uuid] = inst
            continue
        except exception.NoValidHost:
            # no container host at all: the worker has not read the first
            # instance's report yet
            tally.stale_answers += 1
            time.sleep(0.2)
            continue
        return by_provider[selections[0].compute_node_uuid]
    raise RuntimeError("container %s found no instance after %d attempts"
                       % (container, attempts))


def _live(tally):
    return sum(1 for inst in tally.instances if not inst.retired)


def _create_instance(ctx, tally, why):
    """Boot an instance where Gantt says, and report it as a container
    host linked to it: what the service does on ProvidersFull."""
    instance = str(uuid.uuid4())
    [selections] = ctx.client.select_destinations(
        None, request_spec.RequestSpec(flavor=INSTANCE_FLAVOR),
        [instance], return_alternates=False)
    name = "magnum-%04d" % (len(tally.instances) + 1)
    report = provider.ProviderReport(
        provider=provider.ResourceProvider(
            uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS, instance)), name=name,
            inventories=[
                compute_node.Inventory(resource_class="VCPU",
                                       total=INSTANCE_VCPUS),
                compute_node.Inventory(resource_class="MEMORY_MB",
                                       total=INSTANCE_MEMORY_MB)]),
        report_sequence=time.time_ns(), kind="container", service=SERVICE,
        instance_uuid=instance, capabilities={"runtime": "runc"})
    ctx.client.update_provider(None, report)
    inst = Instance(instance, name, report.provider.uuid,
                    selections[0].service_host)
    tally.instances.append(inst)
    demo_flows.say("%s: created %s (instance %s…, placed by Gantt on %s), "
                   "reported as a container host"
                   % (why, name, instance[:8], inst.hypervisor))
    return inst


def _leave(ctx, tally, vacancies, containers, phase):
    """Delete ``containers``; retire every instance they leave empty."""
    for container in containers:
        ctx.client.release(None, container)
        tally.placed[container].containers.discard(container)
    emptied = {inst.provider_uuid: inst for inst in tally.instances
               if not inst.containers and not inst.retired}
    demo_flows.say("%s: %d containers deleted; %d instance(s) left empty"
                   % (phase, len(containers), len(emptied)))
    retired_before = tally.retired
    deadline = time.monotonic() + 30
    while any(not inst.retired for inst in emptied.values()):
        try:
            payload = vacancies.received.get(
                timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            demo_flows.say("%s: no provider.vacant for %s after 30 s" % (
                phase, ", ".join(i.name for i in emptied.values()
                                 if not i.retired)))
            break
        inst = emptied.get(payload.provider_uuid)
        if inst is None or inst.retired:
            continue
        tally.announced += 1
        _retire(ctx, tally, inst, payload.generation)
    tally.phases.append((phase, len(containers), len(emptied),
                         tally.retired - retired_before))


def _retire(ctx, tally, inst, generation):
    try:
        ctx.client.retire_provider(None, inst.provider_uuid, generation)
    except exception.ProviderConflict:
        # something landed on it since: it is not vacant any more
        tally.retire_conflicts += 1
        return
    inst.retired = True
    tally.retired += 1
    ctx.client.release(None, inst.uuid)   # and the instance is deleted
    demo_flows.say("%s vacant at generation %d: retired, instance deleted"
                   % (inst.name, generation))


def lower_bound(sizes):
    """The fewest instances any placement of ``sizes`` could use."""
    vcpus = sum(v for v, _m in sizes)
    memory = sum(m for _v, m in sizes)
    return max(math.ceil(vcpus / INSTANCE_VCPUS),
               math.ceil(memory / INSTANCE_MEMORY_MB))


def _summary(ctx, tally):
    states = ctx.client.get_host_states(None)
    left = [s.host for s in states if s.kind == "container"]
    held = collections.Counter(
        r.resource_class for s in states if s.kind == "container"
        for r in s.resources if r.used)
    used, bound = tally.first_wave
    print("\n=== Containers summary " + "=" * 45)
    print("containers     %d placed in clusters a-d, sequential fill, "
          "profile %s" % (len(tally.sizes) - tally.refill[0], PROFILE))
    print("instances      %d used (fewest possible %d: %.2fx): the first, "
          "then one per 'every instance is full' answer" % (
              used, bound, used / max(bound, 1)))
    print("first fit      %d of %d placements on the first instance (in "
          "name order) with room" % (tally.first_fit, len(tally.sizes)))
    phases = iter(tally.phases)
    _print_phase(next(phases))
    print("refill         %d containers of cluster-e: %d new instance(s), "
          "the rest in the holes the churn left" % tally.refill)
    _print_phase(next(phases))
    print("answers        %d 'every instance is full' (ProvidersFull), %d "
          "retried while a worker caught up with a new instance" % (
              tally.full_answers, tally.stale_answers))
    print("vacancy        %d provider.vacant announced, %d retired at "
          "their generation, %d conflicts" % (
              tally.announced, tally.retired, tally.retire_conflicts))
    print("check          %d container hosts left, %d resource classes "
          "still used on them" % (len(left), len(held)))
    created = len(tally.instances)
    ok = (tally.retired == created and not left and not held
          and tally.announced == created)
    print("result         %s" % ("OK" if ok else "INCONSISTENT"))
    return ok


def _print_phase(phase):
    name, deleted, emptied, retired = phase
    print("%-14s %d containers deleted -> %d instance(s) vacant, %d "
          "retired" % (name, deleted, emptied, retired))


def _delete_queues(url, topic):
    """Notification queues outlive their listener on RabbitMQ: drop the
    flow's (the fake bus goes with the process)."""
    with kombu.Connection(str(url).replace("rabbit://", "amqp://", 1)
                          ) as conn:
        channel = conn.channel()
        for priority in ("info", "error"):
            channel.queue_delete("%s.%s" % (topic, priority))
