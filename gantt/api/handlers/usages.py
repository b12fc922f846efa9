"""``/resource_providers/{uuid}/usages`` and ``/usages`` (from 1.9)."""

from gantt.api import microversion
from gantt.api import schemas
from gantt.api import wsgi_util as w
from gantt.db import usages


@w.Wsgify
@w.check_accept("application/json")
def provider_usages(req):
    w.authorize(req, "placement:resource_providers:usages")
    uuid = w.path_item(req, "uuid")
    with w.services(req).db.begin() as conn:
        row = w.provider_or_404(
            conn, req, "No resource provider with uuid %s found: No "
                       "resource provider with uuid %s found" % (uuid, uuid))
        used = usages.of_provider(conn, row.id)
    return w.json_response(req, {
        "resource_provider_generation": row.generation, "usages": used})


@w.Wsgify
@w.since(9)
@w.check_accept("application/json")
def total_usages(req):
    project_id = req.GET.get("project_id")
    user_id = req.GET.get("user_id")
    w.authorize(req, "placement:usages", {"project_id": project_id})
    by_type = microversion.at_least(req, 38)
    w.validate_query(req, schemas.USAGES_QUERY_1_38 if by_type
                     else schemas.USAGES_QUERY)
    with w.services(req).db.begin() as conn:
        if by_type:
            found = usages.by_consumer_type(
                conn, project_id, user_id,
                req.GET.get("consumer_type"))
        else:
            found = usages.of_project(conn, project_id, user_id)
    return w.json_response(req, {"usages": found})
