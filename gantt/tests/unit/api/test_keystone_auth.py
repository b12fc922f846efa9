"""gantt-api behind keystonemiddleware (``[api] auth_strategy = keystone``,
the default): tokens are validated by auth_token, the roles it finds
decide through Placement's default policy.

Keystone itself is not on this machine: keystonemiddleware's own
``AuthTokenFixture`` answers the token validation that would go to
Keystone, and everything after it (the identity headers auth_token sets,
the request context, oslo.policy) is the real pipeline.
"""

import uuid

from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ks_fixture
import pytest

from gantt.api import app as app_mod
from gantt.tests.unit.api.conftest import Client

PROJECT = uuid.uuid4().hex
OTHER_PROJECT = uuid.uuid4().hex


@pytest.fixture
def tokens():
    fixture = ks_fixture.AuthTokenFixture()
    fixture.setUp()
    yield fixture
    fixture.cleanUp()


@pytest.fixture
def keystone_client(conf, sqlite_db, tokens):
    conf.set_override("auth_strategy", "keystone", "api")
    conf.set_override("notify_workers", False, "api")
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    conf.set_override("www_authenticate_uri", "http://127.0.0.1:5000/v3",
                      "keystone_authtoken")
    return Client(app_mod.make_app(conf, db=sqlite_db))


def _token(tokens, *roles, project=PROJECT):
    token_id = uuid.uuid4().hex
    tokens.add_token_data(token_id=token_id, user_id=uuid.uuid4().hex,
                          project_id=project, role_list=list(roles))
    return token_id


def _new_provider():
    return {"name": "cn-%s" % uuid.uuid4().hex[:8],
            "uuid": str(uuid.uuid4())}


def test_no_token_or_an_unknown_one_is_401(keystone_client):
    missing = keystone_client.get("/resource_providers", token=None)
    unknown = keystone_client.get("/resource_providers", token="forged")
    assert (missing.status_int, unknown.status_int) == (401, 401)
    assert missing.headers["WWW-Authenticate"] == (
        'Keystone uri="http://127.0.0.1:5000/v3"')


def test_the_version_document_needs_no_token(keystone_client):
    resp = keystone_client.get("/", token=None)
    assert resp.status_int == 200
    assert resp.json["versions"][0]["max_version"] == "1.39"


@pytest.mark.parametrize("role", ["admin", "service"])
def test_admin_and_service_tokens_write(keystone_client, tokens, role):
    token = _token(tokens, role)
    made = keystone_client.post("/resource_providers", _new_provider(),
                                token=token, version="1.20")
    assert made.status_int == 200, made.body
    listed = keystone_client.get("/resource_providers", token=token)
    assert [p["uuid"] for p in listed.json["resource_providers"]] == [
        made.json["uuid"]]


def test_a_reader_may_not_write_providers(keystone_client, tokens):
    resp = keystone_client.post("/resource_providers", _new_provider(),
                                token=_token(tokens, "reader"))
    assert resp.status_int == 403
    assert keystone_client.get(
        "/resource_providers", token=_token(tokens, "admin")).json == {
            "resource_providers": []}


def test_a_reader_sees_its_own_project_s_usages_only(keystone_client,
                                                     tokens):
    reader = _token(tokens, "reader")
    own = keystone_client.get("/usages?project_id=%s" % PROJECT,
                              token=reader, version="1.9")
    other = keystone_client.get("/usages?project_id=%s" % OTHER_PROJECT,
                                token=reader, version="1.9")
    assert (own.status_int, other.status_int) == (200, 403)
    assert own.json["usages"] == {}
