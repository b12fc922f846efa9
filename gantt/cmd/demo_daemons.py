"""The scheduler ``gantt-demo`` plays against, on RabbitMQ or in-process.

On RabbitMQ the demo starts ``gantt-scheduler`` as an operator would: a
child process with a config file and a log of its own
(:class:`ChildDaemon`). On oslo.messaging's ``fake:`` transport that
cannot work: its bus lives in the driver object, so only clients of the
very transport the server listens on reach it. :class:`InProcessDaemon`
then runs the same worker ``gantt-scheduler`` forks
(``gantt.service.SchedulerWorker``, wired by ``gantt.scheduler.build``)
inside the demo's process, on one transport shared with the simulated
agents and callers, and its notifications on that transport's bus.

Both write the same config (each flow's profile and notifications) and
migrate the same database with ``gantt-manage db sync``, and both give
the flows what they talk through: :attr:`conf`, :attr:`transport` and
:attr:`notifications`.
"""

import logging
import os
import signal
import subprocess
import sys
import time

import oslo_messaging as messaging

from gantt import rpc
from gantt import service
from gantt.cmd import common
from gantt.cmd import demo_flows

#: how long a stopping scheduler may take before it is killed
STOP_TIMEOUT = 40
#: the in-process worker's log lines, as gantt-scheduler's look
LOG_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s %(message)s"


def write_config(path, transport_url, database, workers, topic, flows):
    """The daemon's config: the bus, the database, every flow's part."""
    sections = demo_flows.merge_config(*(
        flow.config(topic) for flow in flows))
    profiles = ",".join(flow.PROFILE for flow in flows if flow.PROFILE)
    with open(path, "w") as f:
        f.write("[DEFAULT]\ntransport_url = %s\n"
                "[database]\nconnection = %s\n"
                "[scheduler]\ntopic = %s\nworkers = %d\n"
                "profiles = %s\n"
                "[filter_scheduler]\nhost_subset_size = 3\n"
                % (transport_url, database, topic, workers, profiles))
        for section, text in sections.items():
            f.write("[%s]\n%s" % (section, text))


def _bin(name):
    """A command of the venv the demo runs from."""
    return os.path.join(os.path.dirname(sys.executable), name)


class _Daemon:
    """What both kinds share: the work directory's config and log, the
    database migrated before the scheduler starts."""

    def __init__(self, workdir, transport_url, database, workers, topic,
                 flows=()):
        self.workdir = workdir
        self.conf_file = os.path.join(workdir, "gantt.conf")
        self.log_file = os.path.join(workdir, "gantt-scheduler.log")
        write_config(self.conf_file, transport_url, database, workers,
                     topic, flows)
        self.conf = self.transport = self.notifications = None

    def _db_sync(self):
        subprocess.run([_bin("gantt-manage"), "--config-file",
                        self.conf_file, "db", "sync"], check=True,
                       stdout=subprocess.DEVNULL)

    def _parse(self):
        self.conf = common.parse_args(["--config-file", self.conf_file],
                                      log=False)
        self.transport = rpc.get_transport(self.conf)


class ChildDaemon(_Daemon):
    """``gantt-scheduler`` as a child process, on a real broker."""

    proc = None

    def start(self):
        """Migrate, start the daemon; the demo's clients on their own
        connections, as agents and conductors would be."""
        self._db_sync()
        with open(self.log_file, "w") as log:
            self.proc = subprocess.Popen(
                [_bin("gantt-scheduler"), "--config-file", self.conf_file],
                stdout=log, stderr=subprocess.STDOUT)
        self._parse()
        self.notifications = messaging.get_notification_transport(self.conf)
        return "started gantt-scheduler (pid %d), log %s" % (
            self.proc.pid, self.log_file)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def exited(self):
        return "gantt-scheduler exited early (code %s); see %s" % (
            self.proc.returncode, self.log_file)

    def stop(self):
        """SIGTERM, as an init system would; the line to print, or None
        when the daemon was not running."""
        for transport in (self.transport, self.notifications):
            if transport is not None:
                transport.cleanup()
        if not self.alive():
            return None
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return "gantt-scheduler stopped on SIGTERM in %.1f s" % (
            time.monotonic() - started)


class InProcessDaemon(_Daemon):
    """The scheduler worker in this process, on the fake transport: one
    worker (the only one the fake bus and the embedded SQLite need)."""

    worker = None
    _log_handler = None

    def start(self):
        """Migrate, log to the work directory, start the worker; it
        answers once its cache is loaded, when this returns."""
        self._db_sync()
        self._parse()
        self.notifications = rpc.notification_transport(self.transport)
        self._log_to_file()
        self.worker = service.SchedulerWorker(
            self.conf, transport=self.transport,
            notification_transport=self.notifications)
        self.worker.start()
        return ("started the scheduler worker in this process, log %s"
                % self.log_file)

    def _log_to_file(self):
        """The worker's INFO lines into the log file, not the terminal."""
        self._log_handler = logging.FileHandler(self.log_file, mode="w")
        self._log_handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logging.getLogger().addHandler(self._log_handler)
        logging.getLogger("gantt").setLevel(logging.INFO)

    def alive(self):
        return self.worker is not None

    def exited(self):
        return "the in-process scheduler worker stopped; see %s" % (
            self.log_file)

    def stop(self):
        """The worker's graceful stop (in-flight calls finish); the line
        to print, or None when it was not started."""
        if self.worker is None:
            return None
        started = time.monotonic()
        self.worker.stop()
        if getattr(self.worker, "db", None) is not None:
            self.worker.db.dispose()
        self.transport.cleanup()
        self.worker = None
        logging.getLogger().removeHandler(self._log_handler)
        self._log_handler.close()
        return "in-process scheduler worker stopped in %.1f s" % (
            time.monotonic() - started)
