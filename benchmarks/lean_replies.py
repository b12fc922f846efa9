"""A ``select_destinations`` reply to and from primitives: ovo's path
next to the lean one (:mod:`gantt.objects.lean`).

The reply is what a worker sends for ``--instances`` instances with
``--alternates`` alternates each: Selections built as the scheduler
builds them (``gantt.scheduler.selections``), limits of three classes,
one allocation item each. "ovo" is ``GanttObjectSerializer`` (ovo's
serializer over GanttObject's own ``obj_to_primitive``), what the RPC
serializer ran before; "lean" is the RPC serializer now
(``gantt.rpc.serializer.Serializer``), each way. The JSON row is the
transport's own encoding of the same primitive, for scale. Each case
runs ``--rounds`` times, interleaved with the others so that they share
the machine's load; the 1-minute load average is printed next to every
figure (the machine may be shared). Both sides must give the same
primitive (as JSON) and the same objects (``same``).

    python benchmarks/lean_replies.py [--instances 100] [--alternates 2]
                                      [--rounds 5] [--seconds 2]
"""

import argparse
import json
import os
import sys
import uuid

import harness

from gantt.objects import base
from gantt.objects import selection as selection_obj
from gantt.rpc import serializer as rpc_serializer
from gantt.scheduler import selections

OVO = base.GanttObjectSerializer()
LEAN = rpc_serializer.Serializer()
CELL = "c0c0c0c0-0000-4000-8000-000000000001"


def _uuid(n):
    return str(uuid.UUID(int=n + 1, version=4))


def reply(instances, alternates):
    """``[[claimed, alternate, ...], ...]`` as a worker builds it."""
    return [[_selection(i, k) for k in range(alternates + 1)]
            for i in range(instances)]


def _selection(instance, k):
    host = _uuid(1000 * instance + k)
    resources = {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 40}
    return selection_obj.Selection.trusted(
        service_host="compute-%d" % k, nodename="node-%d" % k,
        compute_node_uuid=host, cell_uuid=CELL, weight=1.0 / (k + 1),
        limits={"VCPU": 512, "MEMORY_MB": 524288, "DISK_GB": 7680},
        allocation_request=selections.allocation_request(host, resources),
        consumer_uuid=_uuid(10**7 + instance), claimed=k == 0)


def cases(objects):
    """``{case: callable}``, each one way of one path."""
    primitive = OVO.serialize_entity(None, objects)
    return {
        ("serialise", "ovo"): lambda: OVO.serialize_entity(None, objects),
        ("serialise", "lean"): lambda: LEAN.serialize_entity(None, objects),
        ("deserialise", "ovo"): lambda: OVO.deserialize_entity(
            None, primitive),
        ("deserialise", "lean"): lambda: LEAN.deserialize_entity(
            None, primitive),
        ("json dumps+loads", "-"): lambda: json.loads(json.dumps(primitive)),
    }


def same(objects):
    """Whether both paths give the same primitive and the same objects."""
    slow = OVO.serialize_entity(None, objects)
    if json.dumps(LEAN.serialize_entity(None, objects)) != json.dumps(slow):
        return False
    back_slow = OVO.deserialize_entity(None, slow)
    back_fast = LEAN.deserialize_entity(None, slow)
    return all(json.dumps(a.obj_to_primitive()) == json.dumps(
        b.obj_to_primitive()) and a.obj_what_changed() == b.obj_what_changed()
        for x, y in zip(back_slow, back_fast, strict=True)
        for a, b in zip(x, y, strict=True))


def measure(timed, rounds, seconds):
    """``{case: {"lat": [...], "loads": [...]}}``, rounds interleaved."""
    out = {case: {"lat": [], "loads": []} for case in timed}
    for r in range(rounds):
        for case, fn in timed.items():
            harness.repeat(fn, seconds, min_reps=5, into=out[case]["lat"])
            out[case]["loads"].append(os.getloadavg()[0])
        harness.log("round %d/%d done, load %.1f", r + 1, rounds,
                    os.getloadavg()[0])
    return out


def show(results, args, identical):
    print("\nA select_destinations reply of %d instances x %d Selections "
          "(%d objects), ms per reply: p50 and min over %d rounds, with "
          "the 1-min load average (min-max) while it ran" % (
              args.instances, args.alternates + 1,
              3 * args.instances * (args.alternates + 1), args.rounds))
    print("%-18s %-5s %6s %8s %8s %11s" % (
        "way", "path", "calls", "p50", "min", "load"))
    for (way, path), r in results.items():
        s = harness.summary_ms(r["lat"])
        print("%-18s %-5s %6d %8.2f %8.2f %5.1f-%-5.1f" % (
            way, path, s["n"], s["p50"], s["min"], min(r["loads"]),
            max(r["loads"])))
    for way in ("serialise", "deserialise"):
        print("%s: ovo / lean = %.1fx (p50), %.1fx (min)" % (
            (way,) + _ratios(results, way)))
    print("same primitive and objects on both paths: %s" % (
        "yes" if identical else "NO"))


def _ratios(results, way):
    ovo = harness.summary_ms(results[(way, "ovo")]["lat"])
    fast = harness.summary_ms(results[(way, "lean")]["lat"])
    return ovo["p50"] / fast["p50"], ovo["min"] / fast["min"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--alternates", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    objects = reply(args.instances, args.alternates)
    identical = same(objects)
    results = measure(cases(objects), args.rounds, args.seconds)
    show(results, args, identical)
    print("machine: %s" % harness.machine())
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
