#!/usr/bin/env python3
"""Talk to Gantt without importing Gantt.

A caller written from the wire documentation alone (doc/source/wire/): it
uses only oslo.messaging, oslo.config and the standard library, builds every
versioned object as a hand-written primitive dict and reads the replies as
plain dicts. It

1. casts ``update_resource_stats`` for three hosts (fanout, exchange
   ``gantt``; sent again once if the fanout exchange went away with the
   last worker, see ``cast_to_all``), then waits until a worker reports
   them in ``get_host_states``;
2. calls ``select_destinations`` for two instances;
3. prints the claimed host and the alternates of each instance;
4. releases both instances (and shows that a second release is a no-op);
5. asks for an impossible flavor and shows how ``NoValidHost`` arrives: as
   ``oslo_messaging.RemoteError`` with ``exc_type == "NoValidHost"``.

Usage::

    python3 external_client.py \\
        --transport-url rabbit://guest:guest@127.0.0.1:5672/ \\
        --topic gantt-scheduler

It exits 0 when every step behaved as documented, 1 otherwise.

NOTE: the three hosts it reports are real entries in the scheduler's
database (resource providers named ``<prefix>-1`` … ``<prefix>-3``). Point
it at a test deployment, or choose a ``--host-prefix`` you can recognise.
"""

import argparse
import sys
import time
import uuid
import warnings

# NOTE: importing oslo.messaging imports oslo.service, which loads the
# eventlet backend by default and eventlet warns that it is deprecated on
# stderr. This client never uses it; the warning would only mislead.
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")

from oslo_config import cfg  # noqa: E402
import oslo_messaging as messaging  # noqa: E402

#: the AMQP exchange of every Gantt topic (fixed, whatever the caller's own
#: ``control_exchange`` is)
EXCHANGE = "gantt"
#: the RPC API version this client speaks
RPC_API_VERSION = "1.0"
#: seconds a call may go without hearing from the worker serving it (whole
#: seconds, at least 2: workers heartbeat every half of it)
CALL_MONITOR_TIMEOUT = 10
#: reconnections to the broker allowed to send a call: with the default
#: back-off (1 s, then 3 s, plus 1 s each), 2 of them sleep up to 6 s
SEND_RETRIES = 2
#: the serial namespace of every Gantt object primitive
NS = "gantt_object"


# -- building primitives ----------------------------------------------------


def primitive(name, version, data):
    """A versioned-object primitive, as Gantt's serializer reads it.

    ``gantt_object.changes`` is optional on input; fields left out of
    ``data`` read as their documented defaults on the server.
    """
    return {
        NS + ".name": name,
        NS + ".namespace": "gantt",
        NS + ".version": version,
        NS + ".data": data,
        NS + ".changes": sorted(data),
    }


def data_of(prim, name):
    """The ``data`` of a primitive, checking that it is the expected object."""
    if not isinstance(prim, dict) or prim.get(NS + ".name") != name:
        raise ValueError("expected a %s primitive, got %r" % (name, prim))
    return prim[NS + ".data"]


def inventory(resource_class, total, **optional):
    return primitive("Inventory", "1.0",
                     dict(resource_class=resource_class, total=total,
                          **optional))


def compute_node(name, *, vcpus, memory_mb, disk_gb, zone=None):
    """A ComputeNode 1.0: the full state of one host."""
    return primitive("ComputeNode", "1.0", {
        # a stable uuid per host name: re-running updates the same hosts
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".gantt.example")),
        "host": name,
        "nodename": name,
        "cell_uuid": None,
        "availability_zone": zone,
        "disabled": False,
        "inventories": [
            inventory("VCPU", vcpus, allocation_ratio=4.0),
            inventory("MEMORY_MB", memory_mb, reserved=512),
            inventory("DISK_GB", disk_gb),
        ],
        "traits": ["HW_CPU_X86_AVX2"],
        "aggregates": [],
        "num_instances": 0,
        "num_io_ops": 0,
        "capabilities": {"hypervisor_type": "QEMU", "cpu_arch": "x86_64"},
        # only ever grows: the agent's clock in nanoseconds is a good choice
        "report_sequence": time.time_ns(),
        "updated_at": None,
    })


def flavor(name, *, vcpus, memory_mb, root_gb):
    return primitive("Flavor", "1.0", {
        "name": name, "vcpus": vcpus, "memory_mb": memory_mb,
        "root_gb": root_gb, "ephemeral_gb": 0, "swap": 0, "extra_specs": {},
    })


def request_spec(flavor_prim, num_instances):
    """A RequestSpec 1.0; every field but ``flavor`` may be left out."""
    return primitive("RequestSpec", "1.0", {
        "project_id": "example-project",
        "user_id": "example-user",
        "num_instances": num_instances,
        "flavor": flavor_prim,
        "image": primitive("ImageMeta", "1.0", {
            "id": None, "name": "cirros", "properties": {}}),
        "scheduler_hints": {},
    })


# -- reading replies --------------------------------------------------------


def describe_selection(prim):
    """``(host, consumer, claimed, {provider: resources})`` of a Selection."""
    sel = data_of(prim, "Selection")
    request = data_of(sel["allocation_request"], "AllocationRequest")
    allocations = {}
    for item in request["allocations"]:
        item = data_of(item, "AllocationItem")
        allocations[item["resource_provider_uuid"]] = item["resources"]
    return (sel["service_host"], sel["consumer_uuid"],
            sel.get("claimed", False), allocations)


# -- oslo.messaging plumbing ------------------------------------------------


def make_conf():
    """A private ConfigOpts that oslo.messaging 18.x can use.

    NOTE: oslo.messaging 18.x registers its [oslo_messaging_tracing] and
    [oslo_messaging_metrics] options only on the global ``cfg.CONF`` (at
    import time), but reads them from the transport's own conf on every
    call. A private ConfigOpts must therefore register them too, as
    gantt/rpc.py ``register_opts`` does. (Passing ``cfg.CONF`` to
    ``get_rpc_transport`` instead avoids this step.) Older releases do not
    have these modules, hence the ImportError guards.
    """
    conf = cfg.ConfigOpts()
    try:
        from oslo_messaging._tracing import client as tracing
        conf.register_opts(tracing.oslo_messaging_tracing,
                           group="oslo_messaging_tracing")
    except ImportError:
        pass
    try:
        from oslo_messaging._metrics import client as metrics
        conf.register_opts(metrics.oslo_messaging_metrics,
                           group="oslo_messaging_metrics")
    except ImportError:
        pass
    conf([], project="gantt-external-client", default_config_files=[])
    return conf


class Transcript:
    def __init__(self):
        self.failures = 0

    def step(self, text):
        print("\n== %s" % text, flush=True)

    def say(self, text):
        print("   " + text, flush=True)

    def fail(self, text):
        self.failures += 1
        print("   FAILED: " + text, flush=True)


def wait_for_hosts(client, ctxt, names, sequences, out, timeout):
    """Poll get_host_states until a worker holds every report we cast.

    Casts are asynchronous: nothing tells the caller when a worker applied
    them, so a caller that needs to know asks.
    """
    deadline = time.monotonic() + timeout
    while True:
        states = client.call(ctxt, "get_host_states", hosts=list(names))
        seen = {}
        for prim in states:
            state = data_of(prim, "HostState")
            seen[state["host"]] = state
        if all(n in seen and seen[n]["report_sequence"] >= sequences[n]
               for n in names):
            return [seen[n] for n in names]
        if time.monotonic() > deadline:
            out.fail("only %s of %s known after %ds"
                     % (sorted(seen), list(names), timeout))
            return [seen[n] for n in names if n in seen]
        time.sleep(0.2)


def run(args, out):
    conf = make_conf()
    transport = messaging.get_rpc_transport(conf, url=args.transport_url)
    target = messaging.Target(exchange=EXCHANGE, topic=args.topic,
                              version=RPC_API_VERSION)
    # no serializer: arguments go out and replies come back as plain JSON.
    # call_monitor_timeout: the worker serving a call heartbeats every half
    # of it, so a worker killed mid-call costs that long, not the timeout;
    # retry: a bounded number of reconnections to send a call (by default
    # oslo.messaging reconnects forever before the timeout even starts)
    client = messaging.get_rpc_client(
        transport, target, timeout=args.timeout,
        call_monitor_timeout=CALL_MONITOR_TIMEOUT, retry=SEND_RETRIES)
    # the context is any JSON dict; request_id ties the scheduler's logs
    ctxt = {"request_id": "req-" + str(uuid.uuid4()),
            "project_id": "example-project", "user_id": "example-user"}
    try:
        _scenario(client, ctxt, args, out)
    finally:
        transport.cleanup()


def _scenario(client, ctxt, args, out):
    names = ["%s-%d" % (args.host_prefix, i) for i in (1, 2, 3)]
    report_hosts(client, ctxt, args, names, out)
    instance_uuids = place_two(client, ctxt, names, out)
    release(client, ctxt, instance_uuids, out)
    impossible_flavor(client, ctxt, out)


def cast_to_all(fanout, ctxt, method, **kwargs):
    """A fanout cast (a report), as an agent must send it.

    Casts are at most once: a cast while no scheduler runs reaches nobody,
    and the agent's next periodic report replaces it. But RabbitMQ deletes
    a fanout exchange (``<topic>_fanout``) when its last scheduler stops,
    and oslo.messaging's rabbit driver, which declared it once on its
    connection, then fails the next cast with ``MessageDeliveryFailure``
    (404 NOT_FOUND). It forgets the exchange on that failure, so the same
    cast sent again declares it anew and goes through. A second failure is
    a real one (the broker refuses the message): it is raised.
    """
    try:
        fanout.cast(ctxt, method, **kwargs)
    except messaging.MessageDeliveryFailure:
        fanout.cast(ctxt, method, **kwargs)


def report_hosts(client, ctxt, args, names, out):
    """(a) Agents report: one fanout cast per host, full state each time."""
    out.step("update_resource_stats: fanout cast of 3 ComputeNode primitives "
             "(exchange %s, topic %s)" % (EXCHANGE, args.topic))
    sequences = {}
    fanout = client.prepare(fanout=True)
    for name in names:
        node = compute_node(name, vcpus=16, memory_mb=32768, disk_gb=500,
                            zone=args.zone)
        sequences[name] = node[NS + ".data"]["report_sequence"]
        cast_to_all(fanout, ctxt, "update_resource_stats", compute_node=node)
        out.say("cast %s (uuid %s, report_sequence %d)" % (
            name, node[NS + ".data"]["uuid"], sequences[name]))
    for state in wait_for_hosts(client, ctxt, names, sequences, out,
                                args.timeout):
        free = {r["resource_class"]: r["free"] for r in (
            data_of(u, "ResourceUsage") for u in state["resources"])}
        out.say("scheduler knows %s: up=%s free=%s" % (
            state["host"], state["up"], free))


def place_two(client, ctxt, names, out):
    """(b) A conductor asks for two instances; (c) print the answer."""
    out.step("select_destinations: 2 instances of flavor example.small")
    instance_uuids = [str(uuid.uuid4()) for _ in range(2)]
    spec = request_spec(flavor("example.small", vcpus=2, memory_mb=4096,
                               root_gb=20), num_instances=2)
    lists = client.call(ctxt, "select_destinations", request_spec=spec,
                        instance_uuids=instance_uuids,
                        return_alternates=True)
    # one list per instance, in the order of instance_uuids:
    # [claimed, alternate, ...]
    if len(lists) != len(instance_uuids):
        out.fail("expected %d lists, got %d" % (len(instance_uuids),
                                                len(lists)))
        return instance_uuids
    for wanted, selections in zip(instance_uuids, lists, strict=True):
        host, consumer, claimed, allocations = describe_selection(
            selections[0])
        if consumer != wanted or not claimed:
            out.fail("first selection of %s is not its claim" % wanted)
        if host not in names:
            out.fail("placed on %s, which this script did not report" % host)
        alternates = [describe_selection(s)[0] for s in selections[1:]]
        out.say("instance %s -> placed on %s, claimed %s" % (
            consumer, host, allocations))
        out.say("    alternates: %s" % (", ".join(alternates) or "none"))
    return instance_uuids


def release(client, ctxt, instance_uuids, out):
    """(d) The instances are deleted: release their allocations."""
    out.step("release: both instances, then the first one again")
    for consumer in instance_uuids:
        freed = client.call(ctxt, "release", consumer_uuid=consumer)
        out.say("release %s -> %s" % (consumer, freed))
        if freed is not True:
            out.fail("release of a placed instance returned %r" % freed)
    again = client.call(ctxt, "release", consumer_uuid=instance_uuids[0])
    out.say("release %s again -> %s (idempotent)" % (instance_uuids[0],
                                                     again))
    if again is not False:
        out.fail("a second release returned %r" % again)


def impossible_flavor(client, ctxt, out):
    """(e) The typed error of an impossible request, as a RemoteError."""
    out.step("select_destinations: a flavor no host can hold")
    huge = request_spec(flavor("example.huge", vcpus=1, memory_mb=10 ** 7,
                               root_gb=1), num_instances=1)
    try:
        client.call(ctxt, "select_destinations", request_spec=huge,
                    instance_uuids=[str(uuid.uuid4())])
    except messaging.RemoteError as exc:
        # a caller that does not import gantt cannot rebuild the exception:
        # exc_type is the class name, value its message
        out.say("RemoteError exc_type=%s" % exc.exc_type)
        out.say("            value=%s" % exc.value)
        if exc.exc_type != "NoValidHost":
            out.fail("expected NoValidHost, got %s" % exc.exc_type)
    else:
        out.fail("an impossible flavor was placed")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/",
                        help="the scheduler's top-level message bus")
    parser.add_argument("--topic", default="gantt-scheduler",
                        help="the scheduler's [scheduler] topic")
    parser.add_argument("--host-prefix", default="example-host",
                        help="names of the three hosts reported")
    parser.add_argument("--zone", default=None,
                        help="availability zone of the reported hosts")
    parser.add_argument("--timeout", type=int, default=30,
                        help="seconds to wait for each call")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    out = Transcript()
    try:
        run(args, out)
    except messaging.MessagingTimeout:
        out.fail("no answer on topic %s within %ds: is gantt-scheduler "
                 "running there?" % (args.topic, args.timeout))
    except messaging.RemoteError as exc:
        out.fail("unexpected remote error %s: %s" % (exc.exc_type, exc.value))
    print("\n%s" % ("OK" if not out.failures else
                    "%d step(s) FAILED" % out.failures))
    return 0 if not out.failures else 1


if __name__ == "__main__":
    sys.exit(main())
