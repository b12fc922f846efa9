"""gantt-scheduler: the scheduler daemon, ``[scheduler] workers`` processes."""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service

from gantt import exception
from gantt import reports
from gantt import service as gantt_service
from gantt.cmd import common
from gantt.rpcapi import versions
from gantt.scheduler.pipeline import profiles

LOG = logging.getLogger(__name__)


def _preflight(conf):
    """Fail fast, with a clear message, on what would fail in every worker."""
    # first: what follows reads options, and a bad value would fail there
    # with oslo.config's traceback (or, unread, in every worker)
    common.check_values(conf)
    # every profile's plugins, packing policies and provider kinds
    profiles.build(conf)
    # every worker's client honours the cap for its casts to its peers
    versions.configured_cap(conf)
    common.require_schema_head(conf)


def _preflight_error(conf):
    """The ConfigurationError of :func:`_preflight`, or None."""
    try:
        _preflight(conf)
    except exception.ConfigurationError as exc:
        return exc
    return None


def _refuse(exc):
    """One line on stderr, whatever the logging options say; exit code 2."""
    print("gantt-scheduler: %s" % exc, file=sys.stderr)
    return 2


def main(argv=None):
    try:
        # a config file that cannot be parsed, or a logging option that
        # cannot be read: refused before logging is set up
        conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                                 description="Gantt scheduler daemon")
    except (cfg.Error, exception.ConfigurationError) as exc:
        return _refuse(exc)
    refused = _preflight_error(conf)
    if refused is not None:
        # logged outside the except block: oslo.log would append the
        # exception being handled (a traceback) to the line
        LOG.error("gantt-scheduler cannot start: %s", refused)
        return _refuse(refused)
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
