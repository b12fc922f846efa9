"""``/resource_providers`` and ``/resource_providers/{uuid}``."""

import uuid as uuid_mod

from oslo_utils import uuidutils

from gantt.api import errors
from gantt.api import microversion
from gantt.api import query
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.db import providers

_RULE = "placement:resource_providers:%s"


def serialize(req, row):
    url = w.provider_url(req, row.uuid)
    rels = ["inventories", "usages"]
    for minor, rel in ((1, "aggregates"), (6, "traits"),
                       (11, "allocations")):
        if microversion.at_least(req, minor):
            rels.append(rel)
    data = {"uuid": row.uuid, "name": row.name,
            "generation": row.generation,
            "links": [{"rel": "self", "href": url}] + [
                {"rel": rel, "href": "%s/%s" % (url, rel)} for rel in rels]}
    if microversion.at_least(req, 14):
        data["parent_provider_uuid"] = row.parent_uuid
        data["root_provider_uuid"] = row.root_uuid
    return data


@w.Wsgify
@w.check_accept("application/json")
def list_providers(req):
    w.authorize(req, _RULE % "list")
    w.validate_query(req, schemas.for_version(schemas.PROVIDERS_QUERY, req))
    with w.services(req).db.begin() as conn:
        rows = providers.find(conn, _filters(conn, req))
    return w.json_response(
        req, {"resource_providers": [serialize(req, r) for r in rows]},
        last_modified=w.last_modified(rows))


def _filters(conn, req):
    get = req.GET
    kwargs = {k: get[k] for k in ("name", "uuid") if k in get}
    if "in_tree" in get:
        kwargs["in_tree"] = get["in_tree"]
    if "member_of" in get:
        required, forbidden = query.member_of(req)
        kwargs.update(member_of=tuple(frozenset(s) for s in required),
                      forbidden_aggregates=frozenset(forbidden))
    if "required" in get:
        traits = query.traits(req)
        every = {t for s in traits.required for t in s} | traits.forbidden
        unknown = every - names.TRAIT_NAMES.known(conn, every)
        if unknown:
            raise errors.bad_request(
                'Invalid trait(s) in "required" parameter: No such '
                'trait(s): %s.' % ", ".join(sorted(unknown)))
        kwargs.update(required=tuple(frozenset(s) for s in traits.required),
                      forbidden_traits=traits.forbidden)
    if "resources" in get:
        wanted = query.resources(get["resources"])
        unknown = set(wanted) - names.CLASSES.known(conn, wanted)
        if unknown:
            raise errors.bad_request(
                "Invalid resource class in resources parameter: No such "
                "resource class %s." % sorted(unknown)[0])
        kwargs["resources"] = wanted
    return providers.Filters(**kwargs)


@w.Wsgify
@w.check_accept("application/json")
def get_provider(req):
    w.authorize(req, _RULE % "show")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
    return w.json_response(req, serialize(req, row),
                           last_modified=w.last_modified([row]))


@w.Wsgify
@w.require_content("application/json")
def create_provider(req):
    w.authorize(req, _RULE % "create")
    data = w.extract_json(req.body, schemas.PROVIDER_POST_1_14 if (
        microversion.at_least(req, 14)) else schemas.PROVIDER_POST)
    uuid = (str(uuid_mod.UUID(data["uuid"])) if data.get("uuid")
            else uuidutils.generate_uuid())
    with w.services(req).db.begin() as conn:
        _refuse_duplicates(conn, uuid, data["name"])
        parent = None
        if data.get("parent_provider_uuid"):
            parent_uuid = str(uuid_mod.UUID(data["parent_provider_uuid"]))
            parent = (providers.get(conn, parent_uuid)
                      if parent_uuid != uuid else None)
            if parent is None:
                raise errors.bad_request(
                    'Unable to create resource provider "%s", %s: Object '
                    'action create failed because: %s' % (
                        data["name"], uuid,
                        "parent provider UUID does not exist."
                        if parent_uuid != uuid else "parent provider UUID "
                        "cannot be same as UUID. Please set parent "
                        "provider UUID to None if there is no parent."))
        row = providers.create(conn, uuid, data["name"], parent)
        w.tree_written(req, conn, row)
    req.response.location = w.provider_url(req, uuid)
    w.tell_workers(req)
    if microversion.at_least(req, 20):
        return w.json_response(req, serialize(req, row),
                               last_modified=w.last_modified([row]))
    req.response.status = 201
    req.response.content_type = None
    return req.response


def _refuse_duplicates(conn, uuid, name):
    found = []
    if providers.get(conn, uuid) is not None:
        found.append("uuid: %s" % uuid)
    if providers.by_name(conn, name) is not None:
        found.append("name: %s" % name)
    if found:
        raise errors.conflict(
            "Conflicting resource provider %s already exists." %
            ", ".join(found), errors.DUPLICATE_NAME)


@w.Wsgify
@w.require_content("application/json")
def update_provider(req):
    w.authorize(req, _RULE % "update")
    w.require_provider(req)
    data = w.extract_json(req.body, schemas.PROVIDER_PUT_1_14 if (
        microversion.at_least(req, 14)) else schemas.PROVIDER_PUT)
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        other = providers.by_name(conn, data["name"])
        if other is not None and other.id != row.id:
            raise errors.conflict(
                "Conflicting resource provider %s already exists." %
                data["name"], errors.DUPLICATE_NAME)
        parent = _new_parent(conn, req, row, data)
        old = row
        row = providers.update(conn, row, data["name"], parent)
        w.tree_written(req, conn, old, row)
    w.tell_workers(req)
    return w.json_response(req, serialize(req, row),
                           last_modified=w.last_modified([row]))


def _new_parent(conn, req, row, data):
    """The parent ``row`` is to have (a Row or None), Placement's rules
    checked: moving a child only from 1.37, no loops."""
    current = (providers.get(conn, row.parent_uuid)
               if row.parent_uuid else None)
    if "parent_provider_uuid" not in data:
        return current
    wanted = data["parent_provider_uuid"]
    moving = microversion.at_least(req, 37)
    if wanted is None:
        if current is not None and not moving:
            raise _unsaved(row, "un-parenting a provider is not currently "
                                "allowed.")
        return None
    parent = providers.get(conn, wanted)
    if parent is None:
        raise _unsaved(row, "parent provider UUID does not exist.")
    if current is not None and current.id != parent.id and not moving:
        raise _unsaved(row, "re-parenting a provider is not currently "
                            "allowed.")
    if parent.id in providers.subtree_ids(conn, row.id):
        raise _unsaved(row, "creating loop in the provider tree is not "
                            "allowed.")
    return parent


def _unsaved(row, reason):
    return errors.bad_request("Unable to save resource provider %s: %s" % (
        row.uuid, "Object action update failed because: " + reason))


@w.Wsgify
def delete_provider(req):
    w.authorize(req, _RULE % "delete")
    uuid = w.path_item(req, "uuid")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(
            conn, req, "No resource provider with uuid %s found for "
                       "delete" % uuid)
        if providers.has_allocations(conn, row.id):
            raise errors.conflict(
                "Unable to delete resource provider %s: Resource provider "
                "has allocations." % uuid, errors.PROVIDER_IN_USE)
        if providers.has_children(conn, row.id):
            raise errors.conflict(
                "Unable to delete parent resource provider %s: It has "
                "child resource providers." % uuid,
                errors.PROVIDER_CANNOT_DELETE_PARENT)
        providers.delete(conn, row)
        w.tree_written(req, conn, row)
    w.tell_workers(req)
    return w.no_content(req)
