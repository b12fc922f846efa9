"""Microversions 1.0 to 1.39, Placement's, parsed by microversion-parse.

``microversion_parse.middleware.MicroversionMiddleware`` reads the
``OpenStack-API-Version: placement X.Y`` header (``latest`` allowed),
answers 406 for a version outside the range and puts the version in the
environ under :data:`ENVIRON`; handlers ask :func:`at_least`.
"""

SERVICE_TYPE = "placement"
ENVIRON = "%s.microversion" % SERVICE_TYPE

#: every version served, oldest first (what each adds: Placement's
#: rest_api_version_history; doc/source/admin/placement-api.rst)
VERSIONS = ["1.%d" % minor for minor in range(40)]
MIN = VERSIONS[0]
MAX = VERSIONS[-1]


def of(req):
    """The request's microversion (a ``microversion_parse.Version``)."""
    return req.environ[ENVIRON]


def at_least(req, minor):
    """Whether the request asked for 1.``minor`` or later."""
    return of(req).matches((1, minor))
