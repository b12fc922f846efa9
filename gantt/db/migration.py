"""Schema migrations through alembic, run on Gantt's own engine."""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script

_HERE = os.path.join(os.path.dirname(__file__), "migrations")


def _config(connection=None):
    cfg = alembic_config.Config(os.path.join(_HERE, "alembic.ini"))
    cfg.set_main_option("script_location", _HERE)
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(db, revision="head"):
    """Bring the schema of ``db`` (a gantt.db.api.Database) to ``revision``."""
    with db.engine.begin() as conn:
        command.upgrade(_config(conn), revision)


def current_version(db):
    """The schema revision of ``db``, or None for an empty database."""
    with db.engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn).get_current_revision()


def head_version():
    """The newest revision this code knows."""
    scripts = alembic_script.ScriptDirectory.from_config(_config())
    return scripts.get_current_head()
