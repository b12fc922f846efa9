"""Placement's URLs and the handler of each method."""

from gantt.api import router
from gantt.api.handlers import root


def declarations():
    """``{path template: {method: handler}}``; a resource not yet served
    is absent (404), as in a Placement older than the resource."""
    return {
        "/": {"GET": root.home},
        "": {"GET": root.home},
    }


def router_app():
    return router.Router(declarations())


