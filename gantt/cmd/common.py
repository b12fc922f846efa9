"""What every Gantt command does first: options, config files, logging.

It also holds the checks a command runs before it relies on the
configuration (the daemon's preflight, ``gantt-status upgrade check``): every
option value readable, the database reachable at the configured URL.
"""

import typing

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_messaging import opts as messaging_opts
from sqlalchemy import exc as sa_exc

from gantt import conf as gantt_conf
from gantt import exception
from gantt import objects
from gantt import reports
from gantt import rpc
from gantt import version
from gantt.db import api as db_api


def make_conf():
    """A fresh ConfigOpts with every Gantt option registered, not parsed."""
    objects.register_all()
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    rpc.register_opts(conf)
    reports.register_opts(conf)
    return conf


def parse_args(argv, description=None, cli_opts=(), log=True):
    """A fresh ConfigOpts with every Gantt option, loaded from argv.

    :raises: cfg.Error for a config file that cannot be read or parsed;
        ConfigurationError for a logging option whose value cannot be read
    """
    conf = make_conf()
    if cli_opts:
        conf.register_cli_opts(list(cli_opts))
    if log:
        logging.register_options(conf)
    conf(argv, project="gantt", description=description,
         version=version.version_info.version_string_with_package())
    if log:
        _setup_logging(conf)
    return conf


def _setup_logging(conf):
    try:
        logging.setup(conf, "gantt")
    except cfg.Error:
        check_values(conf)      # raises, naming the option
        raise


class BadValue(typing.NamedTuple):
    """An option whose configured value cannot be read."""

    group: str
    option: str
    reason: str

    def __str__(self):
        return "[%s] %s: %s" % (self.group, self.option, self.reason)


def bad_values(conf):
    """Every option of ``conf`` whose value cannot be read, as BadValues.

    oslo.config converts a value only when something first reads it, so a
    bad one would otherwise surface wherever that is (in a forked worker,
    as a traceback in the log only). oslo.messaging's options are
    registered first, so that theirs are read too (its transport registers
    them only once it is built; its ``list_opts`` gives copies equal to
    them, which makes that later registration a no-op).
    """
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    found = []
    for key in list(conf):
        try:
            value = conf[key]
        except cfg.Error as exc:
            found.append(BadValue("DEFAULT", key, _reason(exc)))
            continue
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            found += _bad_group_values(key, value)
    return found


def _bad_group_values(group, attr):
    found = []
    for name in list(attr):
        try:
            getattr(attr, name)
        except cfg.Error as exc:
            found.append(BadValue(group, name, _reason(exc)))
    return found


def _reason(exc):
    """Why a value is bad, without oslo.config's wrapping of it."""
    # ConfigSourceValueError is raised while handling the ValueError of
    # the option's type, whose message is the reason itself
    cause = exc.__context__
    if isinstance(exc, ValueError) and isinstance(cause, ValueError):
        return str(cause)
    return str(exc)


def check_values(conf):
    """:raises: ConfigurationError naming each option that cannot be read
    and why"""
    found = bad_values(conf)
    if found:
        raise exception.ConfigurationError(reason=listing(found))


def listing(found):
    """BadValues as one line."""
    return "; ".join(str(bad) for bad in found)


def _migration():
    """gantt.db.migration, imported when a command asks for the schema:
    alembic is half of the start-up of a command that never does (every
    ``gantt`` call)."""
    from gantt.db import migration
    return migration


def require_schema_head(conf):
    """ConfigurationError unless the database's schema is this code's."""
    migration = _migration()
    current = schema_version(conf)
    if current != migration.head_version():
        raise exception.ConfigurationError(
            reason="database schema is at %s, this code needs %s: run "
                   "'gantt-manage db sync'" % (current,
                                              migration.head_version()))


def schema_version(conf):
    """The schema revision of the ``[database] connection`` database.

    oslo.db retries a database that does not answer (``[database]
    max_retries`` times, ``retry_interval`` seconds apart) before this
    gives up.

    :raises: ConfigurationError when the database cannot be used
    """
    try:
        # oslo.db connects once already, to test the connection
        db = db_api.Database.from_conf(conf)
    except _DATABASE_ERRORS as exc:
        raise _database_error(exc) from None
    try:
        return _migration().current_version(db)
    except _DATABASE_ERRORS as exc:
        raise _database_error(exc) from None
    finally:
        db.dispose()


#: what a database URL that cannot be used raises: an unparsable URL or an
#: unknown dialect, a missing driver, a server that refuses or is not there
_DATABASE_ERRORS = (sa_exc.ArgumentError, ImportError, sa_exc.DBAPIError,
                    db_exc.DBError)


def _database_error(exc):
    # the first line: SQLAlchemy adds a line of where to read about it
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return exception.ConfigurationError(
        reason="[database] connection: cannot use the database: %s" % reason)
