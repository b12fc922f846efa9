"""What every Gantt command does first: options, config files, logging."""

from oslo_config import cfg
from oslo_log import log as logging

from gantt import conf as gantt_conf
from gantt import objects
from gantt import reports
from gantt import rpc
from gantt import version


def make_conf():
    """A fresh ConfigOpts with every Gantt option registered, not parsed."""
    objects.register_all()
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    rpc.register_opts(conf)
    reports.register_opts(conf)
    return conf


def parse_args(argv, description=None, cli_opts=(), log=True):
    """A fresh ConfigOpts with every Gantt option, loaded from argv."""
    conf = make_conf()
    if cli_opts:
        conf.register_cli_opts(list(cli_opts))
    if log:
        logging.register_options(conf)
    conf(argv, project="gantt", description=description,
         version=version.version_info.version_string_with_package())
    if log:
        logging.setup(conf, "gantt")
    return conf
