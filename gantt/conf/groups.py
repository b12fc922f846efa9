"""Registering an option group on a ConfigOpts without sharing state.

oslo.config's ``ConfigOpts.register_group`` keeps a shallow copy of the
``OptGroup`` it is given, and that copy shares the group's option table,
where ``set_override`` and ``set_default`` write. Registering one
module-level ``OptGroup`` on two ConfigOpts would thus let an override on
one show through the other, and config is passed, never global: each
registration gets a group of its own.
"""

from oslo_config import cfg


def fresh(group):
    """A new ``OptGroup`` like ``group``, with an empty option table."""
    return cfg.OptGroup(group.name, title=group.title, help=group.help)


def register(conf, group, opts):
    """Register ``opts`` under a fresh copy of ``group`` on ``conf``."""
    conf.register_group(fresh(group))
    conf.register_opts(opts, group=group.name)
