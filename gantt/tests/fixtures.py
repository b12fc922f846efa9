"""Reusable test fixtures (``fixtures.Fixture``), for Gantt and its callers.

* :func:`make_conf` and :class:`Conf`: a fresh, parsed ``ConfigOpts``
  with every Gantt option registered (the fixture resets it afterwards).
* :class:`Database`: a migrated SQLite file database, or a throw-away
  database on the real MariaDB / PostgreSQL of this machine, cloned from
  a template that this process migrated once (see :mod:`schema_clone`).
* :class:`NovaRecords`: the two tables of Nova's databases that gantt-api
  reads (``[nova] api_database_connection``), in such databases.
"""

import os
import shutil
import tempfile
import uuid

import fixtures
from oslo_config import cfg
import sqlalchemy as sa

from gantt import conf as gantt_conf
from gantt import objects
from gantt.db import api as db_api
from gantt.db import migration
from gantt.tests import schema_clone

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
    """A migrated (unless ``migrate`` is False), empty database that is
    dropped afterwards.

    A migrated one is a copy of a template this process migrated once with
    the real alembic upgrade (:mod:`gantt.tests.schema_clone`): the same
    tables, keys and revision, in milliseconds instead of the 0.3 s
    (SQLite) to 3 s (MariaDB) that 16 revisions take. ``clone=False``
    runs the revisions themselves.

    :param backend: ``sqlite`` (a temporary file), ``mysql`` or
        ``postgresql`` (a uniquely named database on the local server),
        or ``postgresql+psycopg`` (the same server through the psycopg 3
        driver rather than psycopg2)
    """

    def __init__(self, backend="sqlite", migrate=True, clone=True):
        super().__init__()
        self.backend = backend
        self.migrate = migrate
        self.clone = clone and migrate

    def _setUp(self):
        if self.backend == "sqlite":
            tmp = self.useFixture(fixtures.TempDir()).path
            self.url = "sqlite:///" + os.path.join(tmp, "gantt.sqlite")
            if self.clone:
                shutil.copyfile(schema_clone.sqlite_template(),
                                self.url[len("sqlite:///"):])
        else:
            self.url = self._create_server_db()
        self.db = db_api.Database(self.url)
        self.addCleanup(self.db.dispose)
        if self.migrate and not self.clone:
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
        if self.clone and self.backend.startswith("postgresql"):
            create += " TEMPLATE " + schema_clone.postgresql_template(
                admin_url)
        with admin.connect() as conn:
            conn.exec_driver_sql(create)
        if self.clone and self.backend == "mysql":
            schema_clone.mysql_copy(admin_url, name)

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


class NovaRecords:
    """What of Nova's databases Gantt reads, in two databases of the
    test's: the API database's ``cell_mappings`` naming one cell (and
    cell0), that cell's ``compute_nodes``. The tables have Nova's names
    and the columns Gantt reads, with Nova's types; Nova's other columns
    are left out. The tables are dropped with their databases.
    """

    def __init__(self, api_url, cell_url):
        self.api_url, self.cell_url = api_url, cell_url
        meta = sa.MetaData()
        self.cells = sa.Table(
            "cell_mappings", meta,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("uuid", sa.String(36), nullable=False),
            sa.Column("name", sa.String(255)),
            sa.Column("database_connection", sa.Text()))
        self.nodes = sa.Table(
            "compute_nodes", meta,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("uuid", sa.String(36)),
            sa.Column("host", sa.String(255)),
            sa.Column("hypervisor_hostname", sa.String(255)),
            sa.Column("hypervisor_type", sa.Text()),
            sa.Column("hypervisor_version", sa.Integer),
            sa.Column("supported_instances", sa.Text()),
            sa.Column("deleted", sa.Integer, default=0))
        self.cell_uuid = str(uuid.uuid4())
        self._write(api_url, self.cells, [
            dict(uuid="00000000-0000-0000-0000-000000000000", name="cell0",
                 database_connection=api_url),
            dict(uuid=self.cell_uuid, name="cell1",
                 database_connection=cell_url)])
        self._write(cell_url, self.nodes, [])

    @staticmethod
    def _write(url, table, rows):
        engine = sa.create_engine(url)
        try:
            with engine.begin() as conn:
                table.create(conn, checkfirst=True)
                if rows:
                    conn.execute(table.insert(), rows)
        finally:
            engine.dispose()

    def add_node(self, node_uuid, host, nodename, deleted=0, **caps):
        """A compute node as nova-compute records it in its cell."""
        self._write(self.cell_url, self.nodes, [dict(
            uuid=node_uuid, host=host, hypervisor_hostname=nodename,
            deleted=deleted, **caps)])
