#!/usr/bin/env python3
"""A network service and a container service talking to Gantt, without
importing Gantt.

Built from the wire documentation and ``doc/source/admin/networks.rst`` /
``containers.rst`` alone, with the helpers of ``external_client.py`` (the
same folder: oslo.messaging, oslo.config and the standard library). It

1. reports three L3 agents (providers of ``CUSTOM_L3_ROUTER``) and places
   an HA router on two of them (two bindings in an anti-affinity group),
   then releases the bindings;
2. reports one container host (an instance of 2 VCPU, linked to its
   instance uuid) and fills it with ``fill=sequential`` containers until
   Gantt answers ``ProvidersFull``; then "creates another instance" (a
   second container host reports) and places the waiting container there;
3. places a container on a named instance (``on_instance``);
4. releases every container.

Usage::

    python3 services_client.py \\
        --transport-url rabbit://guest:guest@127.0.0.1:5672/ \\
        --topic gantt-scheduler

The scheduler's filters and weighers must include those of the network
profile (``LeastRoutersWeigher``, ``ServerGroupAntiAffinityFilter``; see
networks.rst). It exits 0 when every step behaved as documented.

NOTE: the agents and container hosts it reports are real entries in the
scheduler's database (named ``<prefix>-agent-N`` and ``<prefix>-ctr-N``).
"""

import argparse
import sys
import time
import uuid

import external_client as wire
import oslo_messaging as messaging


def provider(name, inventories, stats=None):
    """A ComputeNode 1.0 of other inventories: an agent or a container
    host reports as a compute host does."""
    return wire.primitive("ComputeNode", "1.0", {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt.example")),
        "host": name, "nodename": name, "cell_uuid": None,
        "availability_zone": None, "disabled": False,
        "inventories": [wire.inventory(rc, total)
                        for rc, total in inventories.items()],
        "traits": [], "aggregates": [], "num_instances": 0,
        "num_io_ops": 0, "capabilities": {}, "stats": dict(stats or {}),
        "report_sequence": time.time_ns(), "updated_at": None,
    })


def spec(flavor_prim, num_instances, hints=None, group=None):
    data = wire.data_of(wire.request_spec(flavor_prim, num_instances),
                        "RequestSpec")
    data["scheduler_hints"] = {k: list(v) for k, v in (hints or {}).items()}
    if group is not None:
        data["instance_group"] = wire.primitive("InstanceGroup", "1.0", {
            "uuid": group, "policy": "anti-affinity", "rules": {},
            "hosts": []})
    return wire.primitive("RequestSpec", "1.0", data)


def flavor(name, vcpus, memory_mb, extra_specs=None):
    prim = wire.flavor(name, vcpus=vcpus, memory_mb=memory_mb, root_gb=0)
    wire.data_of(prim, "Flavor")["extra_specs"] = dict(extra_specs or {})
    return prim


def report(client, ctxt, nodes, out, timeout):
    fanout = client.prepare(fanout=True)
    sequences = {}
    for node in nodes:
        data = node[wire.NS + ".data"]
        sequences[data["host"]] = data["report_sequence"]
        wire.cast_to_all(fanout, ctxt, "update_resource_stats",
                         compute_node=node)
    wire.wait_for_hosts(client, ctxt, list(sequences), sequences, out,
                        timeout)


def place(client, ctxt, request, count):
    """The claimed host of each of ``count`` new consumers, and their
    uuids."""
    consumers = [str(uuid.uuid4()) for _ in range(count)]
    lists = client.call(ctxt, "select_destinations", request_spec=request,
                        instance_uuids=consumers, return_alternates=False)
    return [wire.describe_selection(sels[0])[0] for sels in lists], consumers


def ha_router(client, ctxt, args, out):
    out.step("an HA router on two of three L3 agents")
    agents = ["%s-agent-%d" % (args.prefix, i) for i in (1, 2, 3)]
    report(client, ctxt, [provider(a, {"CUSTOM_L3_ROUTER": 1000})
                          for a in agents], out, args.timeout)
    router = flavor("router", 0, 0, {"resources:CUSTOM_L3_ROUTER": "1"})
    hosts, bindings = place(client, ctxt, spec(
        router, 2, group=str(uuid.uuid4())), 2)
    out.say("bindings on %s" % ", ".join(hosts))
    if len(set(hosts)) != 2 or not set(hosts) <= set(agents):
        out.fail("an HA router's bindings must be on two distinct agents")
    for binding in bindings:
        client.call(ctxt, "release", consumer_uuid=binding)
    out.say("released")


def containers(client, ctxt, args, out):
    out.step("containers fill an instance, then ask for another")
    hosts = ["%s-ctr-%d" % (args.prefix, i) for i in (1, 2)]
    instances = {h: str(uuid.uuid5(uuid.NAMESPACE_DNS, h + ".instance"))
                 for h in hosts}

    def container_host(name):
        return provider(name, {"VCPU": 2, "MEMORY_MB": 4096},
                        {"instance_uuid": instances[name]})

    report(client, ctxt, [container_host(hosts[0])], out, args.timeout)
    small = flavor("container.small", 1, 1024)
    sequential = {"fill": ["sequential"]}
    placed = []
    while True:
        waiting = str(uuid.uuid4())
        try:
            lists = client.call(
                ctxt, "select_destinations",
                request_spec=spec(small, 1, sequential),
                instance_uuids=[waiting], return_alternates=False)
        except messaging.RemoteError as exc:
            out.say("RemoteError exc_type=%s" % exc.exc_type)
            if exc.exc_type != "ProvidersFull":
                out.fail("expected ProvidersFull, got %s" % exc.exc_type)
            break
        placed.append(waiting)
        out.say("container on %s" % wire.describe_selection(lists[0][0])[0])
        if len(placed) > 2:
            out.fail("an instance of 2 VCPU took more than 2 containers")
            break
    out.say("every instance is full: creating another one")
    report(client, ctxt, [container_host(h) for h in hosts], out,
           args.timeout)
    lists = client.call(ctxt, "select_destinations",
                        request_spec=spec(small, 1, sequential),
                        instance_uuids=[waiting], return_alternates=False)
    host = wire.describe_selection(lists[0][0])[0]
    out.say("the waiting container -> placed on %s" % host)
    if host != hosts[1]:
        out.fail("the waiting container belongs on the new instance")
    placed.append(waiting)

    out.step("a container on a named instance")
    named, consumers = place(client, ctxt, spec(
        small, 1, {"on_instance": [instances[hosts[1]]]}), 1)
    out.say("on instance %s -> placed on %s" % (instances[hosts[1]],
                                                named[0]))
    if named != [hosts[1]]:
        out.fail("on_instance must place on that instance's host")
    for consumer in placed + consumers:
        client.call(ctxt, "release", consumer_uuid=consumer)
    out.say("released %d containers" % len(placed + consumers))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0])
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="gantt-scheduler")
    parser.add_argument("--prefix", default="example")
    parser.add_argument("--timeout", type=int, default=30)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = wire.Transcript()
    conf = wire.make_conf()
    transport = messaging.get_rpc_transport(conf, url=args.transport_url)
    client = messaging.get_rpc_client(
        transport, messaging.Target(exchange=wire.EXCHANGE, topic=args.topic,
                                    version=wire.RPC_API_VERSION),
        timeout=args.timeout)
    ctxt = {"request_id": "req-" + str(uuid.uuid4())}
    try:
        ha_router(client, ctxt, args, out)
        containers(client, ctxt, args, out)
    except messaging.RemoteError as exc:
        out.fail("unexpected remote error %s: %s" % (exc.exc_type, exc.value))
    finally:
        transport.cleanup()
    print("\n%s" % ("OK" if not out.failures else
                    "%d step(s) FAILED" % out.failures))
    return 0 if not out.failures else 1


if __name__ == "__main__":
    sys.exit(main())
