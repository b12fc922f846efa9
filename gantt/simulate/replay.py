"""Replay: a workload's events against one engine, under one policy.

For each policy a fresh Gantt engine is built the way the daemon builds
it (:func:`gantt.scheduler.build`) on a SQLite database of its own; each
host is registered through the intake as an agent's report would be. A
create is ``Placer.select_destinations`` (every enabled filter, the
policy's weighers, the claim); a delete is ``ClaimService.release``. The
simulator keeps its own tally of each host's usage from the selections,
to measure the fleet between events without asking the engine.

Two claim modes:

* ``sqlite`` (the default): claims are Gantt's claim transactions on the
  SQLite file, exactly as the daemon makes them;
* ``memory``: the hosts go straight into the engine's cache (as the
  intake puts a report there, without storing it) and the claim service
  keeps allocations in memory (:class:`MemoryClaimer`: the same capacity
  check, no SQL). The engine's decisions are the same; only the cost of
  the SQL is left out. For large fleets.

In both modes each flavor's request spec is translated once
(:class:`Requests`) and the claims are told to no peers: the engine's
work for each arrival is its filters, weighers, pick and claim.

The first-fit baseline (:data:`FIRST_FIT`) is Gantt's engine with one
weigher: MetricsWeigher on a metric every host reports, its place in the
fleet, lowest first.
"""

import collections
import contextlib
import copy
import dataclasses
import os
import random
import re
import tempfile
import threading
import time
import uuid

import numpy as np
from oslo_config import cfg

from gantt import conf as gantt_conf
from gantt import exception
from gantt import objects
from gantt import scheduler as scheduler_mod
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import migration
from gantt.objects import compute_node as cn_obj
from gantt.objects import request_spec as rs_obj
from gantt.scheduler.pipeline import cycle as cycle_mod
from gantt.scheduler.pipeline import packing
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.state import update as update_mod
from gantt.simulate import fleet as fleet_mod
from gantt.simulate import metrics

objects.register_all()

FIRST_FIT = "first-fit"
MODES = ("sqlite", "memory")
_ORDER_METRIC = "simulate.order"
_CELL = str(uuid.UUID(int=1))
#: the engine's clock: fixed, so that no host ever looks down
_NOW = 1.0e9
_OWNER = allocations.ConsumerInfo(project_id="simulate", user_id="simulate")
#: each arrival's consumer: a version 4 uuid numbered from 1
_CONSUMER = "00000000-0000-4000-8000-%012x"


def policy_names():
    """Every name :func:`make_conf` accepts as a policy."""
    return (*packing.POLICIES, FIRST_FIT)


def make_conf(policy, config_file=None):
    """Gantt's options (an operator's file's, if given) with ``policy``'s
    weigher settings laid over them; None keeps the file's own.

    :raises: KeyError (unknown policy), cfg.Error (a bad config file)
    """
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    files = [config_file] if config_file else []
    conf([], project="gantt", default_config_files=files)
    if policy == FIRST_FIT:
        settings = {"enabled_weighers": ["MetricsWeigher"]}
        conf.set_override("weight_setting", ["%s=-1.0" % _ORDER_METRIC],
                          "metrics")
    elif policy is not None:
        settings = packing.settings(policy,
                                    conf.filter_scheduler.enabled_weighers)
    else:
        settings = {}
    for name, value in settings.items():
        conf.set_override(name, value, "filter_scheduler")
    # one host, the best: the policy decides, not chance
    conf.set_override("host_subset_size", 1, "filter_scheduler")
    # no peers to tell of each claim (the engine would build a message
    # per claim for nobody)
    conf.set_override("broadcast_claims", False, "scheduler")
    return conf


@dataclasses.dataclass(frozen=True)
class Result:
    """One policy's run.

    :attr first_refusal: placements made before the first refusal (None:
        nothing refused)
    :attr reasons: ``Counter`` of refusal reasons (the filter that left
        the most hosts out, as NoValidHost said)
    :attr refusal_times: when each refusal happened
    :attr used: the final ``hosts x classes`` usage
    """

    policy: str
    mode: str
    placed: int
    refused: int
    deleted: int
    first_refusal: int
    reasons: collections.Counter
    refusal_times: tuple
    samples: list
    used: np.ndarray
    seconds: float


class MemoryClaimer:
    """The claim service's writer, in memory: allocations checked against
    each provider's capacity and kept in dicts (the ``memory`` mode)."""

    def __init__(self, capacity_by_uuid):
        self.capacity = capacity_by_uuid
        self.usage = {u: {} for u in capacity_by_uuid}
        self.generation = dict.fromkeys(capacity_by_uuid, 1)
        self.consumers = {}
        self.conflicts = 0
        self._lock = threading.Lock()

    def claim(self, consumer_uuid, allocation_map, *, new=False, **_owner):
        with self._lock:
            if new and consumer_uuid in self.consumers:
                raise allocations.ConsumerExists(
                    provider="*", seen="?", consumer=consumer_uuid)
            held = self.consumers.get(consumer_uuid, {})
            for provider, amounts in allocation_map.items():
                capacity, used = self.capacity[provider], self.usage[provider]
                mine = held.get(provider, {})
                for rc, amount in amounts.items():
                    room = (capacity.get(rc, 0) - used.get(rc, 0)
                            + mine.get(rc, 0))
                    if amount > room:
                        raise exception.CapacityExceeded(
                            provider=provider, amount=amount,
                            resource_class=rc, consumer=consumer_uuid,
                            reason="%d free" % room)
            touched = self._drop(consumer_uuid)
            self._add(consumer_uuid, allocation_map)
            return self._states(touched | allocation_map.keys())

    def release(self, consumer_uuid):
        with self._lock:
            return self._states(self._drop(consumer_uuid))

    def _add(self, consumer_uuid, allocation_map):
        self.consumers[consumer_uuid] = allocation_map
        for provider, amounts in allocation_map.items():
            used = self.usage[provider]
            for rc, amount in amounts.items():
                used[rc] = used.get(rc, 0) + amount

    def _drop(self, consumer_uuid):
        held = self.consumers.pop(consumer_uuid, {})
        for provider, amounts in held.items():
            used = self.usage[provider]
            for rc, amount in amounts.items():
                used[rc] = used.get(rc, 0) - amount
        return held.keys()

    def _states(self, providers):
        """Each provider's new generation and usage (the classes it has
        some of), in uuid order, as the claim transaction returns them."""
        states = []
        for p in sorted(providers):
            self.generation[p] += 1
            states.append(allocations.ProviderState(
                p, self.generation[p],
                {rc: v for rc, v in self.usage[p].items() if v > 0}))
        return states


class Requests:
    """The placer's cycles, each request spec translated once.

    A replay sends one RequestSpec per flavor (:class:`Replayer`), again
    and again; the engine would validate and translate it on every call
    (``translate.from_spec``), to the same request each time (it reads no
    database for a spec without a server group or hints, which the
    simulator's never have). Each call gets a copy of that request with
    its own scratch (``ledger``, ``derived``) and ``resources``, as a fresh
    translation gives; the rest is read only. Otherwise the cycle is the
    placer's own (:meth:`gantt.scheduler.placer.Placer.cycle`).
    """

    def __init__(self, placer):
        self.placer = placer
        self.translate = placer.cycle
        self.translated = {}    # id(spec) -> (spec, request, owner)

    def cycle(self, spec, instance_uuids):
        """:raises: InvalidRequest"""
        known = self.translated.get(id(spec))
        if known is None or known[0] is not spec or len(instance_uuids) != 1:
            first = self.translate(spec, instance_uuids)
            if len(instance_uuids) == 1 and not _reads_database(spec):
                self.translated[id(spec)] = (spec, first.request,
                                             first.owner)
            return first
        _spec, first, owner = known
        request = copy.copy(first)
        request.resources = dict(first.resources)
        request.derived = {}
        request.ledger = request_mod.Ledger()
        return cycle_mod.CycleState(request, self.placer.view(), owner=owner)


def _reads_database(spec):
    """Whether translating ``spec`` reads the database (a server group's
    members, the instances a hint names): then it is done every time."""
    return bool(spec.obj_attr_is_set("instance_group")
                and spec.instance_group
                or spec.obj_attr_is_set("scheduler_hints")
                and spec.scheduler_hints)


def _node(index, host):
    inventories = [cn_obj.Inventory(resource_class=rc, total=total,
                                    reserved=reserved,
                                    allocation_ratio=ratio)
                   for rc, (total, reserved, ratio)
                   in host.shape.inventory.items() if total]
    return cn_obj.ComputeNode(
        uuid=fleet_mod.host_uuid(index), host=host.name,
        nodename=host.name, cell_uuid=_CELL, availability_zone=None,
        disabled=False, traits=[], aggregates=[], num_instances=0,
        num_io_ops=0, capabilities={}, report_sequence=1,
        metrics={_ORDER_METRIC: float(index)}, inventories=inventories)


def spec_of(flavor):
    return rs_obj.RequestSpec(
        project_id="simulate", user_id="simulate", num_instances=1,
        flavor=rs_obj.Flavor(name=flavor.name, vcpus=flavor.vcpus,
                             memory_mb=flavor.memory_mb,
                             root_gb=flavor.disk_gb, ephemeral_gb=0, swap=0,
                             extra_specs={}))


@contextlib.contextmanager
def database(url=None):
    """A migrated Gantt database: ``url``, or a new SQLite file in a
    temporary directory (in memory under /dev/shm where there is one),
    removed afterwards."""
    with contextlib.ExitStack() as stack:
        if url is None:
            shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
            tmp = stack.enter_context(tempfile.TemporaryDirectory(
                prefix="gantt-simulate-", dir=shm))
            url = "sqlite:///%s/gantt.sqlite" % tmp
        db = db_api.Database(url)
        stack.callback(db.dispose)
        migration.upgrade(db)
        yield db


def engine(conf, db, fleet, mode="sqlite"):
    """Gantt's engine on ``db`` with every host of ``fleet`` reported,
    holding what the hosts hold already."""
    sched = scheduler_mod.build(conf, db, clock=lambda: _NOW,
                                rng=random.Random(1))
    sched.stats.load_cache()
    sched.placer.cycle = Requests(sched.placer).cycle
    if mode == "memory":
        # the two seams of the memory mode: reports into the cache only,
        # and the claim service's writer
        _cache_only(sched.claims.cache, fleet)
        sched.claims.claimer = MemoryClaimer({
            fleet_mod.host_uuid(i): {rc: h.shape.capacity(rc)
                                     for rc in fleet_mod.CLASSES}
            for i, h in enumerate(fleet.hosts)})
    else:
        for index, host in enumerate(fleet.hosts):
            sched.stats.update_resource_stats(_node(index, host))
    for index, host in enumerate(fleet.hosts):
        if host.held:
            sched.claims.claim("held-%d" % index,
                               {fleet_mod.host_uuid(index): dict(host.held)},
                               owner=_OWNER)
    return sched


def _cache_only(cache, fleet):
    """Each host's report into the cache, holding nothing, as the intake
    takes one the database has stored.

    A shape's report is translated from a ComputeNode once; each host's
    is that one with its own names, uuid and place (all that
    :func:`_node` sets per host), as its own translation would give.
    """
    shapes = {}
    for index, host in enumerate(fleet.hosts):
        key = tuple(sorted(host.shape.inventory.items()))
        update = shapes.get(key)
        if update is None:
            update = shapes[key] = (
                update_mod.HostUpdate.from_compute_node(
                    _node(index, host), received_at=cache.now()))
        update = dataclasses.replace(
            update, uuid=fleet_mod.host_uuid(index), host=host.name,
            nodename=host.name, metrics={_ORDER_METRIC: float(index)},
            received_at=cache.now())
        cache.apply_report(update, persisted=True)
        cache.apply_usage(update.uuid, 0, {})


_REASON = re.compile(r"(\d+) ([^,]+)")


def reason_of(exc):
    """A refusal's reason: the filter that left out the most hosts
    ("lacked MEMORY_MB"), from NoValidHost's summary."""
    text = str(getattr(exc, "kwargs", {}).get("reason") or exc)
    _head, _sep, parts = text.partition(": ")
    counted = [(int(n), label.strip()) for n, label in _REASON.findall(parts)]
    return max(counted)[1] if counted else text


class Replayer:
    """Replays events on one engine, sampling the fleet as it goes.

    :param progress: ``progress(done, total)``, called now and then
    """

    def __init__(self, fleet, sched, least, *, samples=200, progress=None):
        self.sched = sched
        self.capacity = metrics.capacity_of(fleet)
        self.least = least
        self.row = {h.name: i for i, h in enumerate(fleet.hosts)}
        self.used = np.array([[h.held.get(rc, 0) for rc in fleet_mod.CLASSES]
                              for h in fleet.hosts], dtype=float)
        self.samples_wanted = samples
        self.progress = progress or (lambda done, total: None)
        # one request spec per flavor: the engine only reads it
        self.specs = {}
        self.arrivals = 0
        self.demands = {}   # flavor -> its amounts as a vector

    def run(self, policy, mode, events):
        started = time.perf_counter()
        placed_on, tally = {}, collections.Counter()
        reasons, first, samples = collections.Counter(), None, []
        refusals = []
        every = max(1, len(events) // self.samples_wanted)
        for i, event in enumerate(events):
            if event.kind == "create":
                if self._create(event, placed_on, reasons):
                    tally["placed"] += 1
                else:
                    first = tally["placed"] if first is None else first
                    tally["refused"] += 1
                    refusals.append(event.time)
            elif event.instance in placed_on:
                self._delete(event, placed_on)
                tally["deleted"] += 1
            if i % every == 0 or i == len(events) - 1:
                samples.append(metrics.sample(
                    event.time, len(placed_on), self.used, self.capacity,
                    self.least))
                self.progress(i + 1, len(events))
        return Result(policy, mode, tally["placed"], tally["refused"],
                      tally["deleted"], first, reasons, tuple(refusals),
                      samples,
                      self.used.copy(), time.perf_counter() - started)

    def _create(self, event, placed_on, reasons):
        # a uuid of its own for each arrival (ten times cheaper than one
        # derived from the event's name)
        self.arrivals += 1
        consumer = _CONSUMER % self.arrivals
        try:
            spec = self.specs.get(event.flavor)
            if spec is None:
                spec = self.specs[event.flavor] = spec_of(event.flavor)
            selection = self.sched.placer.select_destinations(
                spec, [consumer], return_alternates=False)[0][0]
        except exception.NoValidHost as exc:
            reasons[reason_of(exc)] += 1
            return False
        row = self.row[selection.nodename]
        self.used[row] += self._demand(event.flavor)
        placed_on[event.instance] = (consumer, row, event.flavor)
        return True

    def _demand(self, flavor):
        found = self.demands.get(flavor)
        if found is None:
            found = self.demands[flavor] = metrics.demand(flavor)
        return found

    def _delete(self, event, placed_on):
        consumer, row, flavor = placed_on.pop(event.instance)
        self.sched.claims.release(consumer)
        self.used[row] -= self._demand(flavor)


def replay(fleet, events, policy, *, conf=None, mode="sqlite", db_url=None,
           samples=200, progress=None):
    """Replay ``events`` on ``fleet`` under ``policy`` (a name of
    :func:`policy_names`, or the label of ``conf``'s own weighers).

    :param conf: the engine's options; by default :func:`make_conf`
    :returns: :class:`Result`
    """
    if mode not in MODES:
        raise ValueError("mode must be one of %s" % ", ".join(MODES))
    conf = conf or make_conf(policy)
    least = metrics.smallest({e.flavor for e in events if e.flavor})
    with database(db_url) as db:
        sched = engine(conf, db, fleet, mode)
        return Replayer(fleet, sched, least, samples=samples,
                        progress=progress).run(policy, mode, events)
