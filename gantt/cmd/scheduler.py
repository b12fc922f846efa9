"""gantt-scheduler: the scheduler daemon, ``[scheduler] workers`` processes."""

import sys

from oslo_log import log as logging
from oslo_service import service

from gantt import exception
from gantt import reports
from gantt import service as gantt_service
from gantt.cmd import common
from gantt.db import api as db_api
from gantt.db import migration
from gantt.rpcapi import versions
from gantt.scheduler import plugins

LOG = logging.getLogger(__name__)


def _preflight(conf):
    """Fail fast, with a clear message, on what would fail in every worker."""
    plugins.load(plugins.FILTERS, conf.filter_scheduler.enabled_filters, conf)
    plugins.load(plugins.WEIGHERS, conf.filter_scheduler.enabled_weighers,
                 conf)
    # every worker's client honours the cap for its casts to its peers
    versions.configured_cap(conf)
    db = db_api.Database.from_conf(conf)
    try:
        current = migration.current_version(db)
    finally:
        db.dispose()
    if current != migration.head_version():
        raise exception.ConfigurationError(
            reason="database schema is at %s, this code needs %s: run "
                   "'gantt-manage db sync'" % (current,
                                              migration.head_version()))


def main(argv=None):
    conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                             description="Gantt scheduler daemon")
    try:
        _preflight(conf)
    except exception.ConfigurationError as exc:
        LOG.error("gantt-scheduler cannot start: %s", exc)
        print("gantt-scheduler: %s" % exc, file=sys.stderr)
        return 2
    reports.setup(conf, "gantt-scheduler")
    workers = conf.scheduler.workers
    LOG.info("Starting gantt-scheduler with %d worker(s) on topic %s",
             workers, conf.scheduler.topic)
    launcher = service.launch(conf, gantt_service.SchedulerWorker(conf),
                              workers=workers, restart_method="mutate")
    launcher.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
