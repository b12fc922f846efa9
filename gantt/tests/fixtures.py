"""Reusable test fixtures (``fixtures.Fixture``), for Gantt and its callers.

* :func:`make_conf` and :class:`Conf`: a fresh, parsed ``ConfigOpts``
  with every Gantt option registered (the fixture resets it afterwards).
* :class:`Database`: a migrated SQLite file database, or a throw-away
  database on the real MariaDB / PostgreSQL of this machine.
"""

import os
import tempfile
import uuid

import fixtures
from oslo_config import cfg
import sqlalchemy as sa

from gantt import conf as gantt_conf
from gantt import objects
from gantt.db import api as db_api
from gantt.db import migration

objects.register_all()

MYSQL_ADMIN_URL = os.environ.get(
    "GANTT_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/")
POSTGRES_ADMIN_URL = os.environ.get(
    "GANTT_TEST_POSTGRES_URL",
    "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")


def make_conf(**overrides):
    """A private, parsed ConfigOpts with every Gantt option registered and
    ``overrides`` (``{"group.name": value}``) set; never the global one."""
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    for key, value in overrides.items():
        group, name = key.split(".", 1)
        conf.set_override(name, value, group)
    return conf


class Conf(fixtures.Fixture):
    """A private ConfigOpts; never the global one."""

    def __init__(self, **overrides):
        super().__init__()
        self.overrides = overrides

    def _setUp(self):
        self.conf = make_conf(**self.overrides)
        self.addCleanup(self.conf.reset)


class Database(fixtures.Fixture):
    """A migrated, empty database that is dropped afterwards.

    :param backend: ``sqlite`` (a temporary file), ``mysql`` or
        ``postgresql`` (a uniquely named database on the local server),
        or ``postgresql+psycopg`` (the same server through the psycopg 3
        driver rather than psycopg2)
    """

    def __init__(self, backend="sqlite"):
        super().__init__()
        self.backend = backend

    def _setUp(self):
        if self.backend == "sqlite":
            tmp = self.useFixture(fixtures.TempDir()).path
            self.url = "sqlite:///" + os.path.join(tmp, "gantt.sqlite")
        else:
            self.url = self._create_server_db()
        self.db = db_api.Database(self.url)
        self.addCleanup(self.db.dispose)
        migration.upgrade(self.db)

    def _create_server_db(self):
        name = "gantt_test_" + uuid.uuid4().hex[:12]
        if self.backend == "mysql":
            admin_url = MYSQL_ADMIN_URL
            url = MYSQL_ADMIN_URL.rstrip("/") + "/" + name + "?charset=utf8mb4"
            create = "CREATE DATABASE %s CHARACTER SET utf8mb4" % name
        elif self.backend.startswith("postgresql"):
            admin_url = POSTGRES_ADMIN_URL
            url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
            if self.backend == "postgresql+psycopg":
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            create = "CREATE DATABASE %s" % name
        else:
            raise ValueError(self.backend)
        admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(create)

        def drop():
            with admin.connect() as conn:
                if self.backend.startswith("postgresql"):
                    conn.exec_driver_sql(
                        "SELECT pg_terminate_backend(pid) FROM "
                        "pg_stat_activity WHERE datname = '%s'" % name)
                conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
            admin.dispose()
        self.addCleanup(drop)
        return url


def temp_dir():
    return tempfile.mkdtemp(prefix="gantt-test-")
