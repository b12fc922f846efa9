"""gantt-api: the Placement REST API on a development server.

A single-process, threaded ``wsgiref`` server on ``[api] host`` and
``[api] port``: for development, tests and trials. In production run
``gantt.api.wsgi:application`` under uwsgi or mod_wsgi (see
doc/source/admin/placement-api.rst).
"""

import socketserver
import sys
from wsgiref import simple_server

from oslo_config import cfg
from oslo_log import log as logging

from gantt import exception
from gantt.api import app as app_mod
from gantt.cmd import common

LOG = logging.getLogger(__name__)


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        LOG.info("%s %s", self.address_string(), format % args)


def _preflight(conf):
    common.check_values(conf)
    common.require_schema_head(conf)


def serve(conf, app):
    """Serve ``app`` until interrupted."""
    server = simple_server.make_server(
        conf.api.host, conf.api.port, app, server_class=_ThreadingServer,
        handler_class=_QuietHandler)
    LOG.info("gantt-api serving on http://%s:%d/", *server.server_address)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv=None):
    try:
        conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                                 description="Gantt's Placement REST API "
                                             "(development server)")
        _preflight(conf)
    except (cfg.Error, exception.ConfigurationError) as exc:
        print("gantt-api: %s" % exc, file=sys.stderr)
        return 2
    serve(conf, app_mod.make_app(conf))
    return 0


if __name__ == "__main__":
    sys.exit(main())
