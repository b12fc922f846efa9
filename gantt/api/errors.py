"""Placement's error codes and its JSON error body.

Every error the API answers is a webob HTTP exception with this module's
formatter: ``{"errors": [{"status", "title", "detail", "code",
"request_id"}]}``, the ``code`` (from microversion 1.23) being one of
Placement's below. A handler raises :func:`error`; the code travels in
the exception's ``comment`` to :class:`gantt.api.wsgi_util.Wsgify`, which
puts it in the environ the formatter reads.
"""

from oslo_middleware import request_id
import webob.exc

from gantt.api import microversion

ENV_ERROR_CODE = "placement.error_code"

DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = (
    "placement.resource_provider.cannot_delete_parent")
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


def json_error_formatter(body, status, title, environ):
    """webob's ``json_formatter``: the API-WG error document."""
    status_code = int(status.split(None, 1)[0])
    error = {"status": status_code, "title": title,
             "detail": webob.exc.strip_tags(body)}
    wanted = environ.get(microversion.ENVIRON)
    if wanted is not None and wanted.matches((1, 23)):
        error["code"] = environ.get(ENV_ERROR_CODE, DEFAULT)
    if request_id.ENV_REQUEST_ID in environ:
        error["request_id"] = environ[request_id.ENV_REQUEST_ID]
    if status_code == 406 and wanted is None:
        # the microversion asked for could not be served: say which can
        error["max_version"] = microversion.MAX
        error["min_version"] = microversion.MIN
    return {"errors": [error]}


def error(cls, detail, code=None, **kwargs):
    """A ``cls`` (webob.exc.HTTP...) exception with Placement's body.

    :param code: one of this module's codes (DEFAULT if None)
    """
    return cls(detail, comment=code, json_formatter=json_error_formatter,
               **kwargs)


def bad_request(detail, code=None):
    return error(webob.exc.HTTPBadRequest, detail, code)


def not_found(detail, code=None):
    return error(webob.exc.HTTPNotFound, detail, code)


def conflict(detail, code=None):
    return error(webob.exc.HTTPConflict, detail, code)
