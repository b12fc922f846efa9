"""The version document, microversion negotiation, errors, health."""

from gantt.tests.unit.api.conftest import error_code


def test_root_lists_versions_1_0_to_1_39_without_a_token(client):
    resp = client.get("/", token=None)
    assert resp.status_int == 200
    version = resp.json["versions"][0]
    assert (version["min_version"], version["max_version"]) == (
        "1.0", "1.39")
    assert resp.headers["openstack-api-version"] == "placement 1.0"


def test_latest_is_1_39_with_cache_headers(client):
    resp = client.get("/", version="latest")
    assert resp.headers["openstack-api-version"] == "placement 1.39"
    assert resp.headers["cache-control"] == "no-cache"
    assert "last-modified" in resp.headers


def test_a_version_beyond_1_39_is_406_with_the_range(client):
    resp = client.get("/", version="1.40")
    assert resp.status_int == 406
    err = resp.json["errors"][0]
    assert (err["min_version"], err["max_version"]) == ("1.0", "1.39")


def test_unknown_path_is_404_with_request_id(client):
    resp = client.get("/nothing-here", version="1.23")
    assert resp.status_int == 404
    assert resp.json["errors"][0]["request_id"].startswith("req-")
    assert error_code(resp) == "placement.undefined_code"


def test_wrong_method_is_405_with_allow(client):
    resp = client.call("DELETE", "/")
    assert resp.status_int == 405
    assert resp.headers["allow"] == "GET"


def test_no_token_is_401_beyond_root(client):
    assert client.get("/resource_providers", token=None).status_int == 401


def test_healthcheck_answers_before_authentication(client):
    resp = client.get("/healthcheck", token=None)
    assert resp.status_int == 200
