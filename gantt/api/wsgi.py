"""The deploy entry point for a WSGI server (uwsgi, mod_wsgi, gunicorn).

``application`` is built on first use from Gantt's configuration files:
``$GANTT_CONFIG_DIR/gantt.conf`` if that variable is set, else
oslo.config's default places (``/etc/gantt/gantt.conf``...), as
Placement's ``OS_PLACEMENT_CONFIG_DIR``. ``init_application`` is the same
for pbr's ``wsgi_scripts`` (``gantt-api-wsgi``).
"""

import os

from oslo_log import log as logging

from gantt.api import app as app_mod
from gantt.cmd import common

CONFIG_FILE = "gantt.conf"


def config_files(env=None):
    """The config files to read, or None for oslo.config's defaults."""
    env = os.environ if env is None else env
    directory = env.get("GANTT_CONFIG_DIR", "").strip()
    return [os.path.join(directory, CONFIG_FILE)] if directory else None


def init_application():
    conf = common.make_conf()
    logging.register_options(conf)
    conf([], project="gantt", default_config_files=config_files())
    logging.setup(conf, "gantt")
    return app_mod.make_app(conf)


def __getattr__(name):
    # ``gantt.api.wsgi:application`` is built when a server asks for it,
    # not when the module is imported (by the docs build, by tests)
    if name == "application":
        globals()["application"] = init_application()
        return globals()["application"]
    raise AttributeError(name)
