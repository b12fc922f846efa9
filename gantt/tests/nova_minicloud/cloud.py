"""A mini-cloud on this machine: real nova-conductor and nova-compute
processes (Nova's fake virt driver), Nova's databases on MariaDB, Nova's
bus on this machine's RabbitMQ, and Gantt (``gantt-scheduler`` with
``[nova] enabled``, ``gantt-api``) where nova-scheduler and placement-api
would be. See doc/source/admin/nova.rst, "The mini-cloud".

Every process is a console script of the test's virtualenv. Nova's
services send on an exchange of their own (``[DEFAULT] control_exchange``,
the same in Gantt's ``[nova] control_exchange``), so that nothing else on
the shared broker takes their messages; the databases are throw-away
ones, dropped at the end.
"""

import dataclasses
import os
import socket
import subprocess
import sys
import uuid

import sqlalchemy as sa

from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional import waiting
from gantt.tests.functional.conftest import BIN
from gantt.tests.functional.conftest import RABBIT_URL

#: the driver every compute runs (see :mod:`.compute`)
DRIVER = "minicloud_faildriver.FirstSpawnFailsDriver"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclasses.dataclass(frozen=True)
class Names:
    """What one mini-cloud's resources are called."""

    tag: str

    @classmethod
    def new(cls):
        return cls(uuid.uuid4().hex[:8])

    @property
    def exchange(self):
        return "minicloud-" + self.tag

    def db(self, kind):
        return "nova_%s_%s" % (kind, self.tag)

    def host(self, letter):
        return "mc-%s-%s" % (self.tag, letter)


class NovaDatabases:
    """Throw-away MariaDB databases for Nova's API, cell0 and cell1."""

    KINDS = ("api", "cell0", "cell1")

    def __init__(self, names):
        self.admin_url = gantt_fixtures.MYSQL_ADMIN_URL.rstrip("/")
        self.names = [names.db(kind) for kind in self.KINDS]
        self.engine = sa.create_engine(self.admin_url + "/",
                                       isolation_level="AUTOCOMMIT")
        with self.engine.connect() as conn:
            for name in self.names:
                conn.exec_driver_sql("CREATE DATABASE %s CHARACTER SET utf8"
                                     % name)

    def url(self, kind):
        return "%s/%s?charset=utf8" % (
            self.admin_url, self.names[self.KINDS.index(kind)])

    def drop(self):
        with self.engine.connect() as conn:
            for name in self.names:
                conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
        self.engine.dispose()


class Process:
    """A console script of this virtualenv (or ``python -m module`` when
    ``module`` is given), its output in a log file."""

    def __init__(self, name, args, log_file, env=None, module=None):
        self.name = name
        self.log_file = log_file
        self._log = open(log_file, "w")
        argv = ([sys.executable, "-m", module] if module
                else [os.path.join(BIN, name)])
        self.proc = subprocess.Popen(
            argv + list(args), stdout=self._log, stderr=subprocess.STDOUT,
            env=env)

    def log(self):
        with open(self.log_file) as f:
            return f.read()

    def check_running(self):
        if self.proc.poll() is not None:
            raise AssertionError("%s exited with %s:\n%s" % (
                self.name, self.proc.returncode, self.log()[-6000:]))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=waiting.WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def wait_for(what, check, processes, interval=0.5):
    """``check()``'s first true value, while every process still runs
    (bounded by ``GANTT_TEST_WAIT``, see gantt.tests.functional.waiting).
    """
    def running_and_checked():
        for process in processes:
            process.check_running()
        return check()
    return waiting.until(what, running_and_checked, interval=interval)


def nova_conf(names, placement_port, neutron_port, tmpdir):
    """nova.conf for every Nova process of the cloud (and the tests)."""
    return (
        "[DEFAULT]\ntransport_url = %(rabbit)s\n"
        "control_exchange = %(exchange)s\n"
        "state_path = %(tmp)s\n"
        "compute_driver = %(driver)s\n"
        "[conductor]\nworkers = 1\n"
        "[oslo_concurrency]\nlock_path = %(tmp)s/locks\n"
        "[placement]\nauth_type = admin_token\ntoken = admin\n"
        "endpoint = http://127.0.0.1:%(placement)d\n"
        "[neutron]\nauth_type = admin_token\ntoken = admin\n"
        "endpoint = http://127.0.0.1:%(neutron)d\n"
        % {"rabbit": RABBIT_URL, "exchange": names.exchange, "tmp": tmpdir,
           "driver": DRIVER, "placement": placement_port,
           "neutron": neutron_port})


def db_conf(dbs):
    """The database lines of nova.conf: for the conductor, nova-manage and
    the tests, not for the computes (which reach the database through
    the conductor only)."""
    return ("[api_database]\nconnection = %s\n[database]\nconnection = %s\n"
            % (dbs.url("api"), dbs.url("cell1")))


def gantt_conf(names, nova_api_db_url, api_port, cell_uuid):
    """The lines Gantt's daemon and gantt-api add to the functional
    tests' gantt.conf: Nova's exchange, the cell, Nova's API database
    (read for the compute nodes' service hosts), the REST port."""
    return ("[nova]\nenabled = true\ncontrol_exchange = %s\n"
            "default_cell_uuid = %s\napi_database_connection = %s\n"
            "[api]\nauth_strategy = noauth2\nport = %d\n"
            % (names.exchange, cell_uuid, nova_api_db_url, api_port))


def nova_manage(conf_files, *args):
    """``nova-manage`` on the cloud's nova.conf; its output."""
    done = subprocess.run(
        [os.path.join(BIN, "nova-manage")] + config_args(conf_files)
        + list(args), capture_output=True, text=True)
    if done.returncode not in (0,):
        raise AssertionError("nova-manage %s exited with %d:\n%s%s" % (
            " ".join(args), done.returncode, done.stdout, done.stderr))
    return done.stdout


def config_args(conf_files):
    return [arg for path in conf_files for arg in ("--config-file", path)]


def host_conf(tmpdir, host):
    """The per-service config file naming the service's host."""
    path = os.path.join(tmpdir, host + ".conf")
    os.makedirs(os.path.join(tmpdir, host), exist_ok=True)
    with open(path, "w") as f:
        f.write("[DEFAULT]\nhost = %s\nstate_path = %s\n"
                % (host, os.path.join(tmpdir, host)))
    return path
