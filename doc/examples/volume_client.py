#!/usr/bin/env python3
"""A volume service talking to Gantt, without importing Gantt.

Written from ``doc/source/admin/volumes.rst`` alone, with the helpers of
``external_client.py`` and ``kinds_client.py`` (the same folder:
oslo.messaging, oslo.config and the standard library). It

1. reports three pools as providers of kind ``volume`` (ProviderReport
   1.2): two thin ones of the backend ``lvm-thin`` (1000 GB
   over-subscribed 20 times, 500 GB 5 times) and a thick one of
   ``lvm-thick`` (2000 GB);
2. places a 100 GB volume of a thin volume type through the profile
   ``volume``: the pool with the most virtual free capacity takes it
   (CapacityWeigher), and the claim is ``DISK_GB=100`` on that pool;
3. places a 5000 GB thin volume, larger than any pool: thin
   provisioning lets the 1000 GB pool take it (virtual free capacity
   19900 GB), not the 500 GB one (2500 GB);
4. asks for a 3000 GB thick volume, which no ``lvm-thick`` pool holds:
   ``NoValidHost``, as a RemoteError;
5. releases both volumes (deleting a volume frees its space).

Usage::

    python3 volume_client.py \\
        --transport-url rabbit://guest:guest@127.0.0.1:5672/ \\
        --topic gantt-scheduler

The scheduler needs the ``volume`` profile of ``services.conf``. It exits
0 when every step behaved as documented.

NOTE: the pools it reports are real providers in the scheduler's database
(named ``<prefix>-thin-1``, ``<prefix>-thin-2``, ``<prefix>-thick``).
"""

import argparse
import sys

import external_client as wire
import kinds_client as kinds
import oslo_messaging as messaging

THIN = {"thin_provisioning_support": "<is> True",
        "volume_backend_name": "lvm-thin"}
THICK = {"volume_backend_name": "lvm-thick"}


def pool(name, total_gb, *, ratio, backend, zone):
    """One pool: its capacity a DISK_GB inventory (allocation_ratio: the
    over-subscription ratio of a thin pool, 1.0 for a thick one), Cinder's
    stats as capabilities."""
    thin = ratio > 1.0
    return kinds.provider_report(
        name, "volume",
        {"DISK_GB": wire.inventory("DISK_GB", total_gb,
                                   allocation_ratio=ratio)},
        service="cinder-volume@" + backend, zone=zone, capabilities={
            "volume_backend_name": backend,
            "thin_provisioning_support": thin,
            "thick_provisioning_support": not thin,
            "max_over_subscription_ratio": ratio,
            "reserved_percentage": 0,
            "total_capacity_gb": float(total_gb),
            "storage_protocol": "iSCSI", "vendor_name": "Open Source"})


def volume(size_gb, volume_type, zone):
    return kinds.request({"DISK_GB": size_gb}, profile="volume",
                         zone=zone, capabilities=volume_type)


def scenario(client, ctxt, args, out):
    names = {"thin-1": "%s-thin-1" % args.prefix,
             "thin-2": "%s-thin-2" % args.prefix,
             "thick": "%s-thick" % args.prefix}
    out.step("update_provider: three pools of kind volume")
    states = kinds.report(client, ctxt, [
        pool(names["thin-1"], 1000, ratio=20.0, backend="lvm-thin",
             zone=args.zone),
        pool(names["thin-2"], 500, ratio=5.0, backend="lvm-thin",
             zone=args.zone),
        pool(names["thick"], 2000, ratio=1.0, backend="lvm-thick",
             zone=args.zone)], out, args.timeout)
    for name, state in sorted(states.items()):
        out.say("scheduler knows %s: kind=%s backend=%s" % (
            name, state["kind"],
            state["capabilities"].get("volume_backend_name")))

    out.step("select_destinations: a 100 GB thin volume")
    [(host, first, allocations)] = kinds.place(
        client, ctxt, volume(100, THIN, args.zone))
    out.say("volume %s -> placed on %s, claimed %s" % (first, host,
                                                       allocations))
    if host != names["thin-1"]:
        out.fail("the pool with the most free space should take it")
    if allocations != {kinds.stable_uuid(host): {"DISK_GB": 100}}:
        out.fail("the claim should be DISK_GB=100 on the pool")

    out.step("select_destinations: a 5000 GB thin volume (over-subscribed)")
    [(host, big, _)] = kinds.place(client, ctxt,
                                   volume(5000, THIN, args.zone))
    out.say("volume %s -> placed on %s" % (big, host))
    if host != names["thin-1"]:
        out.fail("only the pool over-subscribed 20 times holds it")

    out.step("select_destinations: a 3000 GB thick volume")
    try:
        kinds.place(client, ctxt, volume(3000, THICK, args.zone))
    except messaging.RemoteError as exc:
        out.say("RemoteError exc_type=%s" % exc.exc_type)
        out.say("            value=%s" % exc.value.splitlines()[0])
        if exc.exc_type != "NoValidHost":
            out.fail("expected NoValidHost, got %s" % exc.exc_type)
    else:
        out.fail("a thick volume larger than the thick pool was placed")

    out.step("release: both volumes are deleted")
    kinds.release(client, ctxt, [first, big], out)
    left = kinds.host_states(client, ctxt, [names["thin-1"]])
    out.say("%s: DISK_GB used %d" % (
        names["thin-1"], kinds.used(left[names["thin-1"]], "DISK_GB")))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="gantt-scheduler")
    parser.add_argument("--prefix", default="example")
    parser.add_argument("--zone", default=None)
    parser.add_argument("--timeout", type=int, default=30)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = wire.Transcript()
    transport, client, ctxt = kinds.connect(wire.make_conf(), args)
    try:
        scenario(client, ctxt, args, out)
    except messaging.RemoteError as exc:
        out.fail("unexpected remote error %s: %s" % (exc.exc_type, exc.value))
    finally:
        transport.cleanup()
    return kinds.outcome(out)

if __name__ == "__main__":
    sys.exit(main())
