"""Neutron is not on this machine. A server built with ``networks=none``
makes no call to it, but its delete does: nova-compute refreshes the
empty network info from Neutron (``ComputeManager._shutdown_instance``,
nova/compute/manager.py:3224) and looks for ports to free
(``nova.network.neutron.API.deallocate_for_instance``). Here, every
``GET /v2.0/<collection>`` is answered as a Neutron with nothing in it
would (``{"<collection>": []}``); every request is recorded, and any
other method is a 404, so that a test sees each call Nova makes.
"""

import http.server
import json
import threading
import urllib.parse


class _Handler(http.server.BaseHTTPRequestHandler):

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        self.server.requests.append(("GET", url.path,
                                     urllib.parse.parse_qs(url.query)))
        prefix, _, collection = url.path.rpartition("/")
        if prefix == "/v2.0":
            self._reply(200, {collection: []})
        else:
            self._not_here()

    def _not_here(self):
        self.server.requests.append((self.command, self.path, {}))
        self._reply(404, {"NeutronError": {"message": "not here"}})

    do_POST = do_PUT = do_DELETE = _not_here

    def _reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class NoPortsNeutron:
    """An HTTP server on 127.0.0.1: an empty Neutron to read from."""

    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), _Handler)
        self.server.requests = []
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    @property
    def requests(self):
        return list(self.server.requests)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
