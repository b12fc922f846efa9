"""The API on SQLite, in-process, called with plain webob requests."""

import json

import pytest
import webob

from gantt.api import app as app_mod


class Client:
    """Calls the WSGI app as Placement's tests do: a token (noauth2), a
    microversion, JSON in and out."""

    def __init__(self, app):
        self.app = app

    def call(self, method, path, body=None, version=None, token="admin",
             headers=None):
        req = webob.Request.blank(path, method=method)
        if token is not None:
            req.headers["X-Auth-Token"] = token
        if version is not None:
            req.headers["OpenStack-API-Version"] = "placement %s" % version
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = "application/json"
        for name, value in (headers or {}).items():
            req.headers[name] = value
        return req.get_response(self.app)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def put(self, path, body, **kw):
        return self.call("PUT", path, body=body, **kw)

    def post(self, path, body, **kw):
        return self.call("POST", path, body=body, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)


@pytest.fixture
def api_conf(conf):
    conf.set_override("auth_strategy", "noauth2", "api")
    conf.set_override("notify_workers", False, "api")
    return conf


@pytest.fixture
def client(api_conf, sqlite_db):
    return Client(app_mod.make_app(api_conf, db=sqlite_db))


def error_code(resp):
    return resp.json["errors"][0].get("code")
