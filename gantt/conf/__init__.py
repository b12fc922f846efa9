"""Gantt's configuration options, one module per option group.

Nothing here registers on a global ``ConfigOpts``: callers pass the one they
own (the daemon builds its own, tests build a fresh one per test).
"""

from gantt.conf import api
from gantt.conf import cells
from gantt.conf import database
from gantt.conf import filter_scheduler
from gantt.conf import metrics
from gantt.conf import pci
from gantt.conf import profiles
from gantt.conf import request_filters
from gantt.conf import scheduler
from gantt.conf import upgrade_levels
from gantt.conf import volume_scheduler
from gantt.conf import wire

ALL_MODULES = (scheduler, request_filters, profiles, filter_scheduler,
               metrics, pci, cells, database, upgrade_levels, wire,
               volume_scheduler, api)


def register_opts(conf):
    """Register every Gantt option group on ``conf``."""
    for module in ALL_MODULES:
        module.register_opts(conf)
