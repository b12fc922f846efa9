"""``/resource_providers/{uuid}/aggregates`` (from 1.1; with the
provider's generation, compared and moved, from 1.19)."""

from gantt.api import errors
from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import providers

_RULE = "placement:resource_providers:aggregates:%s"


def _send(req, conn, uuid, given=None):
    """The provider's aggregates (in the order given, after a PUT)."""
    row = providers.get(conn, uuid)
    body = {"aggregates": list(given) if given is not None else sorted(
        providers.aggregates_of(conn, row.id))}
    if microversion.at_least(req, 19):
        body["resource_provider_generation"] = row.generation
    return w.json_response(req, body)


@w.Wsgify
@w.check_accept("application/json")
@w.since(1)
def get_aggregates(req):
    w.authorize(req, _RULE % "list")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        return _send(req, conn, row.uuid)


def _changed(detail=None):
    return errors.conflict(
        detail or "Resource provider's generation already changed. Please "
                  "update the generation and try again.",
        errors.CONCURRENT_UPDATE)


@w.Wsgify
@w.require_content("application/json")
@w.since(1)
def set_aggregates(req):
    w.authorize(req, _RULE % "update")
    with_generation = microversion.at_least(req, 19)
    w.require_provider(req)
    data = w.extract_json(req.body, schemas.AGGREGATES_1_19 if
                          with_generation else schemas.AGGREGATES_1_1)
    wanted = data["aggregates"] if with_generation else data
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(conn, req)
        if with_generation and (
                row.generation != data["resource_provider_generation"]):
            raise _changed()
        try:
            providers.set_aggregates(conn, row, wanted,
                                     generation=with_generation)
        except providers.Conflict:
            raise _changed("Update conflict: Another thread concurrently "
                           "updated the data. Please retry your update") \
                from None
        w.tree_written(req, conn, row)
        resp = _send(req, conn, row.uuid, wanted)
    # before 1.19 the generation stays: the stamp may not see a swap
    w.services(req).candidates_index.forget()
    w.tell_workers(req)
    return resp
