"""``/resource_classes`` (from 1.2) and ``/resource_classes/{name}``."""

import jsonschema

from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.db.models import ALLOC
from gantt.db.models import INV

_RULE = "placement:resource_classes:%s"


def _url(req, name):
    return "%s/resource_classes/%s" % (req.script_name, name)


def _serialize(req, name):
    return {"name": name.name,
            "links": [{"rel": "self", "href": _url(req, name.name)}]}


def _get_or_404(conn, name):
    found = names.CLASSES.get(conn, name)
    if found is None:
        raise errors.not_found("No such resource class %s." % name)
    return found


@w.Wsgify
@w.since(2)
@w.check_accept("application/json")
def list_classes(req):
    w.authorize(req, _RULE % "list")
    with w.services(req).db.begin() as conn:
        found = names.CLASSES.all(conn)
    return w.json_response(
        req, {"resource_classes": [_serialize(req, n) for n in found]},
        last_modified=w.last_modified(found))


@w.Wsgify
@w.since(2)
@w.check_accept("application/json")
def get_class(req):
    w.authorize(req, _RULE % "show")
    with w.services(req).db.begin() as conn:
        found = _get_or_404(conn, w.path_item(req, "name"))
    return w.json_response(req, _serialize(req, found),
                           last_modified=w.last_modified([found]))


@w.Wsgify
@w.since(2)
@w.require_content("application/json")
def create_class(req):
    w.authorize(req, _RULE % "create")
    name = w.extract_json(req.body, schemas.RESOURCE_CLASS)["name"]
    with w.services(req).db.begin() as conn:
        if not names.CLASSES.create(conn, name):
            raise errors.conflict(
                "Conflicting resource class already exists: %s" % name)
    req.response.location = _url(req, name)
    req.response.status = 201
    req.response.content_type = None
    return req.response


@w.Wsgify
@w.since(2)
def update_class(req):
    """Before 1.7: rename a custom class (a body); from 1.7: make sure a
    custom class exists (no body; 201 made, 204 was there)."""
    w.authorize(req, _RULE % "update")
    if microversion.at_least(req, 7):
        return _ensure_class(req)
    return _rename_class(req)


@w.require_content("application/json")
def _rename_class(req):
    old = w.path_item(req, "name")
    new = w.extract_json(req.body, schemas.RESOURCE_CLASS)["name"]
    with w.services(req).db.begin() as conn:
        _get_or_404(conn, old)
        if old in names.STANDARD_CLASSES:
            raise errors.bad_request(
                "Cannot update standard resource class %s" % old)
        if names.CLASSES.get(conn, new) is not None:
            raise errors.conflict("Resource class already exists: %s" % new)
        names.CLASSES.create(conn, old)      # a reported-only name: store
        names.CLASSES.rename(conn, old, new)
        for table in (INV, ALLOC):
            conn.execute(table.update().where(
                table.c.resource_class == old).values(resource_class=new))
        found = names.CLASSES.get(conn, new)
    resp = w.json_response(req, _serialize(req, found))
    for header in ("Cache-Control", "Last-Modified"):
        resp.headers.pop(header, None)
    return resp


def _ensure_class(req):
    name = w.path_item(req, "name")
    try:
        jsonschema.validate({"name": name}, schemas.RESOURCE_CLASS)
    except jsonschema.ValidationError as exc:
        raise errors.bad_request("JSON does not validate: %s" % exc) \
            from None
    with w.services(req).db.begin() as conn:
        created = names.CLASSES.create(conn, name)
    req.response.status = 201 if created else 204
    req.response.content_type = None
    req.response.location = _url(req, name)
    return req.response


@w.Wsgify
@w.since(2)
def delete_class(req):
    w.authorize(req, _RULE % "delete")
    name = w.path_item(req, "name")
    with w.services(req).db.begin() as conn:
        _get_or_404(conn, name)
        if name in names.STANDARD_CLASSES:
            raise errors.bad_request(
                "Error in delete resource class: Cannot delete standard "
                "resource class %s." % name)
        if names.CLASSES.in_use(conn, name):
            raise errors.conflict(
                "Error in delete resource class: Cannot delete resource "
                "class %s. Class is in use in inventory." % name)
        names.CLASSES.delete(conn, name)
    return w.no_content(req)
