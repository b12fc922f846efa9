"""A provider's inventories, traits and aggregates, and the names they
use: each write moves the generation; a stale one is 409."""

from gantt.tests.unit.api.conftest import error_code
from gantt.tests.unit.api.test_providers import _create

V = "latest"


def _inv_path(rp):
    return "/resource_providers/%s/inventories" % rp["uuid"]


def test_put_inventories_then_read_them_back_with_defaults(client):
    rp = _create(client, "cn")
    resp = client.put(_inv_path(rp), {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 8, "allocation_ratio": 4.0}}},
        version=V)
    assert resp.status_int == 200, resp.text
    assert resp.json["resource_provider_generation"] == 1
    vcpu = client.get(_inv_path(rp) + "/VCPU", version=V).json
    assert vcpu == {"total": 8, "reserved": 0, "min_unit": 1,
                    "max_unit": 0x7FFFFFFF, "step_size": 1,
                    "allocation_ratio": 4.0,
                    "resource_provider_generation": 1}


def test_a_stale_generation_is_409_concurrent_update(client):
    rp = _create(client, "cn")
    body = {"resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 8}}}
    client.put(_inv_path(rp), body, version=V)
    resp = client.put(_inv_path(rp), body, version=V)
    assert resp.status_int == 409
    assert error_code(resp) == "placement.concurrent_update"


def test_reserved_equal_to_total_only_from_1_26(client):
    rp = _create(client, "cn")
    body = {"resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": 8, "reserved": 8}}}
    assert client.put(_inv_path(rp), body,
                      version="1.25").status_int == 400
    assert client.put(_inv_path(rp), body,
                      version="1.26").status_int == 200


def test_an_unknown_class_is_400_until_defined(client):
    rp = _create(client, "cn")
    body = {"resource_provider_generation": 0,
            "inventories": {"CUSTOM_GOLD": {"total": 2}}}
    assert client.put(_inv_path(rp), body, version=V).status_int == 400
    assert client.put("/resource_classes/CUSTOM_GOLD", None,
                      version=V).status_int == 201
    assert client.put("/resource_classes/CUSTOM_GOLD", None,
                      version=V).status_int == 204
    assert client.put(_inv_path(rp), body, version=V).status_int == 200
    resp = client.delete("/resource_classes/CUSTOM_GOLD", version=V)
    assert resp.status_int == 409


def test_delete_all_inventories_is_405_before_1_5(client):
    rp = _create(client, "cn")
    assert client.delete(_inv_path(rp), version="1.4").status_int == 405
    assert client.delete(_inv_path(rp), version="1.5").status_int == 204


def test_traits_of_a_provider_need_defined_traits(client):
    rp = _create(client, "cn")
    path = "/resource_providers/%s/traits" % rp["uuid"]
    body = {"traits": ["CUSTOM_FAST", "HW_CPU_X86_AVX2"],
            "resource_provider_generation": 0}
    assert client.put(path, body, version=V).status_int == 400
    assert client.put("/traits/CUSTOM_FAST", None,
                      version=V).status_int == 201
    resp = client.put(path, body, version=V)
    assert resp.json == {"traits": ["CUSTOM_FAST", "HW_CPU_X86_AVX2"],
                         "resource_provider_generation": 1}
    assert client.delete("/traits/CUSTOM_FAST", version=V).status_int == 409
    listed = client.get("/traits?associated=true", version=V).json
    assert sorted(listed["traits"]) == ["CUSTOM_FAST", "HW_CPU_X86_AVX2"]


def test_aggregates_move_the_generation_from_1_19(client):
    rp = _create(client, "cn")
    path = "/resource_providers/%s/aggregates" % rp["uuid"]
    agg = "f6cb1a6c-5bfc-4ab8-9a3c-5e1f2e7e3c11"
    assert client.put(path, [agg], version="1.18").json == {
        "aggregates": [agg]}
    resp = client.put(path, {"aggregates": [],
                             "resource_provider_generation": 0}, version=V)
    assert resp.json == {"aggregates": [],
                         "resource_provider_generation": 1}


def test_provider_usages_list_every_inventoried_class(client):
    rp = _create(client, "cn")
    client.put(_inv_path(rp), {"resource_provider_generation": 0,
                               "inventories": {"VCPU": {"total": 8}}},
               version=V)
    resp = client.get("/resource_providers/%s/usages" % rp["uuid"],
                      version=V)
    assert resp.json == {"resource_provider_generation": 1,
                         "usages": {"VCPU": 0}}
