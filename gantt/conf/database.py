"""[database]: oslo.db options, with Gantt's embedded default."""

from oslo_db import options as db_options

#: Used when no ``[database] connection`` is configured: a file in the
#: current directory, good for the demo and a single-process trial only.
DEFAULT_CONNECTION = "sqlite:///gantt.sqlite"


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)


def list_opts():
    # oslo.db publishes its own options under the ``oslo.db`` namespace of
    # the config generator; see etc/gantt/gantt-config-generator.conf.
    return {}
