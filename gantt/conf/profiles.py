"""Scheduling profiles: ``[scheduler] profiles`` and ``[profile:NAME]``.

A profile is a set of ``[filter_scheduler]`` options under a name a
request gives (``RequestSpec.profile``), as kube-scheduler's profiles:
its filters, weighers, multipliers, the provider kinds its requests
consider and its packing policy. The profile ``default`` is
``[filter_scheduler]`` itself; every other profile named in
``[scheduler] profiles`` has a group ``[profile:NAME]`` holding every
option of ``[filter_scheduler]``.

**An option a profile leaves unset takes ``[filter_scheduler]``'s value**
(not the option's default): a profile says how it differs from the
default profile. The profile groups' options therefore have no default
of their own (None: unset). Their groups are registered once the
configuration is parsed (:func:`register`), since their names are only
known then; the sample config cannot list them.
"""

import copy

from oslo_config import cfg
from oslo_config import types

from gantt.conf import filter_scheduler
from gantt.conf import groups

#: the profile a request without one gets: ``[filter_scheduler]``
DEFAULT = "default"
#: the kinds of provider Gantt's own docs use (the set is open: a
#: profile may name any kind a provider reports, see
#: gantt.objects.provider.kind_error)
PROVIDER_KINDS = ("compute", "volume", "network", "container")
#: group name prefix of each profile
PREFIX = "profile:"

GROUP = cfg.OptGroup(
    "scheduler", title="Scheduler service options",
    help="Options for the gantt-scheduler service as a whole.")

_NAME = r"^[a-z][a-z0-9_-]{0,62}$"

OPTS = [
    cfg.ListOpt("profiles", default=[],
                item_type=types.String(regex=_NAME),
                help="""
Names of the scheduling profiles besides ``default`` (which is
``[filter_scheduler]``). Each has a group ``[profile:NAME]`` with every
option of ``[filter_scheduler]``; an option the group does not set takes
``[filter_scheduler]``'s value. A request names its profile in
``RequestSpec.profile`` (none: ``default``); a request naming a profile
not listed here is refused with ``InvalidRequest``. Names are lower case
letters, digits, ``-`` and ``_``. See the profiles page of the admin
guide.
"""),
]


def group_name(profile):
    """The option group of ``profile`` (``filter_scheduler`` for the
    default one)."""
    if profile == DEFAULT:
        return filter_scheduler.GROUP.name
    return PREFIX + profile


def names(conf):
    """Every profile's name, ``default`` first.

    :raises: ValueError for a repeated name or one named ``default``
    """
    listed = list(conf.scheduler.profiles)
    if DEFAULT in listed:
        raise ValueError("[scheduler] profiles: %r is [filter_scheduler] "
                         "itself; do not list it" % DEFAULT)
    repeated = sorted({n for n in listed if listed.count(n) > 1})
    if repeated:
        raise ValueError("[scheduler] profiles lists %s more than once"
                         % ", ".join(repeated))
    return [DEFAULT] + listed


def _unset(opt):
    """``opt`` with no default of its own: unset means
    ``[filter_scheduler]``'s value."""
    mine = copy.deepcopy(opt)
    mine.default = None
    return mine


#: the options of each ``[profile:NAME]``
PROFILE_OPTS = [_unset(opt) for opt in filter_scheduler.OPTS]


def register(conf):
    """Register the group of every profile ``[scheduler] profiles``
    names (once the configuration is parsed; again is harmless).

    :returns: the names, ``default`` first
    :raises: ValueError as :func:`names`
    """
    found = names(conf)
    for name in found[1:]:
        group = cfg.OptGroup(group_name(name),
                             title="Scheduling profile %s" % name)
        if group.name not in conf:
            groups.register(conf, group, PROFILE_OPTS)
    return found


def value(conf, profile, option):
    """``option`` of ``profile``: its own value, else
    ``[filter_scheduler]``'s."""
    if profile != DEFAULT:
        own = conf[group_name(profile)][option]
        if own is not None:
            return own
    return conf.filter_scheduler[option]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
