"""``/traits``, ``/traits/{name}`` and a provider's traits (from 1.6)."""

import jsonschema

from gantt.api import errors
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.db import providers

_RULE = "placement:traits:%s"
_RP_RULE = "placement:resource_providers:traits:%s"
_CUSTOM = {"type": "string", "minLength": 1, "maxLength": 255,
           "pattern": schemas.CUSTOM_PATTERN}


@w.Wsgify
@w.since(6)
@w.check_accept("application/json")
def list_traits(req):
    w.authorize(req, _RULE % "list")
    w.validate_query(req, schemas.TRAITS_QUERY)
    with w.services(req).db.begin() as conn:
        found = names.TRAIT_NAMES.all(conn)
        if "associated" in req.GET:
            found = _by_association(conn, req, found)
    if "name" in req.GET:
        found = _by_name(req.GET["name"], found)
    return w.json_response(req, {"traits": [n.name for n in found]},
                           last_modified=w.last_modified(found))


def _by_association(conn, req, found):
    wanted = req.GET["associated"].lower()
    if wanted not in ("true", "false"):
        raise errors.bad_request('The query parameter "associated" only '
                                 'accepts "true" or "false"')
    from gantt.db.models import TRAITS
    used = set(conn.execute(TRAITS.select().with_only_columns(
        TRAITS.c.trait).distinct()).scalars())
    return [n for n in found if (n.name in used) == (wanted == "true")]


def _by_name(value, found):
    try:
        op, arg = value.split(":", 1)
    except ValueError:
        raise errors.bad_request(
            "Badly formatted name parameter. Expected name query string "
            "parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. "
            'Got: "%s"' % value) from None
    if op == "in":
        wanted = set(arg.split(","))
        return [n for n in found if n.name in wanted]
    if op == "startswith":
        return [n for n in found if n.name.startswith(arg)]
    return found


@w.Wsgify
@w.since(6)
def get_trait(req):
    w.authorize(req, _RULE % "show")
    name = w.path_item(req, "name")
    with w.services(req).db.begin() as conn:
        found = names.TRAIT_NAMES.get(conn, name)
    if found is None:
        raise errors.not_found("No such trait(s): %s." % name)
    resp = w.no_content(req)
    _stamp(req, resp, found)
    return resp


def _stamp(req, resp, found):
    from gantt.api import microversion
    if microversion.at_least(req, 15):
        resp.cache_control = "no-cache"
        resp.last_modified = w.last_modified([found])


@w.Wsgify
@w.since(6)
def put_trait(req):
    w.authorize(req, _RULE % "update")
    name = w.path_item(req, "name")
    try:
        jsonschema.validate(name, _CUSTOM)
    except jsonschema.ValidationError:
        raise errors.bad_request(
            "The trait is invalid. A valid trait must be no longer than 255 "
            'characters, start with the prefix "CUSTOM_" and use following '
            'characters: "A"-"Z", "0"-"9" and "_"') from None
    with w.services(req).db.begin() as conn:
        created = names.TRAIT_NAMES.create(conn, name)
        found = names.TRAIT_NAMES.get(conn, name)
    req.response.status = 201 if created else 204
    req.response.content_type = None
    req.response.location = "%s/traits/%s" % (req.script_name, name)
    _stamp(req, req.response, found)
    return req.response


@w.Wsgify
@w.since(6)
def delete_trait(req):
    w.authorize(req, _RULE % "delete")
    name = w.path_item(req, "name")
    with w.services(req).db.begin() as conn:
        if names.TRAIT_NAMES.get(conn, name) is None:
            raise errors.not_found("No such trait(s): %s." % name)
        if name in names.STANDARD_TRAITS:
            raise errors.bad_request("Cannot delete standard trait %s." %
                                     name)
        if names.TRAIT_NAMES.in_use(conn, name):
            raise errors.conflict("The trait %s is in use by a resource "
                                  "provider." % name)
        names.TRAIT_NAMES.delete(conn, name)
    return w.no_content(req)


# -- a provider's traits ----------------------------------------------------

def _send(req, conn, uuid):
    row = providers.get(conn, uuid)
    return w.json_response(req, {
        "traits": sorted(providers.traits_of(conn, row.id)),
        "resource_provider_generation": row.generation})


@w.Wsgify
@w.since(6)
@w.check_accept("application/json")
def list_provider_traits(req):
    w.authorize(req, _RP_RULE % "list")
    with w.services(req).db.begin() as conn:
        uuid = w.path_item(req, "uuid")
        w.provider_or_404(conn, req, "No resource provider with uuid %s "
                                     "found: No resource provider with "
                                     "uuid %s found" % (uuid, uuid))
        return _send(req, conn, uuid)


@w.Wsgify
@w.since(6)
@w.require_content("application/json")
def update_provider_traits(req):
    w.authorize(req, _RP_RULE % "update")
    data = w.extract_json(req.body, schemas.PROVIDER_TRAITS)
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        if row.generation != data["resource_provider_generation"]:
            raise _changed()
        unknown = set(data["traits"]) - names.TRAIT_NAMES.known(
            conn, data["traits"])
        if unknown:
            raise errors.bad_request("No such trait %s" %
                                     ", ".join(sorted(unknown)))
        _set(conn, row, data["traits"], row.generation)
        w.tree_written(req, conn, row)
        resp = _send(req, conn, row.uuid)
    w.tell_workers(req)
    return resp


def _changed():
    return errors.conflict(
        "Resource provider's generation already changed. Please update "
        "the generation and try again.", errors.CONCURRENT_UPDATE)


def _set(conn, row, traits, seen):
    try:
        providers.set_traits(conn, row, traits, seen)
    except providers.Conflict:
        raise _changed() from None


@w.Wsgify
@w.since(6)
def delete_provider_traits(req):
    w.authorize(req, _RP_RULE % "delete")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        _set(conn, row, [], None)
        w.tree_written(req, conn, row)
    w.tell_workers(req)
    return w.no_content(req)
