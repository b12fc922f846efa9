"""Resource providers: create, show, list with filters, rename, move,
delete, with Placement's answers and error codes."""

import uuid

from gantt.tests.unit.api.conftest import error_code

LATEST = "latest"


def _create(client, name, parent=None, version=LATEST):
    body = {"name": name, "uuid": str(uuid.uuid4())}
    if parent:
        body["parent_provider_uuid"] = parent
    resp = client.post("/resource_providers", body, version=version)
    assert resp.status_int == 200, resp.text
    return resp.json


def test_create_then_show_a_root_of_its_own_tree(client):
    rp = _create(client, "cn1")
    shown = client.get("/resource_providers/%s" % rp["uuid"],
                       version=LATEST).json
    assert shown["generation"] == 0
    assert shown["root_provider_uuid"] == rp["uuid"]
    assert shown["parent_provider_uuid"] is None
    assert [link["rel"] for link in shown["links"]] == [
        "self", "inventories", "usages", "aggregates", "traits",
        "allocations"]


def test_before_1_20_a_create_is_201_without_body(client):
    resp = client.post("/resource_providers", {"name": "old"},
                       version="1.19")
    assert resp.status_int == 201
    assert "/resource_providers/" in resp.headers["location"]
    assert not resp.body


def test_a_duplicate_name_is_409_duplicate_name(client):
    _create(client, "same")
    resp = client.post("/resource_providers", {"name": "same"},
                       version=LATEST)
    assert resp.status_int == 409
    assert error_code(resp) == "placement.duplicate_name"


def test_a_body_with_unknown_fields_is_400_and_creates_nothing(client):
    resp = client.post("/resource_providers", {"name": "x", "bad": 1},
                       version=LATEST)
    assert resp.status_int == 400
    assert "JSON does not validate" in resp.json["errors"][0]["detail"]
    assert client.get("/resource_providers",
                      version=LATEST).json["resource_providers"] == []


def test_in_tree_lists_the_whole_tree(client):
    root = _create(client, "root")
    child = _create(client, "child", parent=root["uuid"])
    _create(client, "other")
    listed = client.get("/resource_providers?in_tree=%s" % child["uuid"],
                        version=LATEST).json["resource_providers"]
    assert sorted(p["name"] for p in listed) == ["child", "root"]


def test_reparenting_only_from_1_37(client):
    a, b = _create(client, "a"), _create(client, "b")
    child = _create(client, "c", parent=a["uuid"])
    path = "/resource_providers/%s" % child["uuid"]
    body = {"name": "c", "parent_provider_uuid": b["uuid"]}
    assert client.put(path, body, version="1.36").status_int == 400
    moved = client.put(path, body, version="1.37").json
    assert moved["root_provider_uuid"] == b["uuid"]


def test_a_loop_is_refused(client):
    a = _create(client, "a")
    b = _create(client, "b", parent=a["uuid"])
    resp = client.put("/resource_providers/%s" % a["uuid"],
                      {"name": "a", "parent_provider_uuid": b["uuid"]},
                      version=LATEST)
    assert resp.status_int == 400
    assert "loop" in resp.json["errors"][0]["detail"]


def test_a_parent_cannot_be_deleted(client):
    a = _create(client, "a")
    _create(client, "b", parent=a["uuid"])
    resp = client.delete("/resource_providers/%s" % a["uuid"],
                         version=LATEST)
    assert resp.status_int == 409
    assert error_code(resp) == (
        "placement.resource_provider.cannot_delete_parent")


def test_delete_then_404(client):
    a = _create(client, "a")
    path = "/resource_providers/%s" % a["uuid"]
    assert client.delete(path, version=LATEST).status_int == 204
    assert client.get(path, version=LATEST).status_int == 404


def test_an_unknown_trait_in_required_is_400(client):
    resp = client.get("/resource_providers?required=CUSTOM_NOPE",
                      version=LATEST)
    assert resp.status_int == 400
    assert "CUSTOM_NOPE" in resp.json["errors"][0]["detail"]
