"""Guru Meditation Reports from a running gantt-scheduler."""

import os
import signal
import time

import psutil


def _reports(directory, count, timeout=15):
    """The report files once ``count`` are there, each written whole."""
    deadline = time.monotonic() + timeout
    while (len(list(directory.iterdir())) < count
           and time.monotonic() < deadline):
        time.sleep(0.1)
    time.sleep(0.5)
    return {p.name: p.read_text() for p in directory.iterdir()}


def test_a_worker_writes_a_report_on_sigusr2_and_keeps_serving(
        daemon_factory, server_db, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    daemon = daemon_factory(server_db.url, workers=2,
                            extra="[oslo_reports]\nlog_dir = %s\n" % reports)
    workers = psutil.Process(daemon.proc.pid).children()
    assert len(workers) == 2

    os.kill(workers[0].pid, signal.SIGUSR2)

    [(name, text)] = _reports(reports, 1).items()
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
    stats = {daemon.client.get_statistics(None).worker for _ in range(20)}
    assert len(stats) == 2
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
    time.sleep(1.5)    # the watchers note the file's time when they start

    trigger.write_text("now")

    found = _reports(reports, 3)
    # the master and each worker (a watcher thread does not survive the
    # fork: each worker starts its own), one file each
    assert sorted(int(n.split("_")[0].rsplit("-", 1)[1]) for n in found) \
        == sorted(processes)
    for name, text in found.items():
        assert "topic = %s" % daemon.topic in text, name
