"""Guru Meditation Reports from a running gantt-scheduler."""

import os
import signal
import time

import psutil

from gantt.tests.functional import waiting


def _reports(directory, count, last):
    """The report files once ``count`` are there, each written up to its
    last section (the options: ``last`` is a line of them)."""
    def whole():
        found = {p.name: p.read_text() for p in directory.iterdir()}
        return len(found) >= count and all(
            last in text for text in found.values()) and found
    return waiting.until("%d whole report(s) in %s" % (count, directory),
                         whole)


def _touch_after(path, moment):
    """Write ``path`` until its mtime is after ``moment`` (file times
    come from a coarser clock than ``time.time()``)."""
    def written():
        path.write_text("now")
        return path.stat().st_mtime > moment
    waiting.until("an mtime of %s after %f" % (path, moment), written)


def test_a_worker_writes_a_report_on_sigusr2_and_keeps_serving(
        daemon_factory, server_db, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    daemon = daemon_factory(server_db.url, workers=2,
                            extra="[oslo_reports]\nlog_dir = %s\n" % reports)
    workers = psutil.Process(daemon.proc.pid).children()
    assert len(workers) == 2

    os.kill(workers[0].pid, signal.SIGUSR2)

    [(name, text)] = _reports(reports, 1,
                              "topic = %s" % daemon.topic).items()
    assert name.startswith("gantt-scheduler-%d_gurumeditation_"
                           % workers[0].pid)
    assert "product = Gantt" in text
    # every thread's stack: the RPC listeners wait in the AMQP client
    assert "Threads" in text and "drain_events" in text
    assert "Process %d" % workers[0].pid in text
    # the options this process runs with (not oslo.config's empty global
    # CONF), secrets masked
    assert "topic = %s" % daemon.topic in text
    assert "workers = 2" in text
    assert "guest:guest" not in text and "connection = ***" in text
    # only the signalled process wrote one, and every worker still serves
    assert all(w.is_running() for w in workers)
    waiting.every_worker("an answer", lambda: daemon.client.get_statistics(
        None), lambda s: True, 2, log=daemon.log)
    assert len(list(reports.iterdir())) == 1


def test_touching_the_trigger_file_makes_every_process_report(
        daemon_factory, server_db, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    trigger = tmp_path / "report-now"
    trigger.write_text("")
    daemon = daemon_factory(
        server_db.url, workers=2,
        extra="[oslo_reports]\nlog_dir = %s\nfile_event_handler = %s\n"
              "file_event_handler_interval = 1\n" % (reports, trigger))
    processes = [daemon.proc.pid] + [
        w.pid for w in psutil.Process(daemon.proc.pid).children()]
    # each watcher noted the time it started, before its process served
    _touch_after(trigger, time.time())

    found = _reports(reports, 3, "topic = %s" % daemon.topic)
    # the master and each worker (a watcher thread does not survive the
    # fork: each worker starts its own), one file each
    assert sorted(int(n.split("_")[0].rsplit("-", 1)[1]) for n in found) \
        == sorted(processes)
    for name, text in found.items():
        assert "topic = %s" % daemon.topic in text, name
