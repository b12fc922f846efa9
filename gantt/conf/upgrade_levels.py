"""[upgrade_levels]: RPC version caps for rolling upgrades."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "upgrade_levels", title="Upgrade levels",
    help="""
Caps on the RPC API versions this service sends, so that it keeps talking
to workers of an older release during a rolling upgrade. Set them on every
upgraded service while older workers run; remove them (and restart) once
every worker is upgraded.
""")

OPTS = [
    cfg.StrOpt("scheduler", regex=r"^\d+\.\d+$",
               help="""
The newest RPC API version (``MAJOR.MINOR``) sent to the scheduler topic,
and the one whose object versions are sent: the version the oldest running
gantt-scheduler serves (``gantt-status upgrade check`` and the upgrade
guide list which release serves which). Methods newer than the cap are
refused with ``VersionCapped`` before anything is sent; objects are
backported to what that version reads. Unset: no cap (this code's newest
version, for clouds whose workers are all at this release).
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
