"""Filtered ``GET /resource_providers`` at 10k providers, per filter kind.

The flat cloud of :mod:`fleet` (one compute-node provider per host, its
inventories, usage as real instances, traits, zone and rack aggregates)
bulk-inserted into Gantt's schema (:class:`gantt_env.Populator`), and
Gantt's WSGI application called in-process as :mod:`placement_api` does
(``noauth2``, microversion 1.39, the whole middleware stack and JSON), for
each filter kind: ``resources``, ``required`` (a trait, ``!trait``,
``in:A,B``), ``member_of`` (an aggregate, ``in:A,B``, ``!A``) and all
of them together. "SQL" is the listing as it is (one statement,
:mod:`gantt.db.provider_filter`); "row by row" is the filter it replaced
(:func:`row_by_row`, kept here: the providers the SQL narrows to by
name, uuid and tree, then per provider one read of its traits,
aggregates, inventories and usage), timed once per kind through the
same request on the same database. Both must list the same providers
(``same``). The machine's load average is printed next to every figure:
the machine is shared.

    python benchmarks/rp_filter.py [--hosts 10000]
                                   [--dbs sqlite,mysql,postgresql]
                                   [--before-dbs sqlite] [--seconds 5]

No Placement column: Placement's own listing runs one statement per
filter too; a Placement side needs the reference venv
(:mod:`ref_placement`), which this benchmark does not build.
"""

import argparse
import os
import sys
import time
from unittest import mock

import dbs
import fleet
import harness
import placement_api

from gantt.db import providers

_FIND = providers.find

TRAIT = "HW_CPU_X86_AVX2"
MICROVERSION_KINDS = (
    ("resources", "resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40"),
    ("required", "required=%s" % TRAIT),
    ("required !", "required=!%s" % fleet.DISABLED_TRAIT),
    ("required in:", "required=in:%s,HW_CPU_X86_SHA" % TRAIT),
    ("member_of", "member_of=%s" % fleet.aggregate_uuid("az-0")),
    ("member_of in:", "member_of=in:%s,%s" % (
        fleet.aggregate_uuid("az-0"), fleet.aggregate_uuid("az-1"))),
    ("member_of !", "member_of=!%s" % fleet.aggregate_uuid("az-0")),
    ("all", "resources=VCPU:2,MEMORY_MB:4096&required=%s,!%s"
            "&member_of=in:%s,%s" % (
                TRAIT, fleet.DISABLED_TRAIT, fleet.aggregate_uuid("az-0"),
                fleet.aggregate_uuid("az-1"))),
)


def row_by_row(conn, filters):
    """The listing before the SQL filter (``providers.find`` as it was):
    what SQL narrowed, then reads per provider."""
    narrowed = providers.Filters(name=filters.name, uuid=filters.uuid,
                                 in_tree=filters.in_tree)
    return [r for r in _FIND(conn, narrowed) if _passes(conn, r, filters)]


def _passes(conn, row, filters):
    if filters.required or filters.forbidden_traits:
        if _fails(providers.traits_of(conn, row.id), filters.required,
                  filters.forbidden_traits):
            return False
    if filters.member_of or filters.forbidden_aggregates:
        if _fails(providers.aggregates_of(conn, row.id), filters.member_of,
                  filters.forbidden_aggregates):
            return False
    if filters.resources:
        invs = providers.inventories_of(conn, row.id)
        used = providers.usages_of(conn, row.id)
        return all(_fits(invs.get(rc), used.get(rc, 0), amount)
                   for rc, amount in filters.resources.items())
    return True


def _fails(have, any_ofs, none_of):
    return any(not (s & have) for s in any_ofs) or bool(have & none_of)


def _fits(inv, used, amount):
    if inv is None:
        return False
    capacity = (inv.total - inv.reserved) * inv.allocation_ratio
    return (inv.min_unit <= amount <= inv.max_unit and
            amount % inv.step_size == 0 and used + amount <= capacity)


def _load():
    return os.getloadavg()[0]


def _get(client, query):
    resp = client.call("GET", "/resource_providers?" + query)
    if resp.status_int != 200:
        raise SystemExit("GET %s: %s %s" % (query, resp.status_int,
                                            resp.text[:300]))
    return [p["uuid"] for p in resp.json["resource_providers"]]


def _time_kind(client, query, args, before):
    listed = _get(client, query)
    lat = harness.repeat(lambda: _get(client, query), args.seconds,
                         min_reps=3, max_reps=200)
    row = {"listed": len(listed), "sql": harness.summary_ms(lat),
           "load": _load()}
    if before:
        row.update(_time_before(client, query, listed))
    return row


def _time_before(client, query, listed):
    with mock.patch.object(providers, "find", row_by_row):
        started = time.perf_counter()
        old = _get(client, query)
        took = time.perf_counter() - started
    return {"row_by_row_ms": took * 1e3, "before_load": _load(),
            "same": old == listed}


def run_db(args, db_name, data):
    import gantt_env

    harness.require_services(db_name)
    out = []
    with dbs.ThrowawayDB(db_name) as tdb:
        db = gantt_env.gantt_database(tdb.url)
        gantt_env.Populator(db, data, per_instance=False).grow_to(
            args.hosts, progress=lambda k: harness.log(
                "%s: %d hosts inserted", db_name, k))
        client = placement_api.make_client(tdb.url, db)
        for kind, query in MICROVERSION_KINDS:
            row = _time_kind(client, query, args,
                             db_name in args.before_dbs.split(","))
            row.update(db=db_name, kind=kind)
            harness.log("%s %s: %s", db_name, kind, row)
            out.append(row)
        db.dispose()
    return out


def show(rows, hosts):
    print("\nGET /resource_providers?<filter> at %d providers, ms "
          "(p50, max) with the 1-min load average; row by row: the "
          "filter replaced, one call" % hosts)
    print("%-10s %-14s %6s %8s %8s %5s %10s %5s %7s %4s" % (
        "db", "filter", "listed", "SQL p50", "max", "load", "row by row",
        "load", "ratio", "same"))
    for r in rows:
        before = r.get("row_by_row_ms")
        print("%-10s %-14s %6d %8.1f %8.1f %5.1f %10s %5s %7s %4s" % (
            harness.DB_LABELS[r["db"]], r["kind"], r["listed"],
            r["sql"]["p50"], r["sql"]["max"], r["load"],
            "-" if before is None else "%.0f" % before,
            "-" if before is None else "%.1f" % r["before_load"],
            "-" if before is None else "%.0fx" % (before / r["sql"]["p50"]),
            "-" if before is None else ("yes" if r["same"] else "NO")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--dbs", default="sqlite,mysql,postgresql")
    parser.add_argument("--before-dbs", default="sqlite")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    data = fleet.build(args.hosts)
    rows = [r for db_name in args.dbs.split(",") if db_name
            for r in run_db(args, db_name, data)]
    show(rows, args.hosts)
    print("machine: %s" % harness.machine())
    return 0 if all(r.get("same", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
