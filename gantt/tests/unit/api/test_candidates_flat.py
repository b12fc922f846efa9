"""``GET /allocation_candidates`` on a flat cloud: the columns' answer
is the solver's, body for body, at every microversion; candidates come
in the order the providers were created and ``limit`` keeps the first
ones."""

import uuid

import pytest

from gantt.api import flat_candidates
from gantt.tests.unit.api.test_allocations import _body
from gantt.tests.unit.api.test_providers import _create

V = "latest"
QUERIES = (
    "resources=VCPU:2,MEMORY_MB:512",
    "resources=VCPU:1&limit=2",
    "resources=VCPU:1,DISK_GB:10&required=!CUSTOM_OFF",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2",
    "resources=VCPU:1&required=in:HW_CPU_X86_AVX2,CUSTOM_OFF",
    "resources=VCPU:1&member_of=in:{a0},{a1}",
    "resources=VCPU:1&member_of=!{a0}",
    "resources=VCPU:1&in_tree={rp1}",
    "resources=VCPU:1&root_required=!CUSTOM_OFF",
    "resources=VCPU:8",
)
VERSIONS = ("1.10", "1.12", "1.16", "1.17", "1.21", "1.27", "1.29",
            "1.34", "1.35", V)


def _inventory(client, rp, generation, **totals):
    inventories = {rc: {"total": total, "allocation_ratio": 2.0}
                   for rc, total in totals.items()}
    resp = client.put("/resource_providers/%s/inventories" % rp, {
        "resource_provider_generation": generation,
        "inventories": inventories}, version=V)
    assert resp.status_int == 200, resp.text
    return resp.json["resource_provider_generation"]


def _cloud(client):
    """Five compute nodes alike but for usage, traits and aggregates."""
    client.put("/traits/CUSTOM_OFF", None, version=V)
    aggs = [str(uuid.uuid4()) for _ in range(2)]
    rps = []
    for i in range(5):
        rp = _create(client, "cn%d" % i)["uuid"]
        disk = {"DISK_GB": 100 * i} if i else {}
        generation = _inventory(client, rp, 0, VCPU=4, MEMORY_MB=2048,
                                **disk)
        traits = [["HW_CPU_X86_AVX2"], ["CUSTOM_OFF"], []][i % 3]
        resp = client.put("/resource_providers/%s/traits" % rp, {
            "resource_provider_generation": generation,
            "traits": traits}, version=V)
        client.put("/resource_providers/%s/aggregates" % rp, {
            "resource_provider_generation": resp.json[
                "resource_provider_generation"],
            "aggregates": aggs[:i % 3]}, version=V)
        rps.append(rp)
    client.put("/allocations/" + str(uuid.uuid4()), _body(rps[3], 7),
               version=V)
    return rps, aggs


def _queries(rps, aggs):
    return ["/allocation_candidates?" + q.format(
        a0=aggs[0], a1=aggs[1], rp1=rps[1]) for q in QUERIES]


@pytest.fixture
def selections(monkeypatch):
    """How many answers the columns gave."""
    count = []
    real = flat_candidates.select

    def counting(*args):
        count.append(1)
        return real(*args)
    monkeypatch.setattr(flat_candidates, "select", counting)
    return count


@pytest.mark.parametrize("version", VERSIONS)
def test_the_columns_answer_as_the_solver(client, monkeypatch, selections,
                                          version):
    rps, aggs = _cloud(client)
    queries = _queries(rps, aggs)
    flat = [client.get(q, version=version) for q in queries]
    answered = [r.status_int for r in flat].count(200)
    assert answered >= 1 and len(selections) == answered
    monkeypatch.setattr(flat_candidates, "applies", lambda query: False)
    for query, answer in zip(queries, flat, strict=True):
        resp = client.get(query, version=version)
        assert resp.status_int == answer.status_int
        if resp.status_int == 200:
            assert resp.json == answer.json
    assert len(selections) == answered


def test_candidates_in_creation_order_and_limit_keeps_the_first(client):
    rps = []
    for i in range(6):
        rp = _create(client, "cn%d" % i)["uuid"]
        _inventory(client, rp, 0, VCPU=4)
        rps.append(rp)
    client.put("/allocations/" + str(uuid.uuid4()), _body(rps[1], 8),
               version=V)
    found = client.get("/allocation_candidates?resources=VCPU:1&limit=3",
                       version=V).json
    chosen = [rps[0], rps[2], rps[3]]
    assert [next(iter(r["allocations"]))
            for r in found["allocation_requests"]] == chosen
    assert list(found["provider_summaries"]) == chosen


def test_a_tree_in_the_cloud_leaves_it_to_the_solver(client, selections):
    rps = [_create(client, "cn%d" % i)["uuid"] for i in range(2)]
    for rp in rps:
        _inventory(client, rp, 0, VCPU=4)
    numa = _create(client, "numa", parent=rps[0])["uuid"]
    _inventory(client, numa, 0, VCPU=4)
    found = client.get("/allocation_candidates?resources=VCPU:1",
                       version=V).json
    assert [next(iter(r["allocations"]))
            for r in found["allocation_requests"]] == [rps[0], numa, rps[1]]
    assert selections == []
