"""URL routing: each path of Placement's API to its handler per method.

A path matched with a method it does not serve answers 405 with an
``Allow`` header; no path matched answers 404. A ``NotFound`` from below
becomes a 404, a refused policy check a 403, both with Placement's body.
"""

import re

from oslo_policy import policy as oslo_policy
import webob.exc

from gantt.api import errors


class Router:
    """A WSGI app dispatching on ``{path template: {method: handler}}``."""

    def __init__(self, routes):
        self._routes = [(_compile(template), methods)
                        for template, methods in routes.items()]

    def __call__(self, environ, start_response):
        try:
            return self._dispatch(environ, start_response)
        except oslo_policy.PolicyNotAuthorized as exc:
            return _error(webob.exc.HTTPForbidden, str(exc), environ,
                          start_response)

    def _dispatch(self, environ, start_response):
        length = environ.get("CONTENT_LENGTH")
        try:
            if length and int(length) > 0 and not environ.get(
                    "CONTENT_TYPE"):
                return _error(webob.exc.HTTPBadRequest,
                              "content-type header required when "
                              "content-length > 0", environ, start_response)
        except ValueError:
            return _error(webob.exc.HTTPBadRequest,
                          "content-length header must be an integer",
                          environ, start_response)
        path = environ.get("PATH_INFO", "")
        for pattern, methods in self._routes:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            handler = methods.get(environ["REQUEST_METHOD"])
            if handler is None:
                return _error(
                    webob.exc.HTTPMethodNotAllowed,
                    "The method specified is not allowed for this resource.",
                    environ, start_response,
                    headers={"allow": ", ".join(methods)})
            environ["wsgiorg.routing_args"] = ((), match.groupdict())
            return handler(environ, start_response)
        return _error(webob.exc.HTTPNotFound,
                      "The resource could not be found.", environ,
                      start_response)


def _compile(template):
    return re.compile(re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template))


def _error(cls, detail, environ, start_response, headers=None):
    exc = errors.error(cls, detail, headers=headers)
    return exc(environ, start_response)
