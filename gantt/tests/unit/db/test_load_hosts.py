"""The batched start-up load reads what plain row-by-row queries read.

``load_host_columns`` reads each table as long texts joined by the
database; every value must come back as the driver gives it for a plain
query, on every backend, whatever the batch sizes and even when a name
holds one of the separators.
"""

import collections
import datetime
import uuid

import pytest
import sqlalchemy as sa

from gantt.db import allocations
from gantt.db import bulk_read
from gantt.db import host_load
from gantt.db import models
from gantt.db import reports
from gantt.db import tree_writer
from gantt.objects import compute_node as cn_obj
from gantt.objects import provider as provider_obj
from gantt.tests import factories
from gantt.tests import stored_hosts

AGG = str(uuid.UUID(int=0xA1))
CELL = str(uuid.UUID(int=0xC1))


def _inventory(rc, total, ratio=1.0, **kwargs):
    return cn_obj.Inventory(resource_class=rc, total=total,
                            allocation_ratio=ratio, **kwargs)


def _nodes():
    odd = [_inventory("CUSTOM_A", 2 ** 40, 1 / 3, reserved=7,
                      min_unit=2, max_unit=2 ** 39, step_size=2),
           _inventory("CUSTOM_B", 10, 1e-5), _inventory("CUSTOM_C", 3, 16.0)]
    nodes = [
        factories.compute_node_obj(
            "plain", zone="az 1", cell_uuid=CELL, cpu_ratio=0.7,
            ram_ratio=1.5, traits=["HW_CPU_X86_AVX2", "CUSTOM_T"],
            aggregates=[AGG], instance_uuids=factories.uuids(2),
            capabilities={"hypervisor_type": "QEMU", "é": "ü"},
            updated_at=datetime.datetime(2026, 1, 2, 3, 4, 5, 678901,
                                         tzinfo=datetime.timezone.utc),
            extra_inventories=odd, location="room=r1/row=b/rack=b07"),
        # names holding the separators the batched queries join with
        factories.compute_node_obj("sep\x1fin\x1ename", zone="z\x1dz\x1c",
                                   instance_uuids=[]),
        factories.compute_node_obj("hôte-ünïcode", disabled=True),
        factories.compute_node_obj("bare", traits=[], aggregates=[]),
    ]
    tree = factories.compute_node_obj("tree")
    tree.child_providers = [provider_obj.ResourceProvider(
        uuid=factories.host_uuid("tree-pf"), name="tree-pf",
        parent_provider_uuid=tree.uuid,
        inventories=[_inventory("SRIOV_NET_VF", 8)],
        traits=["CUSTOM_PHYSNET"], aggregates=[AGG])]
    return nodes + [tree]


def _store(db):
    received = datetime.datetime(2026, 5, 6, 7, 8, 9, 123456)
    for node in _nodes():
        assert reports.save_report(db, node, received_at=received).applied
    with db.begin() as conn:
        allocations.claim(conn, str(uuid.uuid4()), {
            factories.host_uuid("plain"): {"VCPU": 2, "CUSTOM_A": 4},
            factories.host_uuid("tree-pf"): {"SRIOV_NET_VF": 3}})
        allocations.claim(conn, str(uuid.uuid4()), {
            factories.host_uuid("plain"): {"VCPU": 1}})


def _plain(db):
    """The reference: every table read row by row (the old loader)."""
    rp, reports = models.RP, models.REPORTS
    contents = collections.defaultdict(lambda: {
        "inventories": {}, "traits": set(), "aggregates": set(),
        "usage": collections.Counter()})
    with db.begin() as conn:
        # boot ids are read on their own (gantt.db.hosts.boot_ids)
        columns = [c for c in reports.c if c.name != "boot_id"]
        hosts = {row.id: dict(row._mapping) for row in conn.execute(
            sa.select(rp.c.id, rp.c.uuid, rp.c.generation, *columns)
            .join(reports, reports.c.resource_provider_id == rp.c.id))}
        for row in conn.execute(sa.select(models.INV)):
            contents[row.resource_provider_id]["inventories"][
                row.resource_class] = tree_writer.inventory_tuple(row)
        for table, name in ((models.TRAITS, "traits"),
                            (models.AGGS, "aggregates")):
            for rp_id, value in conn.execute(sa.select(table)):
                contents[rp_id][name].add(value)
        for row in conn.execute(sa.select(models.ALLOC)):
            contents[row.resource_provider_id]["usage"][
                row.resource_class] += row.used
        uuids = dict(conn.execute(sa.select(rp.c.id, rp.c.uuid)).all())
    out = {}
    for rp_id, report in hosts.items():
        out[report["uuid"]] = dict(report=report, **{
            k: (dict(v) if k == "usage" else v)
            for k, v in contents[rp_id].items()})
    children = {uuids[rp_id]: dict(c, usage=dict(c["usage"]))
                for rp_id, c in contents.items() if rp_id not in hosts}
    return out, children


def _loaded(db):
    out, children = {}, {}
    for host in stored_hosts.load_hosts(db):
        out[host.uuid] = dict(
            report=host.report, inventories=host.inventories,
            traits=host.traits, aggregates=host.aggregates, usage=host.usage)
        for child in host.children:
            children[child.uuid] = dict(
                inventories=child.inventories, traits=child.traits,
                aggregates=child.aggregates, usage=child.usage)
    return out, children


@pytest.mark.parametrize("batches, limit", [
    (None, None),
    ((2, 3), None),         # many ranges, some of them empty
    (None, 300),            # MySQL cuts the texts: plain rows instead
])
def test_the_batched_load_reads_what_plain_queries_read(any_db, batches,
                                                        limit, monkeypatch):
    if batches:
        monkeypatch.setattr(bulk_read, "_BATCH", batches[0])
        monkeypatch.setattr(bulk_read, "_ROW_BATCH", batches[1])
    monkeypatch.setattr(bulk_read, "_CONCAT_LIMIT", limit)
    _store(any_db)
    hosts, children = _loaded(any_db)
    want_hosts, want_children = _plain(any_db)
    assert hosts == want_hosts
    assert children == want_children
    plain = hosts[factories.host_uuid("plain")]
    assert plain["inventories"]["CUSTOM_A"][0] == 2 ** 40
    assert plain["usage"] == {"VCPU": 3, "CUSTOM_A": 4}
    names = {h["report"]["host"] for h in hosts.values()}
    assert "sep\x1fin\x1ename" in names and "hôte-ünïcode" in names


def test_an_empty_database_loads_no_host(any_db):
    stored = host_load.load_host_columns(any_db)
    assert len(stored) == 0 and stored_hosts.load_hosts(any_db) == []


def test_the_load_leaves_the_connection_as_it_found_it(any_db):
    _store(any_db)
    host_load.load_host_columns(any_db)
    if any_db.backend == "mysql":
        with any_db.engine.connect() as conn:
            # the pool's connections keep the server's default
            assert conn.exec_driver_sql(
                "SELECT @@SESSION.group_concat_max_len").scalar() == (
                conn.exec_driver_sql(
                    "SELECT @@GLOBAL.group_concat_max_len").scalar())
