"""Entry point for oslo-config-generator: every Gantt option group."""

from gantt.conf import ALL_MODULES


def list_opts():
    result = []
    for module in ALL_MODULES:
        for group, opts in module.list_opts().items():
            result.append((group, opts))
    return result


def set_defaults():
    """Hook for ``oslo.config.opts.defaults``: Gantt's library defaults.

    Only oslo-config-generator calls it: it changes oslo.db's shared option
    objects so that the sample shows Gantt's embedded database default.
    """
    from oslo_config import cfg
    from oslo_db import options as db_options

    from gantt.conf import database
    cfg.set_defaults(db_options.database_opts,
                     connection=database.DEFAULT_CONNECTION)
