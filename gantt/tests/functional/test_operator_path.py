"""What an operator meets first: a config mistake at start.

The real console scripts run on a config file with one mistake each; the
daemon logs to a file (as in production), and the reason must still reach
the terminal, as one line, with exit code 2 and no traceback anywhere.
"""

import os
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)


def _run(*args):
    return subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]),
                          capture_output=True, text=True, timeout=120)


def _config(tmp_path, text, migrated=False):
    """A config file on an SQLite database, logging to a file."""
    db = "sqlite:///%s" % (tmp_path / "gantt.sqlite")
    if migrated:
        manage = tmp_path / "manage.conf"
        manage.write_text("[database]\nconnection = %s\n" % db)
        sync = _run("gantt-manage", "--config-file", str(manage), "db",
                    "sync")
        assert sync.returncode == 0, sync.stderr
    path = tmp_path / "gantt.conf"
    path.write_text("[DEFAULT]\nlog_file = %s\n[database]\nconnection = %s\n"
                    "max_retries = 0\n%s" % (tmp_path / "gantt.log", db, text))
    return str(path)


MISTAKES = [
    ("[filter_scheduler]\nram_weight_multiplier = abc\n",
     "[filter_scheduler] ram_weight_multiplier: could not convert string "
     "to float: 'abc'"),
    ("[scheduler]\nworkers = 0\n",
     "[scheduler] workers: Should be greater than or equal to 1"),
    ("[oslo_messaging_rabbit]\nheartbeat_timeout_threshold = often\n",
     "[oslo_messaging_rabbit] heartbeat_timeout_threshold: invalid literal "
     "for int() with base 10: 'often'"),
    ("[filter_scheduler]\nenabled_filters = ComputeFilter,NoSuchFilter\n",
     "unknown filters NoSuchFilter"),
    ("[database]\nconnection = mysql+pymysql://root@127.0.0.1:3306/"
     "gantt_no_such_database\n",
     "[database] connection: cannot use the database: "),
]


@pytest.mark.parametrize("mistake,says", MISTAKES)
def test_the_daemon_refuses_a_mistake_with_one_line_on_stderr(
        tmp_path, mistake, says):
    conf = _config(tmp_path, mistake)
    result = _run("gantt-scheduler", "--config-file", conf)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gantt-scheduler: Configuration error: ")
    assert says in lines[0]
    log = (tmp_path / "gantt.log").read_text() if os.path.exists(
        tmp_path / "gantt.log") else ""
    assert "Traceback" not in result.stdout + log


@pytest.mark.parametrize("broken,says", [
    ("[database\nconnection = x\n", "Invalid section (must end with ]): "
                                     "'[database'"),
    (None, "Failed to find some config files: "),
])
def test_a_config_file_that_cannot_be_read_is_refused_in_one_line(
        tmp_path, broken, says):
    path = tmp_path / "gantt.conf"
    if broken is not None:
        path.write_text(broken)
    result = _run("gantt-scheduler", "--config-file", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("gantt-scheduler: ")
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


def _status_words(conf):
    out = _run("gantt-status", "--config-file", conf, "upgrade", "check")
    assert "Traceback" not in out.stdout + out.stderr
    return out.returncode, " ".join(out.stdout.replace("|", " ").split())


def test_upgrade_check_names_each_option_it_cannot_read(tmp_path):
    conf = _config(tmp_path, "[filter_scheduler]\n"
                             "ram_weight_multiplier = abc\n"
                             "[scheduler]\nservice_down_time = a minute\n",
                   migrated=True)
    code, text = _status_words(conf)
    assert code == 2, text      # oslo.upgradecheck's "failure"
    assert ("Check: Configuration values Result: Failure Details: Options "
            "whose value cannot be read (gantt-scheduler refuses to start): "
            in text)
    assert ("[filter_scheduler] ram_weight_multiplier: could not convert "
            "string to float: 'abc'" in text)
    assert ("[scheduler] service_down_time: invalid literal for int() with "
            "base 10: 'a minute'" in text)
    # the check that reads service_down_time fails and says why, instead
    # of ending the command with a traceback
    assert ("Check: Liveness settings Result: Failure Details: Cannot be "
            "checked: [scheduler] service_down_time" in text)
    assert "Check: Database schema Result: Success" in text


def test_upgrade_check_names_a_database_it_cannot_use(tmp_path):
    conf = _config(tmp_path, "[database]\nconnection = sqlite:////"
                             "nonexistent/directory/gantt.sqlite\n")
    code, text = _status_words(conf)
    assert code == 2, text
    assert "Check: Configuration values Result: Success" in text
    assert ("Check: Database schema Result: Failure Details: Configuration "
            "error: [database] connection: cannot use the database: "
            "(sqlite3.OperationalError) unable to open database file" in text)
