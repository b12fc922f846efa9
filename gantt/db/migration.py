"""Schema migrations through alembic, run on Gantt's own engine.

An upgrade to the head either ends at this code's newest revision or
raises :class:`SchemaError`: an installation that lost its revision
scripts (a wheel built without them once made ``gantt-manage db sync``
report success and create nothing), or a database at a revision this code
does not know, must stop whoever runs it.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
from alembic import util as alembic_util

from gantt import exception

_HERE = os.path.join(os.path.dirname(__file__), "migrations")


class SchemaError(exception.ConfigurationError):
    """The schema cannot be brought to, or compared with, this code's."""

    msg_fmt = "%(reason)s"


def _config(connection=None):
    cfg = alembic_config.Config(os.path.join(_HERE, "alembic.ini"))
    cfg.set_main_option("script_location", _HERE)
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(db, revision="head"):
    """Bring the schema of ``db`` (a gantt.db.api.Database) to ``revision``.

    :raises SchemaError: when the upgrade to the head does not end at
        :func:`head_version`, or alembic cannot find its way there
    """
    head = head_version() if revision == "head" else None
    try:
        with db.engine.begin() as conn:
            command.upgrade(_config(conn), revision)
    except alembic_util.CommandError as exc:
        # e.g. a database stamped by a newer Gantt: its revision is unknown
        reason = "cannot upgrade the database schema from %s: %s" % (
            current_version(db), exc)
        raise SchemaError(reason=reason) from exc
    if head is not None and current_version(db) != head:
        raise SchemaError(reason="the database schema is at %s after the "
                                 "upgrade, not at this code's %s" % (
                                     current_version(db), head))


def current_version(db):
    """The schema revision of ``db``, or None for an empty database."""
    with db.engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn).get_current_revision()


def head_version():
    """The newest revision this code knows.

    :raises SchemaError: when the installation has no revision scripts,
        or more than one newest revision
    """
    scripts = alembic_script.ScriptDirectory.from_config(_config())
    heads = scripts.get_heads()
    if not heads:
        raise SchemaError(reason="no schema revision scripts in %s: this "
                                 "installation of Gantt is incomplete, "
                                 "reinstall it" % scripts.versions)
    if len(heads) > 1:
        raise SchemaError(reason="the schema revision scripts in %s have "
                                 "%d newest revisions (%s), need one" % (
                                     scripts.versions, len(heads),
                                     ", ".join(sorted(heads))))
    return heads[0]
