"""Guru Meditation Reports: what a running process is doing, on demand.

``kill -USR2 <pid>``, or touching the file ``[oslo_reports]
file_event_handler`` names, makes a process write a report: the Gantt
version, every thread's stack, the process tree and the options in effect
(secrets masked), to stderr or, with ``[oslo_reports] log_dir``, to a
file there. The same as every OpenStack service, through oslo.reports.
"""

import os

from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as gmr_opts
from oslo_reports.generators import conf as conf_generator

from gantt import version


def register_opts(conf):
    """The ``[oslo_reports]`` options (for the sample config too)."""
    gmr_opts.set_defaults(conf)


class _Report(gmr.TextGuruMeditation):
    """oslo.reports' text report, showing ``conf`` as its configuration.

    oslo.reports reads the global ``cfg.CONF``, which Gantt leaves empty
    (each command builds its own ConfigOpts); the report would show no
    option at all.
    """

    conf = None

    def add_section(self, view, generator, index=None):
        if isinstance(generator, conf_generator.ConfigReportGenerator):
            generator = conf_generator.ConfigReportGenerator(self.conf)
        super().add_section(view, generator, index)

    @classmethod
    def handle_signal(cls, version_obj, service_name, log_dir, frame):
        # the pid in the file name: workers forked from one master share
        # its service name, and two of them reporting within the same
        # second would write one file
        super().handle_signal(version_obj, "%s-%d" % (
            service_name, os.getpid()), log_dir, frame)


def setup(conf, service_name, worker=False):
    """Make this process answer report requests.

    In the master process (``worker=False``): the SIGUSR2 handler, which
    the worker processes it forks inherit, so each of them answers its own
    ``kill -USR2``; or, if ``file_event_handler`` is set, the thread that
    watches that file. Threads do not survive a fork, so each worker calls
    this again (``worker=True``) to start a watcher of its own; it sets no
    signal handler.
    """
    register_opts(conf)  # a no-op where the command registered them
    report = type("GanttReport", (_Report,), {"conf": conf})
    report.setup_autorun(version.version_info, service_name=service_name,
                         conf=conf, setup_signal=not worker)
