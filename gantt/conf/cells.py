"""[cells]: extra message buses on which cell-local agents cast stats."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup(
    "cells", title="Cell transports",
    help="Compute agents of a cell cast stats on that cell's message bus.")

OPTS = [
    cfg.ListOpt("stats_transport_urls", default=[], secret=True,
                help="""
Transport URLs of cell message buses. Each worker listens on each of them
(on ``[scheduler] topic`` and ``[scheduler] stats_topic``) in addition to
the top-level ``[DEFAULT] transport_url``, which also serves calls.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
