"""``GET /allocation_candidates`` answers from an index kept between
requests, and every kind of write, through the API or straight into the
database as a worker's claim, shows in the next answer; a write that
only moved generations reads again only the providers it touched."""

import uuid

import pytest
import sqlalchemy as sa

from gantt.api import app as app_mod
from gantt.db import allocations
from gantt.db.models import RP
from gantt.scheduler.state import stored_index
from gantt.tests.unit.api.conftest import Client
from gantt.tests.unit.api.test_allocations import _body
from gantt.tests.unit.api.test_allocations import _provider
from gantt.tests.unit.api.test_providers import _create

V = "latest"
QUERY = "/allocation_candidates?resources=VCPU:1"


@pytest.fixture
def loads(monkeypatch):
    """How many times the index was read from the database."""
    count = []
    real = stored_index.load

    def counting(conn):
        count.append(1)
        return real(conn)
    monkeypatch.setattr(stored_index, "load", counting)
    return count


def _found(client, query=QUERY, version=V):
    resp = client.get(query, version=version)
    assert resp.status_int == 200, resp.text
    return resp.json


def _used(client, rp):
    return _found(client)["provider_summaries"][rp]["resources"][
        "VCPU"]["used"]


def _generation(client, rp):
    return client.get("/resource_providers/" + rp, version=V).json[
        "generation"]


def test_a_second_get_answers_from_the_kept_index(client, loads):
    rp = _provider(client)
    first = _found(client)
    assert _found(client) == first
    assert len(loads) == 1
    assert _used(client, rp) == 0 and len(loads) == 1


def test_inventory_writes_show(client, loads):
    rp = _provider(client, vcpu=4)
    _found(client)
    client.put("/resource_providers/%s/inventories" % rp, {
        "resource_provider_generation": _generation(client, rp),
        "inventories": {"VCPU": {"total": 8}}}, version=V)
    assert _found(client)["provider_summaries"][rp]["resources"][
        "VCPU"]["capacity"] == 8
    client.delete("/resource_providers/%s/inventories/VCPU" % rp,
                  version="1.1")
    assert _found(client)["allocation_requests"] == []


def test_allocation_put_post_and_delete_show(client, loads):
    rp, consumer = _provider(client), str(uuid.uuid4())
    _found(client)
    client.put("/allocations/" + consumer, _body(rp, 2), version=V)
    assert _used(client, rp) == 2
    client.post("/allocations", {consumer: dict(
        _body(rp, 3, generation=1), consumer_generation=1)}, version=V)
    assert _used(client, rp) == 3
    client.delete("/allocations/" + consumer, version=V)
    assert _used(client, rp) == 0


def test_a_workers_claim_and_release_in_the_database_show(
        client, sqlite_db, loads):
    rp, consumer = _provider(client), str(uuid.uuid4())
    _found(client)
    with sqlite_db.begin() as conn:
        allocations.claim(conn, consumer, {rp: {"VCPU": 3}},
                          project_id="p1", user_id="u1")
    assert _used(client, rp) == 3
    with sqlite_db.begin() as conn:
        allocations.release(conn, consumer)
    assert _used(client, rp) == 0


def test_trait_writes_show(client, loads):
    rp = _provider(client)
    query = QUERY + "&required=HW_CPU_X86_AVX2"
    assert _found(client, query)["allocation_requests"] == []
    client.put("/resource_providers/%s/traits" % rp, {
        "resource_provider_generation": _generation(client, rp),
        "traits": ["HW_CPU_X86_AVX2"]}, version=V)
    assert len(_found(client, query)["allocation_requests"]) == 1


@pytest.mark.parametrize("version", ["1.1", V])
def test_aggregate_writes_show_with_and_without_a_generation(
        client, loads, version):
    rp, agg = _provider(client), str(uuid.uuid4())
    query = QUERY + "&member_of=" + agg
    assert _found(client, query)["allocation_requests"] == []
    body = [agg] if version == "1.1" else {
        "aggregates": [agg],
        "resource_provider_generation": _generation(client, rp)}
    client.put("/resource_providers/%s/aggregates" % rp, body,
               version=version)
    assert len(_found(client, query)["allocation_requests"]) == 1


def test_another_apis_pre_1_19_aggregate_write_shows(
        client, api_conf, sqlite_db, loads):
    rp, agg = _provider(client), str(uuid.uuid4())
    query = QUERY + "&member_of=" + agg
    assert _found(client, query)["allocation_requests"] == []
    other = Client(app_mod.make_app(api_conf, db=sqlite_db))
    other.put("/resource_providers/%s/aggregates" % rp, [agg],
              version="1.1")
    assert len(_found(client, query)["allocation_requests"]) == 1


def test_provider_create_reparent_and_delete_show(client, loads):
    root = _create(client, "root")["uuid"]
    rp = _provider(client, "cn")
    assert list(_found(client)["provider_summaries"]) == [rp]
    client.put("/resource_providers/" + rp, {
        "name": "cn", "parent_provider_uuid": root}, version=V)
    assert set(_found(client)["provider_summaries"]) == {rp, root}
    other = _provider(client, "other")
    assert other in _found(client)["provider_summaries"]
    client.delete("/resource_providers/" + other, version=V)
    assert other not in _found(client)["provider_summaries"]


def test_a_custom_class_made_after_a_get_is_known(client, loads):
    resp = client.get("/allocation_candidates?resources=CUSTOM_GPU:1",
                      version=V)
    assert resp.status_int == 400
    client.put("/resource_classes/CUSTOM_GPU", None, version=V)
    assert _found(client, "/allocation_candidates?resources=CUSTOM_GPU:1"
                  )["allocation_requests"] == []


@pytest.fixture
def reloads(monkeypatch):
    """The providers read again, one list per incremental reload."""
    lists = []
    real = stored_index.reload

    def counting(conn, loaded, ids):
        lists.append(sorted(ids))
        return real(conn, loaded, ids)
    monkeypatch.setattr(stored_index, "reload", counting)
    return lists


def test_a_claim_reads_again_only_the_providers_it_changed(
        client, sqlite_db, loads, reloads):
    rps = [_provider(client, "cn%d" % i) for i in range(3)]
    _found(client)
    with sqlite_db.begin() as conn:
        allocations.claim(conn, str(uuid.uuid4()), {rps[1]: {"VCPU": 3}},
                          project_id="p1", user_id="u1")
        rp_id = conn.execute(sa.select(RP.c.id).where(
            RP.c.uuid == rps[1])).scalar_one()
    assert _used(client, rps[1]) == 3
    assert (len(loads), reloads) == (1, [[rp_id]])
    assert [_used(client, rp) for rp in rps] == [0, 3, 0]


def test_a_trait_write_read_again_leaves_the_flat_path(client, loads,
                                                        reloads):
    """A provider turned into a sharing pool by a trait write (read
    again alone): its aggregate-mate now takes DISK_GB from it."""
    cn, pool = _provider(client, "cn"), _create(client, "pool")["uuid"]
    agg = str(uuid.uuid4())
    client.put("/resource_providers/%s/inventories" % pool, {
        "resource_provider_generation": 0,
        "inventories": {"DISK_GB": {"total": 100}}}, version=V)
    for rp in (cn, pool):
        client.put("/resource_providers/%s/aggregates" % rp, {
            "aggregates": [agg],
            "resource_provider_generation": _generation(client, rp)},
            version=V)
    query = "/allocation_candidates?resources=VCPU:1,DISK_GB:10"
    assert _found(client, query)["allocation_requests"] == []
    count = len(loads)
    client.put("/resource_providers/%s/traits" % pool, {
        "resource_provider_generation": _generation(client, pool),
        "traits": ["MISC_SHARES_VIA_AGGREGATE"]}, version=V)
    found = _found(client, query)["allocation_requests"]
    assert [c["allocations"] for c in found] == [{
        cn: {"resources": {"VCPU": 1}}, pool: {"resources": {"DISK_GB": 10}}}]
    assert sorted(found[0]["mappings"][""]) == sorted([cn, pool])
    assert len(loads) == count and len(reloads) == 1


def test_a_reparent_loads_everything_again(client, loads, reloads):
    root, rp = _create(client, "root")["uuid"], _provider(client, "cn")
    _found(client)
    client.put("/resource_providers/" + rp, {
        "name": "cn", "parent_provider_uuid": root}, version=V)
    assert set(_found(client)["provider_summaries"]) == {rp, root}
    assert (len(loads), reloads) == (2, [])


def test_claims_in_several_buckets_of_ids_are_all_read_again(
        client, sqlite_db, monkeypatch, loads, reloads):
    monkeypatch.setattr(stored_index, "BUCKET", 2)
    rps = [_provider(client, "cn%d" % i) for i in range(5)]
    _found(client)
    with sqlite_db.begin() as conn:
        for rp, vcpu in ((rps[0], 1), (rps[4], 2)):
            allocations.claim(conn, str(uuid.uuid4()), {rp: {"VCPU": vcpu}},
                              project_id="p1", user_id="u1")
        ids = conn.execute(sa.select(RP.c.id).where(
            RP.c.uuid.in_([rps[0], rps[4]]))).scalars().all()
    assert [_used(client, rp) for rp in rps] == [1, 0, 0, 0, 2]
    assert (len(loads), reloads) == (1, [sorted(ids)])
