"""The WSGI application: Placement's REST API on Gantt's database.

:func:`make_app` assembles, from the outside in::

    http_proxy_to_wsgi -> request id -> /healthcheck -> CORS (if
    configured) -> authentication (keystonemiddleware or noauth2) ->
    request context -> fault wrapper -> microversion -> router -> handler

as Placement does, with oslo.middleware's pieces and
microversion-parse's middleware.
"""

import dataclasses

from microversion_parse import middleware as mp_middleware
from oslo_log import log as logging
import oslo_middleware
from oslo_middleware import healthcheck
from oslo_policy import policy as oslo_policy
import webob.exc

from gantt.api import auth
from gantt.api import errors
from gantt.api import index_cache
from gantt.api import microversion
from gantt.api import notify
from gantt.api import policies
from gantt.api import routes
from gantt.db import api as db_api
from gantt.nova import compute_nodes

LOG = logging.getLogger(__name__)

#: the environ key under which handlers find the :class:`Services`
ENVIRON = "gantt.api"

CORS_DEFAULTS = dict(
    allow_headers=["X-Auth-Token", "X-Openstack-Request-Id",
                   "X-Identity-Status", "X-Roles", "X-Service-Catalog",
                   "X-User-Id", "X-Tenant-Id", "OpenStack-API-Version"],
    expose_headers=["X-Auth-Token", "X-Openstack-Request-Id",
                    "X-Subject-Token", "X-Service-Token",
                    "OpenStack-API-Version"],
    allow_methods=["GET", "PUT", "POST", "DELETE", "PATCH"])


@dataclasses.dataclass(frozen=True)
class Services:
    """What handlers use: the database, the policy, the workers' ears,
    the provider index kept between requests, Nova's records of its
    compute nodes (None: not read)."""

    conf: object
    db: object
    enforcer: object
    notifier: object
    candidates_index: object
    nova_nodes: object = None


def make_app(conf, db=None, notifier=None, nova_nodes=None):
    """The API as a WSGI callable, configured by ``conf`` (a ConfigOpts
    with Gantt's options registered and parsed).

    :param db: a :class:`gantt.db.api.Database` (else one from
        ``[database]``)
    :param notifier: what tells the workers of writes (else one on the
        RPC transport when ``[api] notify_workers``, or none)
    :param nova_nodes: what reads Nova's records of the compute nodes
        nova-compute makes (:mod:`gantt.nova.compute_nodes`; else the one
        ``[nova] api_database_connection`` configures, or none)
    """
    if db is None:
        db = db_api.Database.from_conf(conf)
    if notifier is None:
        notifier = notify.from_conf(conf)
    if nova_nodes is None:
        nova_nodes = compute_nodes.from_conf(conf)
    services = Services(conf, db, policies.enforcer(conf), notifier,
                        index_cache.IndexCache(), nova_nodes)
    app = microversion_middleware(routes.router_app())
    app = _FaultWrapper(app)
    app = _Attach(app, services)
    app = auth.Context(app)
    if conf.api.auth_strategy == "noauth2":
        app = auth.NoAuth(app)
    else:
        app = auth.KeystoneAuth(app, conf)
    oslo_middleware.cors.set_defaults(**CORS_DEFAULTS)
    cors = oslo_middleware.CORS(app, conf)
    if conf.cors.allowed_origin:
        app = cors
    app = _Healthcheck(app, healthcheck.Healthcheck(None, conf))
    app = _JsonByDefault(app)
    app = oslo_middleware.RequestId(app)
    return oslo_middleware.HTTPProxyToWSGI(app, conf)


def microversion_middleware(app):
    return mp_middleware.MicroversionMiddleware(
        app, microversion.SERVICE_TYPE, microversion.VERSIONS,
        json_error_formatter=errors.json_error_formatter)


class _Attach:
    """Put the :class:`Services` and the policy in the environ."""

    def __init__(self, application, services):
        self.application = application
        self.services = services

    def __call__(self, environ, start_response):
        environ[ENVIRON] = self.services
        environ["gantt.policy"] = _Policy(self.services.enforcer)
        return self.application(environ, start_response)


class _Policy:
    def __init__(self, enforcer):
        self.enforcer = enforcer

    def authorize(self, rule, target, ctx):
        """403 (Placement's words) unless the caller may: a refused rule
        and a token of the wrong scope alike."""
        try:
            self.enforcer.authorize(rule, target, ctx, do_raise=True,
                                    action=rule)
        except (oslo_policy.PolicyNotAuthorized,
                oslo_policy.InvalidScope):
            raise errors.error(
                webob.exc.HTTPForbidden,
                "Policy does not allow %s to be performed." % rule) \
                from None


class _FaultWrapper:
    """An unexpected exception: logged, answered 500 in Placement's body
    (never a traceback to the caller)."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            return self.application(environ, start_response)
        except Exception as exc:
            LOG.exception("Unexpected error in the API: %s", exc)
            fault = errors.error(webob.exc.HTTPInternalServerError,
                                 str(exc))
            return fault(environ, start_response)


class _Healthcheck:
    """``/healthcheck``: oslo.middleware's, before authentication."""

    def __init__(self, application, check):
        self.application = application
        self.check = check

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == "/healthcheck":
            return self.check(environ, start_response)
        return self.application(environ, start_response)


class _JsonByDefault:
    """No ``Accept`` (or ``*/*``): answer JSON, errors included."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        if environ.get("HTTP_ACCEPT", "*/*") == "*/*":
            environ["HTTP_ACCEPT"] = "application/json"
        return self.application(environ, start_response)
