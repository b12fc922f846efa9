"""What every handler shares: the wsgify wrapper, JSON in and out,
content negotiation, query-string checks, Last-Modified."""

import functools

import jsonschema
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob.dec
import webob.exc

from gantt.api import errors
from gantt.api import microversion

_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("uuid")
def _uuid_like(value):
    # Placement's: dashes optional, any case (oslo.utils' rule)
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


class Wsgify(webob.dec.wsgify):
    """webob's wsgify, giving every HTTP error Placement's JSON body and
    moving the error code (the exception's ``comment``) to the environ."""

    def call_func(self, req, *args, **kwargs):
        try:
            return super().call_func(req, *args, **kwargs)
        except webob.exc.HTTPException as exc:
            exc.json_formatter = errors.json_error_formatter
            if exc.comment:
                req.environ[errors.ENV_ERROR_CODE] = exc.comment
                exc.comment = None
            raise


def path_item(req, name):
    """A named part of the URL path (``{uuid}``...)."""
    return req.environ["wsgiorg.routing_args"][1].get(name)


def context(req):
    return req.environ["placement.context"]


def authorize(req, rule, target=None):
    """Check ``rule`` of the policy for the request's caller (403)."""
    ctx = context(req)
    target = target if target is not None else {
        "project_id": ctx.project_id, "user_id": ctx.user_id}
    req.environ["gantt.policy"].authorize(rule, target, ctx)


def json_response(req, data, status=200, last_modified=None):
    """``req.response`` with ``data`` as its JSON body; from 1.15 with
    ``Cache-Control: no-cache`` and a ``Last-Modified``."""
    return json_text_response(req, jsonutils.dump_as_bytes(data), status,
                              last_modified)


def json_text_response(req, body, status=200, last_modified=None):
    """:func:`json_response` of a body already encoded (bytes)."""
    resp = req.response
    resp.status = status
    resp.body = body
    resp.content_type = "application/json"
    resp.charset = None
    if microversion.at_least(req, 15):
        resp.cache_control = "no-cache"
        resp.last_modified = last_modified or timeutils.utcnow(
            with_timezone=True)
    return resp


def no_content(req):
    resp = req.response
    resp.status = 204
    resp.content_type = None
    return resp


def last_modified(rows, field_pairs=("updated_at", "created_at")):
    """The latest of each row's ``updated_at`` (else ``created_at``),
    timezone-aware; now when there is none."""
    latest = None
    for row in rows:
        when = getattr(row, field_pairs[0], None) or getattr(
            row, field_pairs[1], None)
        if when is not None:
            when = when.replace(tzinfo=timeutils.utcnow(
                with_timezone=True).tzinfo)
            latest = when if latest is None else max(latest, when)
    return latest or timeutils.utcnow(with_timezone=True)


def check_accept(*types):
    """406 unless the request accepts one of ``types`` (or says
    nothing)."""
    def decorator(handler):
        @functools.wraps(handler)
        def checked(req):
            if req.accept and not req.accept.acceptable_offers(types):
                raise errors.error(webob.exc.HTTPNotAcceptable,
                                   "Only %s is provided" % ", ".join(types))
            return handler(req)
        return checked
    return decorator


def require_content(content_type):
    """415 unless the request body is of ``content_type``."""
    def decorator(handler):
        @functools.wraps(handler)
        def checked(req):
            if req.content_type != content_type:
                raise errors.error(
                    webob.exc.HTTPUnsupportedMediaType,
                    "The media type %s is not supported, use %s" % (
                        req.content_type or "None", content_type))
            return handler(req)
        return checked
    return decorator


def extract_json(body, schema):
    """The request body, parsed and checked against ``schema`` (400)."""
    try:
        data = jsonutils.loads(body)
    except ValueError as exc:
        raise errors.bad_request("Malformed JSON: %s" % exc) from None
    try:
        _validator(schema).validate(data)
    except jsonschema.ValidationError as exc:
        raise errors.bad_request(
            "JSON does not validate: %s" % exc) from None
    return data


_VALIDATORS = {}


def _validator(schema):
    """A validator of ``schema`` (one of :mod:`gantt.api.schemas`'
    constants), built once: ``jsonschema.validate`` checks the schema
    itself on every call, which cost half of a ``PUT /allocations``."""
    found = _VALIDATORS.get(id(schema))
    if found is None or found[0] is not schema:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = _VALIDATORS[id(schema)] = (
            schema, cls(schema, format_checker=_FORMATS))
    return found[1]


def validate_query(req, schema):
    """The query string, each key once, checked against ``schema``."""
    try:
        _validator(schema).validate(dict(req.GET))
    except (jsonschema.ValidationError, UnicodeDecodeError) as exc:
        raise errors.bad_request(
            "Invalid query string parameters: %s" % exc) from None


def provider_url(req, uuid):
    return "%s/resource_providers/%s" % (req.script_name, uuid)


def since(minor, status=404):
    """Serve the handler from microversion 1.``minor``; before it, answer
    as if the resource did not exist (Placement's ``version_handler``)."""
    def decorator(handler):
        @functools.wraps(handler)
        def checked(req):
            if not microversion.at_least(req, minor):
                raise errors.error(webob.exc.status_map[status],
                                   "The resource could not be found.")
            return handler(req)
        return checked
    return decorator


def services(req):
    return req.environ["gantt.api"]


def provider_or_404(conn, req, detail=None):
    """The provider named in the path (a ``gantt.db.providers.Row``)."""
    from gantt.db import providers
    uuid = path_item(req, "uuid")
    row = providers.get(conn, uuid)
    if row is None:
        raise errors.not_found(
            detail or "No resource provider with uuid %s found" % uuid)
    return row


def require_provider(req):
    """404 unless the provider named in the path exists (checked before
    the body is read, as Placement does)."""
    with services(req).db.begin() as conn:
        provider_or_404(conn, req)


_CHANGED_ROOTS = "gantt.changed_roots"


def tree_written(req, conn, *rows):
    """Inside a write's transaction: the trees of ``rows``
    (``gantt.db.providers.Row``) changed. Their roots' host rows follow
    (:func:`gantt.db.api_hosts.refresh`), and the roots are kept for
    :func:`tell_workers`."""
    from gantt.db import api_hosts
    now = timeutils.utcnow()
    found = services(req)
    nova = api_hosts.NovaSide.from_conf(found.conf, found.nova_nodes)
    roots = req.environ.setdefault(_CHANGED_ROOTS, set())
    for row in rows:
        if row.root_uuid not in roots:
            roots.add(row.root_uuid)
            api_hosts.refresh(conn, row.root_id, now, nova)


def tell_workers(req):
    """After the commit: the workers re-read the trees written."""
    services(req).notifier.providers_changed(
        sorted(req.environ.get(_CHANGED_ROOTS, ())))
