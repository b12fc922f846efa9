"""``POST /reshaper`` (from 1.30): move inventories and the allocations
against them between providers of a tree in one transaction.

The steps, in one transaction: each provider's generation is compared
and its inventories widened to the union of old and new (so that both
old and new allocations fit), the allocations are written by the claim
code (:func:`gantt.db.consumers.write`), then the inventories are cut to
what was asked (409 ``placement.inventory.inuse`` if a removed class
still holds allocations).
"""

from oslo_db import exception as db_exc

from gantt import exception
from gantt.api import errors
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.api.handlers import allocations as alloc_handlers
from gantt.api.handlers import inventories as inv_handlers
from gantt.db import consumers
from gantt.db import providers


@w.Wsgify
@w.since(30)
@w.require_content("application/json")
def reshape(req):
    w.authorize(req, "placement:reshaper:reshape")
    data = w.extract_json(req.body, schemas.for_version(schemas.RESHAPER,
                                                        req))
    writes = [alloc_handlers.to_write(req, uuid, body)
              for uuid, body in data["allocations"].items()]
    services = w.services(req)
    try:
        with services.db.begin() as conn:
            wanted = _widen(req, conn, data["inventories"])
            alloc_handlers.check_names(conn, writes, "malformed reshaper "
                                                      "data: ")
            seen = alloc_handlers.checked_consumers(req, conn,
                                                     data["allocations"])
            # three steps, one generation each, as Placement counts them
            states = consumers.write(conn, writes, seen)
            for row, inventories in wanted:
                providers.write_inventories(
                    conn, providers.get(conn, row.uuid), inventories, None,
                    replace=True)
            w.tree_written(req, conn, *(row for row, _inv in wanted))
    except (providers.Conflict, exception.ClaimConflict,
            db_exc.DBDeadlock) as exc:
        raise errors.conflict("update conflict: %s" % exc,
                              errors.CONCURRENT_UPDATE) from None
    except providers.InventoryInUse as exc:
        raise errors.conflict("update conflict: %s" % exc,
                              errors.INVENTORY_INUSE) from None
    except exception.CapacityExceeded as exc:
        raise errors.conflict("Unable to allocate inventory: %s" %
                              alloc_handlers.placement_reason(exc)) \
            from None
    services.notifier.usage_changed(list(states.values()))
    w.tell_workers(req)
    return w.no_content(req)


def _widen(req, conn, inventories):
    """Check each provider's generation and give it the union of its old
    and new inventories; ``[(row, new inventories)]``."""
    wanted = []
    for uuid, body in inventories.items():
        row = providers.get(conn, uuid)
        if row is None:
            raise errors.bad_request(
                "Resource provider %s in inventories not found: No resource "
                "provider with uuid %s found" % (uuid, uuid),
                errors.RESOURCE_PROVIDER_NOT_FOUND)
        given = body["resource_provider_generation"]
        if given != row.generation:
            raise errors.conflict(
                "resource provider generation conflict for provider %s: "
                "actual: %s, given: %s" % (uuid, row.generation, given),
                errors.CONCURRENT_UPDATE)
        new = {rc: inv_handlers.checked(req, row, rc, fields)
               for rc, fields in body["inventories"].items()}
        inv_handlers.refuse_unknown(conn, row, new)
        providers.write_inventories(conn, row, new, given, replace=False)
        wanted.append((row, new))
    return wanted
