"""Helpers of a service that reports providers of its own kind and asks
for placements without a flavor: the primitives and calls of
doc/source/admin/providers.rst and profiles.rst, written by hand.

Used by ``volume_client.py`` and ``services_client.py`` (the same
folder); like ``external_client.py``, whose plumbing it reuses, it
imports nothing of Gantt.
"""

import time
import uuid

import external_client as wire
import oslo_messaging as messaging

#: the RPC API versions these calls need: ProviderReport 1.2 and
#: HostState 1.1 (1.9), RequestSpec 1.2 with a profile (1.10)
PROVIDERS_VERSION = "1.9"
PROFILES_VERSION = "1.10"


def stable_uuid(name):
    """The same uuid for the same name: re-running updates the same
    providers."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt.example"))


def provider_report(name, kind, inventories, *, service, zone=None,
                    capabilities=None, instance_uuid=None, traits=()):
    """A ProviderReport 1.2: the full state of one provider of ``kind``.

    :param inventories: ``{resource class: Inventory primitive}``
    """
    return wire.primitive("ProviderReport", "1.2", {
        "provider": wire.primitive("ResourceProvider", "1.0", {
            "uuid": stable_uuid(name), "name": name,
            "parent_provider_uuid": None,
            "inventories": list(inventories.values()),
            "traits": list(traits), "aggregates": []}),
        # only ever grows: the service's clock in nanoseconds
        "report_sequence": time.time_ns(),
        "kind": kind, "service": service, "availability_zone": zone,
        "capabilities": dict(capabilities or {}),
        "instance_uuid": instance_uuid,
    })


def request(resources, *, profile, num_instances=1, zone=None,
            capabilities=None, hints=None, anti_affinity_group=None):
    """A RequestSpec 1.2 without a flavor: its unsuffixed request group
    says what each consumer needs, ``profile`` which profile ranks it."""
    data = {
        "num_instances": num_instances, "flavor": None,
        "request_groups": [wire.primitive("RequestGroup", "1.0", {
            "suffix": "", "resources": dict(resources)})],
        "availability_zone": zone, "profile": profile,
        "capabilities": dict(capabilities or {}),
        "scheduler_hints": {k: list(v) for k, v in (hints or {}).items()},
    }
    if anti_affinity_group is not None:
        data["instance_group"] = wire.primitive("InstanceGroup", "1.0", {
            "uuid": anti_affinity_group, "policy": "anti-affinity",
            "rules": {}})
    return wire.primitive("RequestSpec", "1.2", data)


def report(client, ctxt, reports, out, timeout):
    """Store each report (``update_provider``, a call), tell every worker
    (``providers_changed``, a fanout cast), and wait until a worker holds
    them all; ``{name: HostState data}``."""
    calling = client.prepare(version=PROVIDERS_VERSION)
    for prim in reports:
        result = wire.data_of(calling.call(ctxt, "update_provider",
                                           report=prim), "ReportResult")
        name = wire.data_of(prim[wire.NS + ".data"]["provider"],
                            "ResourceProvider")["name"]
        out.say("update_provider %s -> applied=%s generation=%s" % (
            name, result["applied"], result["generation"]))
    wire.cast_to_all(client.prepare(version="1.3", fanout=True), ctxt,
                     "providers_changed")
    uuids = [wire.data_of(p[wire.NS + ".data"]["provider"],
                          "ResourceProvider")["uuid"] for p in reports]
    deadline = time.monotonic() + timeout
    while True:
        states = host_states(client, ctxt, uuids)
        if len(states) == len(uuids) or time.monotonic() > deadline:
            return states
        time.sleep(0.2)


def host_states(client, ctxt, names):
    """``{host: HostState 1.1 data}`` of the providers a worker holds
    among ``names`` (host names or uuids)."""
    found = client.prepare(version=PROVIDERS_VERSION).call(
        ctxt, "get_host_states", hosts=list(names))
    return {s["host"]: s for s in (wire.data_of(p, "HostState")
                                   for p in found)}


def used(state, resource_class):
    """How much of ``resource_class`` is allocated on a HostState."""
    for prim in state["resources"]:
        usage = wire.data_of(prim, "ResourceUsage")
        if usage["resource_class"] == resource_class:
            return usage["used"]
    return 0


def place(client, ctxt, spec, count=1):
    """``[(provider name, consumer uuid, {provider uuid: resources})]``:
    ``count`` new consumers placed and claimed by ``select_destinations``.

    :raises: oslo_messaging.RemoteError (``exc_type`` NoValidHost,
        ProvidersFull, InvalidRequest, UnknownProfile…)
    """
    consumers = [str(uuid.uuid4()) for _ in range(count)]
    lists = client.prepare(version=PROFILES_VERSION).call(
        ctxt, "select_destinations", request_spec=spec,
        instance_uuids=consumers, return_alternates=False)
    placed = []
    for consumer, selections in zip(consumers, lists, strict=True):
        host, claimed_for, claimed, allocations = wire.describe_selection(
            selections[0])
        if claimed_for != consumer or not claimed:
            raise AssertionError("%s was not claimed" % consumer)
        placed.append((host, consumer, allocations))
    return placed


def release(client, ctxt, consumers, out):
    for consumer in consumers:
        if client.call(ctxt, "release", consumer_uuid=consumer) is not True:
            out.fail("release of %s freed nothing" % consumer)
    out.say("released %d consumer(s)" % len(consumers))


def connect(conf, args):
    """``(transport, client, context)`` of a plain RPC client (no
    serializer: JSON primitives) on ``args.transport_url`` and
    ``args.topic``."""
    transport = messaging.get_rpc_transport(conf, url=args.transport_url)
    client = messaging.get_rpc_client(
        transport, messaging.Target(exchange=wire.EXCHANGE, topic=args.topic,
                                    version=wire.RPC_API_VERSION),
        timeout=args.timeout)
    return transport, client, {"request_id": "req-" + str(uuid.uuid4())}


def outcome(out):
    """Print the verdict; the exit status."""
    print("\n%s" % ("OK" if not out.failures else
                    "%d step(s) FAILED" % out.failures))
    return 0 if not out.failures else 1
