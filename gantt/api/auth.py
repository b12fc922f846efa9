"""Who is calling: keystonemiddleware, or Placement's ``noauth2``; then
an oslo.context RequestContext for the handlers.

``GET /`` (the version document) needs no authentication in either mode,
as in Placement.
"""

from keystonemiddleware import auth_token
from oslo_context import context as oslo_context
from oslo_middleware import request_id
import webob.dec
import webob.exc

_ROOT = ("/", "")


class NoAuth:
    """``noauth2``: ``X-Auth-Token: user[:project]`` names the caller.

    The user ``admin`` has the ``admin`` role unless ``X-Roles`` says
    otherwise (Placement's semantics, which its tests rely on).
    """

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        if req.path_info in _ROOT:
            return self.application
        token = req.headers.get("X-Auth-Token")
        if token is None:
            return webob.exc.HTTPUnauthorized()
        user_id, _, project_id = token.partition(":")
        if "X-Roles" in req.headers:
            roles = req.headers["X-Roles"].split(",")
        else:
            roles = ["admin"] if user_id == "admin" else []
        req.headers["X-User-Id"] = user_id
        if not req.headers.get("OpenStack-System-Scope"):
            req.headers["X-Tenant-Id"] = project_id or user_id
        req.headers["X-Roles"] = ",".join(roles)
        return self.application


class KeystoneAuth(auth_token.AuthProtocol):
    """keystonemiddleware's auth_token, letting ``GET /`` through."""

    def __init__(self, application, conf):
        self._unchecked = application
        super().__init__(application, {"oslo_config_config": conf})

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") in _ROOT:
            return self._unchecked(environ, start_response)
        return super().__call__(environ, start_response)


class Context:
    """Build the request's RequestContext from the identity headers."""

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        ctx = oslo_context.RequestContext.from_environ(
            req.environ,
            request_id=req.environ.get(request_id.ENV_REQUEST_ID))
        if ctx.user_id is None and req.path_info not in _ROOT:
            return webob.exc.HTTPUnauthorized()
        req.environ["placement.context"] = ctx
        return self.application
