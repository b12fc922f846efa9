#!/usr/bin/env python3
"""A network service and a container service talking to Gantt, without
importing Gantt.

Written from ``doc/source/admin/networks.rst`` and ``containers.rst``
alone, with the helpers of ``external_client.py`` and ``kinds_client.py``
(the same folder: oslo.messaging, oslo.config and the standard library).
It

1. reports three L3 agents as providers of kind ``network``
   (``CUSTOM_L3_ROUTER``), places three routers through the profile
   ``network`` (each on the agent with the fewest, so one each), a fourth,
   then an HA router on two agents (an anti-affinity group): the two least
   loaded, distinct; then releases them all;
2. reports one container host (kind ``container``, 2 VCPU, linked to its
   instance uuid) and fills it with ``fill=sequential`` containers through
   the profile ``container`` until Gantt answers ``ProvidersFull``; then
   "creates another instance" (a second container host reports) and
   places the waiting container there;
3. places a container on a named instance (``on_instance``);
4. releases the second instance's containers, hears ``provider.vacant``
   (with ``--notification-topic``; else reads the vacancy from
   ``get_host_states``) and retires that container host at the generation
   it was vacant at (``retire_provider``); releases the rest.

Usage::

    python3 services_client.py \\
        --transport-url rabbit://guest:guest@127.0.0.1:5672/ \\
        --topic gantt-scheduler --notification-topic notifications

The scheduler needs the ``network`` and ``container`` profiles of
``services.conf``. It exits 0 when every step behaved as documented.

NOTE: the agents and container hosts it reports are real providers in the
scheduler's database (named ``<prefix>-agent-N`` and ``<prefix>-ctr-N``).
"""

import argparse
import queue
import sys
import uuid

import external_client as wire
import kinds_client as kinds
import oslo_messaging as messaging

ROUTER = "CUSTOM_L3_ROUTER"


# -- routers ---------------------------------------------------------------


def agent(name, zone):
    """An L3 agent: may host up to 1000 routers."""
    return kinds.provider_report(
        name, "network", {ROUTER: wire.inventory(ROUTER, 1000)},
        service="neutron-l3-agent", zone=zone,
        capabilities={"agent_mode": "legacy"})


def router(zone, bindings=1, group=None):
    return kinds.request({ROUTER: 1}, profile="network", zone=zone,
                         num_instances=bindings, anti_affinity_group=group)


def routers(client, ctxt, args, out):
    agents = ["%s-agent-%d" % (args.prefix, i) for i in (1, 2, 3)]
    out.step("update_provider: three L3 agents of kind network")
    kinds.report(client, ctxt, [agent(a, args.zone) for a in agents], out,
                 args.timeout)

    out.step("select_destinations: four routers, one at a time")
    placed = [kinds.place(client, ctxt, router(args.zone))[0]
              for _ in range(4)]
    for host, consumer, _ in placed:
        out.say("router %s -> placed on %s" % (consumer, host))
    if sorted(h for h, _, _ in placed[:3]) != agents:
        out.fail("each of the first three routers belongs on an agent "
                 "without one")
    states = kinds.host_states(client, ctxt, agents)
    load = {a: kinds.used(states[a], ROUTER) for a in agents}
    out.say("routers per agent: %s" % ", ".join(
        "%s=%d" % item for item in sorted(load.items())))

    out.step("select_destinations: an HA router on two agents")
    ha = kinds.place(client, ctxt, router(args.zone, 2, str(uuid.uuid4())),
                     count=2)
    hosts = [h for h, _, _ in ha]
    out.say("HA router bindings -> placed on %s" % ", ".join(hosts))
    least = sorted(a for a in agents if load[a] == min(load.values()))
    if sorted(hosts) != least:
        out.fail("the HA router belongs on the two least loaded agents, "
                 "one binding each")
    kinds.release(client, ctxt, [c for _, c, _ in placed + ha], out)


# -- containers ------------------------------------------------------------


def container_host(name, instance, zone):
    """A Nova instance running a container agent: 2 VCPU, 4 GiB for
    containers, linked to the instance it runs in."""
    return kinds.provider_report(
        name, "container", {
            "VCPU": wire.inventory("VCPU", 2),
            "MEMORY_MB": wire.inventory("MEMORY_MB", 4096)},
        service="zun-compute", zone=zone, instance_uuid=instance,
        capabilities={"runtime": "runc"})


def container(zone, **hints):
    return kinds.request({"VCPU": 1, "MEMORY_MB": 1024},
                         profile="container", zone=zone, hints={
                             k: [v] for k, v in hints.items()})


def fill(client, ctxt, args, out):
    """Containers fill the first instance until ProvidersFull; the one
    that did not fit, its consumer uuid."""
    for _ in range(3):
        try:
            [(host, consumer, _)] = kinds.place(
                client, ctxt, container(args.zone, fill="sequential"))
        except messaging.RemoteError as exc:
            out.say("RemoteError exc_type=%s" % exc.exc_type)
            if exc.exc_type != "ProvidersFull":
                out.fail("expected ProvidersFull, got %s" % exc.exc_type)
            return
        out.say("container %s -> placed on %s" % (consumer, host))
        yield consumer
    out.fail("an instance of 2 VCPU took 3 containers of 1")


def containers(client, ctxt, args, out, vacancies):
    hosts = ["%s-ctr-%d" % (args.prefix, i) for i in (1, 2)]
    instances = {h: kinds.stable_uuid(h + ".instance") for h in hosts}
    out.step("update_provider: one container host of kind container")
    kinds.report(client, ctxt, [container_host(
        hosts[0], instances[hosts[0]], args.zone)], out, args.timeout)

    out.step("select_destinations: containers with fill=sequential")
    first = list(fill(client, ctxt, args, out))
    out.say("every instance is full: creating another one")
    kinds.report(client, ctxt, [container_host(
        hosts[1], instances[hosts[1]], args.zone)], out, args.timeout)
    [(host, waiting, _)] = kinds.place(
        client, ctxt, container(args.zone, fill="sequential"))
    out.say("the waiting container -> placed on %s" % host)
    if host != hosts[1]:
        out.fail("the waiting container belongs on the new instance")

    out.step("select_destinations: a container on a named instance")
    [(host, named, _)] = kinds.place(client, ctxt, container(
        args.zone, on_instance=instances[hosts[1]]))
    out.say("on instance %s -> placed on %s" % (instances[hosts[1]], host))
    if host != hosts[1]:
        out.fail("on_instance must place on that instance's host")

    out.step("release the second instance's containers; retire it")
    kinds.release(client, ctxt, [waiting, named], out)
    generation = vacant_generation(client, ctxt, hosts[1], vacancies, args,
                                   out)
    retired = client.prepare(version=kinds.PROVIDERS_VERSION).call(
        ctxt, "retire_provider",
        provider_uuid=kinds.stable_uuid(hosts[1]), generation=generation)
    wire.cast_to_all(client.prepare(version="1.3", fanout=True), ctxt,
                     "providers_changed")
    out.say("retire_provider %s at generation %d -> %s" % (
        hosts[1], generation, retired))
    if retired is not True or kinds.host_states(client, ctxt, [hosts[1]]):
        out.fail("a vacant container host is retired at its generation")
    kinds.release(client, ctxt, first, out)


def vacant_generation(client, ctxt, host, vacancies, args, out):
    """The generation ``host`` was vacant at: from its provider.vacant
    notification when listening, else from get_host_states."""
    if vacancies is not None:
        try:
            payload = vacancies.get(timeout=args.timeout)
        except queue.Empty:
            out.fail("no provider.vacant within %ds" % args.timeout)
            return -1
        out.say("provider.vacant: %s (kind %s, instance %s) at generation "
                "%d" % (payload["name"], payload["kind"],
                        payload["instance_uuid"], payload["generation"]))
        if payload["name"] != host:
            out.fail("the vacant provider should be %s" % host)
        return payload["generation"]
    state = kinds.host_states(client, ctxt, [host])[host]
    out.say("%s: vacant=%s generation %d" % (host, state["vacant"],
                                            state["generation"]))
    return state["generation"]


class Vacancies:
    """A notification endpoint: the payload of each provider.vacant."""

    def __init__(self):
        self.payloads = queue.Queue()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        if event_type == "provider.vacant":
            self.payloads.put(wire.data_of(payload, "ProviderVacantPayload"))

    def get(self, timeout):
        return self.payloads.get(timeout=timeout)


def listen(conf, args):
    """A notification listener on ``--notification-topic`` (None without
    it); its queue exists from now on, so nothing announced later is
    missed."""
    if not args.notification_topic:
        return None, None
    # (the listener keeps its transport: listener.transport)
    transport = messaging.get_notification_transport(
        conf, url=args.transport_url)
    endpoint = Vacancies()
    listener = messaging.get_notification_listener(
        transport, [messaging.Target(topic=args.notification_topic)],
        [endpoint], executor="threading")
    listener.start()
    return listener, endpoint


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="gantt-scheduler")
    parser.add_argument("--notification-topic", default=None,
                        help="where the scheduler sends its notifications "
                             "([oslo_messaging_notifications] topics)")
    parser.add_argument("--prefix", default="example")
    parser.add_argument("--zone", default=None)
    parser.add_argument("--timeout", type=int, default=30)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = wire.Transcript()
    conf = wire.make_conf()
    transport, client, ctxt = kinds.connect(conf, args)
    listener, vacancies = listen(conf, args)
    try:
        routers(client, ctxt, args, out)
        containers(client, ctxt, args, out, vacancies)
    except messaging.RemoteError as exc:
        out.fail("unexpected remote error %s: %s" % (exc.exc_type, exc.value))
    finally:
        if listener is not None:
            listener.stop()
            listener.wait()
            listener.transport.cleanup()
        transport.cleanup()
    return kinds.outcome(out)


if __name__ == "__main__":
    sys.exit(main())
