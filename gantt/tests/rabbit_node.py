"""A private RabbitMQ node for fault tests: stopped and started at will.

The tests must not stop the machine's shared broker (other tests and
services use it), so they start a second node of the installed RabbitMQ on
its own ports and directories, and restart that one.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import fixtures

from gantt.tests.functional import waiting


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RabbitNode(fixtures.Fixture):
    """A RabbitMQ node on a free port: ``url``, ``stop_app``, ``start_app``."""

    def _setUp(self):
        if shutil.which("rabbitmq-server") is None:
            raise RuntimeError("rabbitmq-server is not installed: "
                               "apt-get install rabbitmq-server")
        self.name = "gantt-test-%s@localhost" % uuid.uuid4().hex[:8]
        self.port = _free_port()
        self.base = tempfile.mkdtemp(prefix="gantt-rabbit-")
        # the broker drops root privileges to the rabbitmq user
        shutil.chown(self.base, "rabbitmq", "rabbitmq")
        env = dict(os.environ,
                   RABBITMQ_NODENAME=self.name,
                   RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
                   RABBITMQ_NODE_PORT=str(self.port),
                   RABBITMQ_DIST_PORT=str(_free_port()),
                   RABBITMQ_MNESIA_BASE=os.path.join(self.base, "mnesia"),
                   RABBITMQ_LOG_BASE=os.path.join(self.base, "log"),
                   RABBITMQ_CONFIG_FILE=os.path.join(self.base, "none"),
                   RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(self.base,
                                                              "plugins"),
                   RABBITMQ_PID_FILE=os.path.join(self.base, "pid"))
        subprocess.run(["rabbitmq-server", "-detached"], env=env,
                       check=True, capture_output=True)
        self.addCleanup(self._destroy)
        self._ctl("await_startup", "--timeout", "90")
        self.url = "rabbit://guest:guest@127.0.0.1:%d/" % self.port

    def _ctl(self, *args):
        def done():
            result = subprocess.run(["rabbitmqctl", "-n", self.name] +
                                    list(args), capture_output=True,
                                    text=True)
            return result if result.returncode == 0 else None
        return waiting.until("rabbitmqctl %s" % " ".join(args), done,
                             interval=0.5).stdout

    def stop_app(self):
        """Stop the broker (the Erlang node stays up); clients disconnect."""
        self._ctl("stop_app")

    def start_app(self):
        """Start the broker again; returns when it accepts connections."""
        self._ctl("start_app")
        waiting.until("the broker accepting connections on %d" % self.port,
                      self._accepts, ignoring=OSError)

    def _accepts(self):
        with socket.create_connection(("127.0.0.1", self.port), 1):
            return True

    def _destroy(self):
        subprocess.run(["rabbitmqctl", "-n", self.name, "stop"],
                       capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
