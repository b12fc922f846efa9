"""``/allocations/{consumer_uuid}``, ``POST /allocations`` (1.13) and
``/resource_providers/{uuid}/allocations``.

Writes are :func:`gantt.db.consumers.write`: the scheduler's own claim
(one transaction, every provider's generation compared and swapped), so
a REST write and an RPC claim race on the same rows. The providers'
new usage is then cast to the workers (:mod:`gantt.api.notify`). A lost
provider race is retried (as Placement retries it); a consumer that
changed under the call is 409 ``placement.concurrent_update``.
"""

import collections
import uuid as uuid_mod

from oslo_db import exception as db_exc
from oslo_utils import uuidutils

from gantt import exception
from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import consumers
from gantt.db import names
from gantt.db import providers
from gantt.db.models import ALLOC
from gantt.db.models import RP

_RULE = "placement:allocations:%s"
#: attempts of a write that lost a race on a provider's generation
ATTEMPTS = 10


# -- reading ------------------------------------------------------------------

def _held(conn, consumer_uuid):
    """``{provider uuid: (generation, {class: used}, created_at)}``."""
    held = {}
    for uuid, generation, rc, used, created in conn.execute(
            ALLOC.select().with_only_columns(
                RP.c.uuid, RP.c.generation, ALLOC.c.resource_class,
                ALLOC.c.used, ALLOC.c.created_at)
            .join(RP, RP.c.id == ALLOC.c.resource_provider_id)
            .where(ALLOC.c.consumer_uuid == consumer_uuid)):
        entry = held.setdefault(uuid, (generation, {}, []))
        entry[1][rc] = int(used)
        entry[2].append(created)
    return held


@w.Wsgify
@w.check_accept("application/json")
def list_for_consumer(req):
    w.authorize(req, _RULE % "list")
    consumer_uuid = w.path_item(req, "consumer_uuid")
    with w.services(req).db.begin() as conn:
        held = _held(conn, consumer_uuid)
        owner = consumers.stored(conn, consumer_uuid)
    body = {"allocations": {
        uuid: {"generation": gen, "resources": used}
        for uuid, (gen, used, _) in held.items()}}
    if held and microversion.at_least(req, 12):
        body["project_id"] = owner.project_id
        body["user_id"] = owner.user_id
        if microversion.at_least(req, 28):
            body["consumer_generation"] = owner.generation
        if microversion.at_least(req, 38):
            body["consumer_type"] = owner.consumer_type or "unknown"
    return w.json_response(req, body, last_modified=_latest(held))


def _latest(held):
    stamps = [_Stamp(c) for _, _, created in held.values() for c in created]
    return w.last_modified(stamps)


class _Stamp:
    def __init__(self, created_at):
        self.created_at = created_at
        self.updated_at = None


@w.Wsgify
@w.check_accept("application/json")
def list_for_provider(req):
    w.authorize(req, "placement:resource_providers:allocations:list")
    uuid = w.path_item(req, "uuid")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(
            conn, req, "Resource provider '%s' not found: No resource "
                       "provider with uuid %s found" % (uuid, uuid))
        rows = conn.execute(
            ALLOC.select().with_only_columns(
                ALLOC.c.consumer_uuid, ALLOC.c.resource_class,
                ALLOC.c.used, ALLOC.c.created_at)
            .where(ALLOC.c.resource_provider_id == row.id)).all()
        generations = {c: consumers.stored(conn, c).generation
                       for c in {r.consumer_uuid for r in rows}}
    by_consumer = collections.defaultdict(dict)
    for r in rows:
        by_consumer[r.consumer_uuid][r.resource_class] = int(r.used)
    allocs = {}
    for consumer, used in by_consumer.items():
        allocs[consumer] = {"resources": used}
        if microversion.at_least(req, 28):
            allocs[consumer]["consumer_generation"] = generations[consumer]
    return w.json_response(req, {
        "allocations": allocs,
        "resource_provider_generation": row.generation},
        last_modified=w.last_modified([_Stamp(r.created_at)
                                       for r in rows]))


# -- writing ------------------------------------------------------------------

@w.Wsgify
@w.require_content("application/json")
def set_for_consumer(req):
    w.authorize(req, _RULE % "update")
    consumer_uuid = w.path_item(req, "consumer_uuid")
    if not uuidutils.is_uuid_like(consumer_uuid):
        raise errors.bad_request("Malformed consumer_uuid: %s" %
                                 consumer_uuid)
    consumer_uuid = str(uuid_mod.UUID(consumer_uuid))
    data = w.extract_json(req.body, schemas.for_version(
        schemas.ALLOCATIONS_PUT, req))
    if not microversion.at_least(req, 12):
        data["allocations"] = {
            a["resource_provider"]["uuid"]: {"resources": a["resources"]}
            for a in data["allocations"]}
    _write(req, {consumer_uuid: data}, "Unable to allocate inventory for "
                                       "consumer %s: " % consumer_uuid)
    return w.no_content(req)


@w.Wsgify
@w.since(13)
@w.require_content("application/json")
def set_many(req):
    w.authorize(req, _RULE % "manage")
    data = w.extract_json(req.body, schemas.for_version(
        schemas.ALLOCATIONS_POST, req))
    _write(req, data, "Unable to allocate inventory ")
    return w.no_content(req)


def _write(req, data, not_found_prefix):
    services = w.services(req)
    writes = [to_write(req, uuid, body) for uuid, body in data.items()]
    for attempt in range(ATTEMPTS):
        try:
            with services.db.begin() as conn:
                check_names(conn, writes, not_found_prefix)
                seen = checked_consumers(req, conn, data)
                states = consumers.write(conn, writes, seen)
            break
        except exception.ConsumerConflict as exc:
            raise errors.conflict(
                "consumer generation conflict - %s" % exc,
                errors.CONCURRENT_UPDATE) from None
        except (exception.ClaimConflict, db_exc.DBDeadlock) as exc:
            if attempt + 1 == ATTEMPTS:
                raise errors.conflict(
                    "Inventory and/or allocations changed while attempting "
                    "to allocate: %s" % exc, errors.CONCURRENT_UPDATE) \
                    from None
        except exception.CapacityExceeded as exc:
            raise errors.conflict("Unable to allocate inventory: %s" %
                                  placement_reason(exc)) from None
    services.notifier.usage_changed(list(states.values()))


def to_write(req, consumer_uuid, body):
    return consumers.Write(
        consumer_uuid,
        {rp: dict(a["resources"]) for rp, a in body["allocations"].items()},
        body.get("project_id"), body.get("user_id"),
        body.get("consumer_type"))


def check_names(conn, writes, prefix):
    """400 for an unknown provider or class (nothing written)."""
    for wr in writes:
        for rp_uuid, resources in wr.allocations.items():
            if providers.get(conn, rp_uuid) is None:
                raise errors.bad_request(
                    "Allocation for resource provider '%s' that does not "
                    "exist." % rp_uuid)
            unknown = set(resources) - names.CLASSES.known(conn, resources)
            if unknown:
                raise errors.bad_request(
                    "%sNo such resource class %s." % (
                        prefix, sorted(unknown)[0]))


def checked_consumers(req, conn, data):
    """Each consumer's stored row; from 1.28 its generation must be the
    one the body names (null: a new consumer)."""
    seen = {}
    for consumer_uuid, body in data.items():
        found = consumers.stored(conn, consumer_uuid)
        if microversion.at_least(req, 28):
            named = body.get("consumer_generation")
            if found.generation != named:
                raise errors.conflict(
                    "consumer generation conflict - expected %s but got "
                    "%s" % ("null" if found.generation is None
                            else found.generation,
                            "null" if named is None else named),
                    errors.CONCURRENT_UPDATE)
        seen[consumer_uuid] = found
    return seen


def placement_reason(exc):
    """A refused claim in Placement's words."""
    rc, rp = exc.kwargs["resource_class"], exc.kwargs["provider"]
    reason = exc.kwargs["reason"]
    if reason.startswith("no inventory"):
        return ("Inventory for '%s' on resource provider '%s' invalid." %
                (rc, rp))
    what = ("exceed the capacity" if "capacity" in reason
            else "violate inventory constraints")
    return ("Unable to create allocation for '%s' on resource provider "
            "'%s'. The requested amount would %s." % (rc, rp, what))


@w.Wsgify
def delete_for_consumer(req):
    w.authorize(req, _RULE % "delete")
    consumer_uuid = w.path_item(req, "consumer_uuid")
    with w.services(req).db.begin() as conn:
        if not consumers.holds(conn, consumer_uuid):
            raise errors.not_found("No allocations for consumer '%s'" %
                                   consumer_uuid)
        states = consumers.release(conn, consumer_uuid)
    w.services(req).notifier.usage_changed(list(states.values()))
    return w.no_content(req)
