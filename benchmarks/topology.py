#!/usr/bin/env python3
"""Failure domains: what policies per level cost, and what soft affinity
by distance achieves.

The fleet: ``--hosts`` hosts (10k) in ``--racks`` racks (50 x 200), five
racks to a row. Three measures:

1. **A rack-level group, member after member** (Gantt side): a
   200-member group under ``max-per 4 at rack`` (200 members need all 50
   racks; strict anti-affinity at rack takes 50, and the 51st member's
   NoValidHost is timed too). Each member is one decision as
   ``select_destinations`` makes it before its claim (view, candidates,
   default filters and weighers, pick) and then counts as placed; the
   table gives the time per member (p50, p90) and for the whole group,
   and the topology filter's own share.
2. **Nova's host-level anti-affinity** (reference venv): Nova's own
   ``ServerGroupAntiAffinityFilter`` through its ``HostFilterHandler``
   over ``HostState`` objects of the same host names, the group growing
   to 200 members: the same per-member and whole-group numbers. (Nova
   has no rack level; this is the cost of the only policy it has.)
3. **Soft affinity's quality** (Gantt side): 200 members of 4 VCPUs each
   (4 per host) on a fleet where 95% of the hosts are full (fixed seed).
   The fraction of members in the first member's rack and row, under
   ``soft-affinity at row`` and under Nova's host-level soft-affinity
   alone, against the best possible (the rack's and the row's free
   room).

    python benchmarks/topology.py [--hosts 10000] [--racks 50]
"""

import argparse
import random
import sys
import time

import harness

MEMBERS = 200
RACKS_PER_ROW = 5


def _location(i, hosts, racks):
    rack = i * racks // hosts
    return "row=row%02d/rack=rack%02d" % (rack // RACKS_PER_ROW, rack)


# -- the Gantt side --------------------------------------------------------


def _gantt_fleet(args, full=()):
    import gantt_env

    from gantt import scheduler as scheduler_mod
    from gantt.tests import factories
    from gantt.tests.unit.scheduler import helpers

    conf = gantt_env.make_conf()
    placer = scheduler_mod.build(conf, None, clock=lambda: helpers.NOW,
                                 rng=random.Random(1)).placer
    for i in range(args.hosts):
        placer.cache.apply_report(helpers.host_report(
            factories.compute_node_obj(
                "h%05d" % i, vcpus=16, memory_mb=65536, disk_gb=1000,
                location=_location(i, args.hosts, args.racks))))
    for i in full:
        placer.cache.apply_usage(factories.host_uuid("h%05d" % i), 1, {
            "VCPU": 16, "MEMORY_MB": 65536, "DISK_GB": 1000})
    return placer


def _request(placer, *policies):
    from gantt.objects import request_spec
    from gantt.scheduler.pipeline import translate
    from gantt.tests import factories
    from gantt.tests.unit.scheduler import helpers

    spec = factories.request(
        factories.flavor(vcpus=4, memory_mb=4096, root_gb=10),
        instance_group=request_spec.InstanceGroup(
            uuid=factories.uuids(1)[0], policy="soft-affinity",
            level_policies=[
                request_spec.GroupLevelPolicy(level=level, rule=rule,
                                              limit=limit)
                for level, rule, limit in policies]))
    return translate.from_spec(spec, factories.uuids(1),
                               helpers.FakeLookup(), None, placer.topology)


class _Group:
    """Members placed one decision at a time (no claim: the room they
    take is written into the cache as a peer's usage would be)."""

    def __init__(self, placer, request):
        self.placer, self.request = placer, request
        self.used = {}
        self.filter_s = []

    def decide(self):
        from gantt import exception
        from gantt.scheduler.pipeline import candidates
        from gantt.scheduler.pipeline import cycle as cycle_mod

        view = self.placer.view()
        cycle = cycle_mod.CycleState(
            self.request, view,
            candidates=candidates.for_request(view, self.request))
        self._time_filter(view)
        ranking = self.placer.pipeline.rank(cycle)
        if ranking.weighing is None or not len(ranking.weighing.rows):
            raise exception.NoValidHost(reason=ranking.outcome.summary())
        row, _weight = self.placer.picker.pick(ranking.weighing)
        self._take(view, row)
        return str(view.hosts[row])

    def _time_filter(self, view):
        from gantt.scheduler.pipeline.filters import topology

        flt = topology.ServerGroupTopologyFilter(self.placer.conf)
        if flt.applies(self.request):
            started = time.perf_counter()
            flt.passes_columns(view, self.request)
            view.new_pass()
            self.filter_s.append(time.perf_counter() - started)

    def _take(self, view, row):
        host, uuid = str(view.hosts[row]), str(view.uuids[row])
        self.request.instance_group.add_member(host)
        used = self.used[uuid] = self.used.get(uuid, 0) + 1
        self.placer.cache.apply_usage(uuid, 100 + used, {
            "VCPU": 4 * used, "MEMORY_MB": 4096 * used,
            "DISK_GB": 10 * used})


def _timed_group(placer, request, members):
    from gantt import exception

    group, lat, hosts = _Group(placer, request), [], []
    started = time.perf_counter()
    for _ in range(members):
        s = time.perf_counter()
        try:
            hosts.append(group.decide())
        except exception.NoValidHost as exc:
            lat.append(time.perf_counter() - s)
            return lat, time.perf_counter() - started, hosts, str(exc), group
        lat.append(time.perf_counter() - s)
    return lat, time.perf_counter() - started, hosts, None, group


def _cost_rows(args):
    rows = []
    for label, policy, members in (
            ("max-per 4 at rack", ("rack", "max-per", 4), MEMBERS),
            ("anti-affinity at rack", ("rack", "anti-affinity", 1),
             args.racks + 1)):
        placer = _gantt_fleet(args)
        lat, total, hosts, refused, group = _timed_group(
            placer, _request(placer, policy), members)
        racks = {_location(int(h[1:]), args.hosts, args.racks)
                 for h in hosts}
        rows.append({"policy": label, "members": len(hosts),
                     "racks": len(racks), "per_member":
                     harness.summary_ms(lat), "group_s": total,
                     "filter": harness.summary_ms(group.filter_s),
                     "refused": refused})
        harness.log("gantt %s: %d members on %d racks, %.1f ms p50",
                    label, len(hosts), len(racks),
                    rows[-1]["per_member"]["p50"])
    return rows


def _quality_rows(args):
    rng = random.Random(args.seed)
    full = [i for i in range(args.hosts) if rng.random() < 0.95]
    rows = []
    for label, policies in (("soft-affinity at row",
                             [("row", "soft-affinity", 1)]),
                            ("soft-affinity at host only (Nova's)", [])):
        placer = _gantt_fleet(args, full)
        _lat, _total, hosts, refused, _group = _timed_group(
            placer, _request(placer, *policies), MEMBERS)
        rows.append(_quality(args, label, hosts, set(full), refused))
    return rows


def _quality(args, label, hosts, full, refused):
    where = [_location(int(h[1:]), args.hosts, args.racks).split("/")
             for h in hosts]
    row0, rack0 = where[0]
    free = [i for i in range(args.hosts) if i not in full]
    room = {"rack": 4 * sum(1 for i in free if _location(
        i, args.hosts, args.racks).endswith(rack0)),
        "row": 4 * sum(1 for i in free if _location(
            i, args.hosts, args.racks).startswith(row0))}
    return {"policy": label, "members": len(hosts), "refused": refused,
            "in_rack": sum(1 for w in where if w[1] == rack0) / len(hosts),
            "in_row": sum(1 for w in where if w[0] == row0) / len(hosts),
            "best_rack": min(room["rack"], len(hosts)) / len(hosts),
            "best_row": min(room["row"], len(hosts)) / len(hosts)}


def gantt_side(args):
    import gantt_env
    return {"side": "gantt", "cost": _cost_rows(args),
            "quality": _quality_rows(args),
            "versions": gantt_env.gantt_versions()}


# -- Nova's side -------------------------------------------------------------


def reference_side(args):
    from nova import objects
    from nova.scheduler import filters
    from nova.scheduler import host_manager
    from nova.scheduler.filters import affinity_filter
    import ref_nova  # noqa: F401  (configures Nova as decision.py does)

    states = [host_manager.HostState("h%05d" % i, "h%05d" % i, "cell")
              for i in range(args.hosts)]
    group = objects.InstanceGroup(policy="anti-affinity", rules={},
                                  hosts=[], members=[])
    spec = objects.RequestSpec(instance_group=group, num_instances=1,
                               instance_uuid="00000000-0000-4000-8000-"
                                             "000000000001")
    handler = filters.HostFilterHandler()
    flt = [affinity_filter.ServerGroupAntiAffinityFilter()]
    lat = []
    started = time.perf_counter()
    for k in range(MEMBERS):
        s = time.perf_counter()
        passed = list(handler.get_filtered_objects(flt, states, spec, 0))
        lat.append(time.perf_counter() - s)
        # Nova counts a host's members among its instances (the uuids
        # HostManager keeps per host) and the group's member list
        member = "00000000-0000-4000-8000-%012d" % (k + 2)
        passed[0].instances[member] = None
        group.hosts = group.hosts + [passed[0].host]
        group.members = group.members + [member]
    total = time.perf_counter() - started
    harness.log("nova host-level anti-affinity: %.1f ms p50",
                harness.summary_ms(lat)["p50"])
    return {"side": "reference", "per_member": harness.summary_ms(lat),
            "group_s": total, "passed_last": len(passed),
            "versions": {"nova": ref_nova.version()}}


# -- the table ---------------------------------------------------------------


def show(results):
    g, ref = results["gantt"], results.get("reference")
    print("\nA 200-member group on the fleet, one decision per member "
          "(ms p50 (p90); whole group in s)")
    print("%-40s %8s %6s %16s %9s %16s" % (
        "", "members", "racks", "per member", "group", "level filter"))
    for r in g["cost"]:
        pm, fl = r["per_member"], r["filter"]
        print("%-40s %8d %6d %16s %9.2f %16s" % (
            "Gantt, " + r["policy"], r["members"], r["racks"],
            "%.2f (%.2f)" % (pm["p50"], pm["p90"]), r["group_s"],
            "%.3f (%.3f)" % (fl["p50"], fl["p90"])))
        if r["refused"]:
            print("%-40s %s" % ("", r["refused"][:150]))
    if ref:
        pm = ref["per_member"]
        print("%-40s %8d %6s %16s %9.2f %16s" % (
            "Nova ServerGroupAntiAffinityFilter", MEMBERS, "-",
            "%.2f (%.2f)" % (pm["p50"], pm["p90"]), ref["group_s"],
            "(filter only)"))
        gantt = g["cost"][0]["per_member"]["p50"]
        print("Nova's host-level filter alone / Gantt's whole decision at "
              "rack level, per member: %.2fx" % (pm["p50"] / gantt))
    print("\nSoft affinity's quality: fraction of the members in the first "
          "member's rack / row (best possible)")
    for r in g["quality"]:
        print("%-40s rack %.2f (%.2f)  row %.2f (%.2f)  members %d" % (
            r["policy"], r["in_rack"], r["best_rack"], r["in_row"],
            r["best_row"], r["members"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--racks", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    return harness.side_main(parser, {"gantt": gantt_side,
                                      "reference": reference_side}, show)


if __name__ == "__main__":
    sys.exit(main())
