"""Entry point for oslo-config-generator: every Gantt option group."""

from gantt.conf import ALL_MODULES


def list_opts():
    result = []
    for module in ALL_MODULES:
        for group, opts in module.list_opts().items():
            result.append((group, opts))
    return result


def set_defaults(conf):
    """Hook for ``oslo.config.opts.defaults``: Gantt's embedded database."""
    from gantt.conf import database
    database.register_opts(conf)
