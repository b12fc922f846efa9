"""[cells]: extra message buses on which cell-local agents cast stats."""

from oslo_config import cfg

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
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    return {GROUP: OPTS}
