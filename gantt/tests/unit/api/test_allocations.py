"""Allocations through the REST API: the claim's capacity rule, consumer
generations, owners and types, several consumers at once, release."""

import uuid

from gantt.tests.unit.api.conftest import error_code
from gantt.tests.unit.api.test_providers import _create

V = "latest"
PROJECT, USER = "p1", "u1"


def _provider(client, name="cn", vcpu=4):
    rp = _create(client, name)
    client.put("/resource_providers/%s/inventories" % rp["uuid"], {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": vcpu}}}, version=V)
    return rp["uuid"]


def _body(rp, vcpu, generation=None, ctype="INSTANCE"):
    return {"allocations": {rp: {"resources": {"VCPU": vcpu}}},
            "project_id": PROJECT, "user_id": USER,
            "consumer_generation": generation, "consumer_type": ctype}


def test_put_then_get_with_placement_generations(client):
    rp, consumer = _provider(client), str(uuid.uuid4())
    resp = client.put("/allocations/" + consumer, _body(rp, 2), version=V)
    assert resp.status_int == 204, resp.text
    got = client.get("/allocations/" + consumer, version=V).json
    assert got["allocations"][rp]["resources"] == {"VCPU": 2}
    assert got["allocations"][rp]["generation"] == 2
    assert (got["consumer_generation"], got["consumer_type"]) == (
        1, "INSTANCE")
    assert (got["project_id"], got["user_id"]) == (PROJECT, USER)


def test_a_stale_consumer_generation_is_409(client):
    rp, consumer = _provider(client), str(uuid.uuid4())
    client.put("/allocations/" + consumer, _body(rp, 1), version=V)
    resp = client.put("/allocations/" + consumer, _body(rp, 2), version=V)
    assert resp.status_int == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "expected 1 but got null" in resp.json["errors"][0]["detail"]


def test_beyond_capacity_is_409_and_writes_nothing(client):
    rp = _provider(client, vcpu=4)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    client.put("/allocations/" + first, _body(rp, 3), version=V)
    resp = client.put("/allocations/" + second, _body(rp, 2), version=V)
    assert resp.status_int == 409
    assert "exceed the capacity" in resp.json["errors"][0]["detail"]
    assert client.get("/allocations/" + second,
                      version=V).json["allocations"] == {}


def test_an_unknown_provider_is_400(client):
    resp = client.put("/allocations/" + str(uuid.uuid4()),
                      _body(str(uuid.uuid4()), 1), version=V)
    assert resp.status_int == 400


def test_post_moves_allocations_between_consumers(client):
    rp = _provider(client, vcpu=2)
    instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
    client.put("/allocations/" + instance, _body(rp, 2), version=V)
    path = "/resource_providers/%s" % rp
    generation = client.get(path, version=V).json["generation"]
    resp = client.post("/allocations", {
        instance: dict(_body(rp, 1, generation=1), allocations={}),
        migration: _body(rp, 2, ctype="MIGRATION")}, version=V)
    assert resp.status_int == 204, resp.text
    assert client.get("/allocations/" + instance,
                      version=V).json["allocations"] == {}
    usages = client.get("/resource_providers/%s/usages" % rp,
                        version=V).json["usages"]
    assert usages == {"VCPU": 2}
    # freed, then taken again in one write: one step, as in Placement
    assert client.get(path, version=V).json["generation"] == generation + 1


def test_delete_frees_and_a_second_delete_is_404(client):
    rp, consumer = _provider(client), str(uuid.uuid4())
    client.put("/allocations/" + consumer, _body(rp, 2), version=V)
    assert client.delete("/allocations/" + consumer,
                         version=V).status_int == 204
    assert client.delete("/allocations/" + consumer,
                         version=V).status_int == 404
    assert client.get("/resource_providers/%s/usages" % rp,
                      version=V).json["usages"] == {"VCPU": 0}


def test_usages_by_project_and_consumer_type(client):
    rp = _provider(client)
    client.put("/allocations/" + str(uuid.uuid4()), _body(rp, 1), version=V)
    client.put("/allocations/" + str(uuid.uuid4()),
               _body(rp, 2, ctype="MIGRATION"), version=V)
    resp = client.get("/usages?project_id=%s" % PROJECT, version=V)
    assert resp.json["usages"] == {
        "INSTANCE": {"VCPU": 1, "consumer_count": 1},
        "MIGRATION": {"VCPU": 2, "consumer_count": 1}}
    old = client.get("/usages?project_id=%s" % PROJECT, version="1.9")
    assert old.json["usages"] == {"VCPU": 3}


def test_provider_allocations_list_consumers(client):
    rp, consumer = _provider(client), str(uuid.uuid4())
    client.put("/allocations/" + consumer, _body(rp, 2), version=V)
    got = client.get("/resource_providers/%s/allocations" % rp,
                     version=V).json
    assert got["allocations"] == {consumer: {
        "resources": {"VCPU": 2}, "consumer_generation": 1}}


def test_reshape_moves_vcpu_to_a_child_with_its_allocation(client):
    root = _provider(client, "root", vcpu=4)
    child = _create(client, "numa0", parent=root)["uuid"]
    consumer = str(uuid.uuid4())
    client.put("/allocations/" + consumer, _body(root, 2), version=V)
    resp = client.post("/reshaper", {
        "inventories": {
            root: {"resource_provider_generation": 2, "inventories": {}},
            child: {"resource_provider_generation": 0,
                    "inventories": {"VCPU": {"total": 4}}}},
        "allocations": {
            consumer: dict(_body(child, 2), consumer_generation=1)},
    }, version=V, token="admin", headers={"X-Roles": "service"})
    assert resp.status_int == 204, resp.text
    got = client.get("/allocations/" + consumer, version=V).json
    assert list(got["allocations"]) == [child]
    assert client.get("/resource_providers/%s/inventories" % root,
                      version=V).json["inventories"] == {}
