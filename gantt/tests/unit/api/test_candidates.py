"""Allocation candidates through the REST API: the solver's answer in
Placement's shape, per microversion."""

from gantt.tests.unit.api.test_allocations import _provider
from gantt.tests.unit.api.test_providers import _create

V = "latest"


def test_a_flat_provider_with_room_is_a_candidate(client):
    rp = _provider(client, vcpu=4)
    resp = client.get("/allocation_candidates?resources=VCPU:2", version=V)
    assert resp.status_int == 200, resp.text
    body = resp.json
    assert body["allocation_requests"] == [{
        "allocations": {rp: {"resources": {"VCPU": 2}}},
        "mappings": {"": [rp]}}]
    assert body["provider_summaries"][rp]["resources"] == {
        "VCPU": {"capacity": 4, "used": 0}}


def test_no_room_no_candidate(client):
    _provider(client, vcpu=1)
    resp = client.get("/allocation_candidates?resources=VCPU:2", version=V)
    assert resp.json == {"allocation_requests": [],
                         "provider_summaries": {}}


def test_a_child_supplies_from_1_29_only(client):
    root = _create(client, "root")
    child = _create(client, "numa", parent=root["uuid"])
    client.put("/resource_providers/%s/inventories" % child["uuid"], {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 4}}}, version=V)
    client.put("/resource_providers/%s/inventories" % root["uuid"], {
        "resource_provider_generation": 0,
        "inventories": {"DISK_GB": {"total": 100}}}, version=V)
    query = "/allocation_candidates?resources=VCPU:1,DISK_GB:10"
    assert client.get(query, version="1.28").json[
        "allocation_requests"] == []
    found = client.get(query, version="1.29").json
    assert found["allocation_requests"][0]["allocations"] == {
        child["uuid"]: {"resources": {"VCPU": 1}},
        root["uuid"]: {"resources": {"DISK_GB": 10}}}
    assert set(found["provider_summaries"]) == {root["uuid"],
                                                child["uuid"]}


def test_an_unknown_class_is_400(client):
    resp = client.get("/allocation_candidates?resources=CUSTOM_NO:1",
                      version=V)
    assert resp.status_int == 400


def test_two_suffixed_groups_need_a_group_policy(client):
    resp = client.get("/allocation_candidates?resources1=VCPU:1"
                      "&resources2=VCPU:1", version=V)
    assert resp.status_int == 400
    assert "group_policy" in resp.json["errors"][0]["detail"]


def test_before_1_12_requests_are_lists(client):
    rp = _provider(client)
    body = client.get("/allocation_candidates?resources=VCPU:1",
                      version="1.10").json
    assert body["allocation_requests"] == [{"allocations": [
        {"resource_provider": {"uuid": rp}, "resources": {"VCPU": 1}}]}]


def test_identical_groups_are_listed_once_per_mapping(client):
    """resources_A and resources_B alike, isolated, on two providers:
    Placement lists both ways round, with the same allocations."""
    root = _create(client, "root")
    numa = [_create(client, "numa%d" % i, parent=root["uuid"])["uuid"]
            for i in range(2)]
    for rp in numa:
        client.put("/resource_providers/%s/inventories" % rp, {
            "resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 4}}}, version=V)
    found = client.get("/allocation_candidates?resources_A=VCPU:1"
                       "&resources_B=VCPU:1&group_policy=isolate",
                       version=V).json["allocation_requests"]
    assert sorted((c["mappings"]["_A"], c["mappings"]["_B"])
                  for c in found) == sorted([([numa[0]], [numa[1]]),
                                             ([numa[1]], [numa[0]])])
