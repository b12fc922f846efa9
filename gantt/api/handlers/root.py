"""``GET /``: the version document."""

from gantt.api import microversion
from gantt.api import wsgi_util


@wsgi_util.Wsgify
def home(req):
    version = {
        "id": "v%s" % microversion.MIN,
        "max_version": microversion.MAX,
        "min_version": microversion.MIN,
        "status": "CURRENT",
        # relative: the API never needs to know the address it is served at
        "links": [{"rel": "self", "href": ""}],
    }
    return wsgi_util.json_response(req, {"versions": [version]})
