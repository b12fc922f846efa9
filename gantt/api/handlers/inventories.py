"""``/resource_providers/{uuid}/inventories[/{resource_class}]``.

Every write compares and swaps the provider's generation (the body's
``resource_provider_generation``, or the stored one for ``POST`` and
``DELETE``), the one claims compare: a change racing a claim on the
provider fails one of the two, never both half-done.
"""


from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import names
from gantt.db import providers

_RULE = "placement:resource_providers:inventories:%s"
FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size",
          "allocation_ratio")


def _serialize(inv):
    return {f: getattr(inv, f) for f in FIELDS} if not isinstance(
        inv, dict) else {f: inv[f] for f in FIELDS}


def _send_all(req, conn, uuid):
    row = providers.get(conn, uuid)
    invs = providers.inventories_of(conn, row.id)
    return w.json_response(req, {
        "resource_provider_generation": row.generation,
        "inventories": {rc: _serialize(i) for rc, i in invs.items()}})


def _send_one(req, conn, uuid, rc, status=200):
    row = providers.get(conn, uuid)
    inv = providers.inventories_of(conn, row.id)[rc]
    return w.json_response(req, dict(
        _serialize(inv), resource_provider_generation=row.generation),
        status=status)


def checked(req, row, rc, fields, verb="update"):
    """``fields`` with defaults, refused (400) when its capacity is not
    positive (zero allowed from 1.26) or min/max are inverted."""
    inv = dict(providers.INVENTORY_DEFAULTS, **fields)
    inv.pop("resource_provider_generation", None)
    capacity = (inv["total"] - inv["reserved"]) * inv["allocation_ratio"]
    can_be_total = microversion.at_least(req, 26)
    if capacity < 0 or (capacity == 0 and not can_be_total):
        raise errors.bad_request(
            "Unable to %s inventory for resource provider %s: Invalid "
            "inventory for '%s' on resource provider '%s'. The reserved "
            "value is greater than %s." % (
                verb, row.uuid, rc, row.uuid,
                "total" if can_be_total else "or equal to total"))
    if inv["min_unit"] > inv["max_unit"]:
        raise errors.bad_request(
            "Bad inventory %s for resource provider %s: min_unit must be "
            "less than or equal to max_unit" % (rc, row.uuid))
    return inv


def refuse_unknown(conn, row, classes):
    unknown = set(classes) - names.CLASSES.known(conn, classes)
    if unknown:
        raise errors.bad_request(
            "Unknown resource class in inventory for resource provider "
            "%s: No such resource class %s." % (row.uuid,
                                                sorted(unknown)[0]))


def _lost_race(detail="resource provider generation conflict"):
    return errors.conflict(detail, errors.CONCURRENT_UPDATE)


def _check_generation(row, data):
    if data["resource_provider_generation"] != row.generation:
        raise _lost_race()


@w.Wsgify
@w.check_accept("application/json")
def get_inventories(req):
    w.authorize(req, _RULE % "list")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        return _send_all(req, conn, row.uuid)


@w.Wsgify
@w.check_accept("application/json")
def get_inventory(req):
    w.authorize(req, _RULE % "show")
    rc = w.path_item(req, "resource_class")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        if rc not in providers.inventories_of(conn, row.id):
            raise errors.not_found("No inventory of class %s for %s" % (
                rc, row.uuid))
        return _send_one(req, conn, row.uuid, rc)


@w.Wsgify
@w.require_content("application/json")
def create_inventory(req):
    w.authorize(req, _RULE % "create")
    w.require_provider(req)
    data = w.extract_json(req.body, schemas.INVENTORY_POST)
    rc = data.pop("resource_class")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        inv = checked(req, row, rc, data, verb="create")
        if rc not in names.CLASSES.known(conn, [rc]):
            raise errors.bad_request(
                "Unable to create inventory for resource provider %s: No "
                "such resource class %s." % (row.uuid, rc))
        if rc in providers.inventories_of(conn, row.id):
            raise _lost_race("Update conflict: Another thread concurrently "
                             "updated the data. Please retry your update")
        _write(conn, row, {rc: inv}, None, replace=False)
        w.tree_written(req, conn, row)
        req.response.location = "%s/inventories/%s" % (
            w.provider_url(req, row.uuid), rc)
        resp = _send_one(req, conn, row.uuid, rc, status=201)
    w.tell_workers(req)
    return resp


def _write(conn, row, wanted, seen, replace):
    try:
        providers.write_inventories(conn, row, wanted, seen, replace)
    except providers.Conflict:
        raise _lost_race() from None
    except providers.InventoryInUse as exc:
        raise errors.conflict("update conflict: %s" % exc,
                              errors.INVENTORY_INUSE) from None


@w.Wsgify
@w.require_content("application/json")
def set_inventories(req):
    w.authorize(req, _RULE % "update")
    w.require_provider(req)
    data = w.extract_json(req.body, schemas.INVENTORIES)
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        _check_generation(row, data)
        wanted = {rc: checked(req, row, rc, fields)
                  for rc, fields in data["inventories"].items()}
        refuse_unknown(conn, row, wanted)
        _write(conn, row, wanted, row.generation, replace=True)
        w.tree_written(req, conn, row)
        resp = _send_all(req, conn, row.uuid)
    w.tell_workers(req)
    return resp


@w.Wsgify
@w.require_content("application/json")
def update_inventory(req):
    w.authorize(req, _RULE % "update")
    rc = w.path_item(req, "resource_class")
    w.require_provider(req)
    data = w.extract_json(req.body, schemas.INVENTORY)
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        _check_generation(row, data)
        inv = checked(req, row, rc, data)
        if rc not in providers.inventories_of(conn, row.id):
            raise errors.bad_request(
                "No inventory record with resource class for resource "
                "provider %s: No inventory of class %s found." % (
                    row.uuid, rc))
        _write(conn, row, {rc: inv}, row.generation, replace=False)
        w.tree_written(req, conn, row)
        resp = _send_one(req, conn, row.uuid, rc)
    w.tell_workers(req)
    return resp


@w.Wsgify
def delete_inventory(req):
    w.authorize(req, _RULE % "delete")
    rc = w.path_item(req, "resource_class")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        if rc not in providers.inventories_of(conn, row.id):
            raise errors.not_found(
                "No inventory of class %s found for delete: No inventory "
                "of class %s found." % (rc, rc))
        try:
            providers.delete_inventory(conn, row, rc)
        except (providers.Conflict, providers.InventoryInUse) as exc:
            raise errors.conflict(
                "Unable to delete inventory of class %s: %s" % (rc, exc),
                errors.CONCURRENT_UPDATE) from None
        w.tree_written(req, conn, row)
    w.tell_workers(req)
    return w.no_content(req)


@w.Wsgify
@w.since(5, status=405)
def delete_inventories(req):
    w.authorize(req, _RULE % "delete")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        try:
            providers.write_inventories(conn, row, {}, None, replace=True)
        except providers.Conflict:
            raise _lost_race(
                "Unable to delete inventory for resource provider %s "
                "because the inventory was updated by another process. "
                "Please retry your request." % row.uuid) from None
        except providers.InventoryInUse as exc:
            raise errors.conflict(str(exc), errors.INVENTORY_INUSE) from None
        w.tree_written(req, conn, row)
    w.tell_workers(req)
    return w.no_content(req)


