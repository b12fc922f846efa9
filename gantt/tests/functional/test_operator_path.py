"""What an operator meets first, on the real daemon and RabbitMQ.

* A config mistake at start: the real console scripts run on a config file
  with one mistake each; the daemon logs to a file (as in production), and
  the reason must still reach the terminal, as one line, with exit code 2
  and no traceback anywhere.
* ``[DEFAULT] rpc_ping_enabled``: a monitoring probe's ping is answered.
* Agents casting reports before any scheduler started, and while every
  scheduler is stopped: no cast raises, and reports flow once one is up.
"""

import importlib.util
import logging
import os
import socket
import subprocess
import sys

import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt import rpcapi
from gantt.tests import factories
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
EXAMPLE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))), "doc", "examples", "external_client.py")


def _run(*args):
    return subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]),
                          capture_output=True, text=True, timeout=waiting.CALL)


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
                    "%s" % (tmp_path / "gantt.log", db, text))
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
    # read while logging is set up from the options (before the preflight)
    ("[DEFAULT]\nuse_stderr = perhaps\n",
     "[DEFAULT] use_stderr: Unexpected boolean value 'perhaps'"),
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


@pytest.mark.parametrize("command", [
    ("gantt-scheduler",), ("gantt-manage", "db", "version"),
    ("gantt-status", "upgrade", "check")])
@pytest.mark.parametrize("broken,says", [
    ("[database\nconnection = x\n", "Invalid section (must end with ]): "
                                     "'[database'"),
    (None, "Failed to find some config files: "),
])
def test_a_config_file_that_cannot_be_read_is_refused_in_one_line(
        tmp_path, command, broken, says):
    path = tmp_path / "gantt.conf"
    if broken is not None:
        path.write_text(broken)
    result = _run(command[0], "--config-file", str(path), *command[1:])
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(command[0] + ": ")
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.parametrize("url,says", [
    ("mysql+pymysql://nobody:wrong@127.0.0.1:3306/gantt",
     "Access denied for user 'nobody'"),
    ("postgresql+psycopg2://postgres@127.0.0.1:5432/gantt_no_such_database",
     'database "gantt_no_such_database" does not exist'),
])
def test_db_sync_refuses_a_database_it_cannot_use_in_one_line(
        tmp_path, url, says):
    conf = _config(tmp_path, "[database]\nconnection = %s\n" % url)
    result = _run("gantt-manage", "--config-file", conf, "db", "sync")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(
        "gantt-manage: Configuration error: [database] connection: cannot "
        "use the database: ")
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


# -- [DEFAULT] rpc_ping_enabled, on the real daemon over RabbitMQ -----------


def _ping(daemon, **target):
    """oslo.messaging's ping, as a monitoring probe sends it."""
    client = messaging.get_rpc_client(
        daemon.transport, messaging.Target(exchange=rpcapi.EXCHANGE,
                                           topic=daemon.topic,
                                           version="1.0"),
        timeout=waiting.CALL)
    return client.prepare(**target).call({}, "oslo_rpc_server_ping")


def test_the_daemon_answers_ping_only_when_enabled(server_db,
                                                   daemon_factory):
    enabled = daemon_factory(server_db.url,
                             extra="[DEFAULT]\nrpc_ping_enabled = true\n")
    assert _ping(enabled) == "pong"
    # the stats server of this host answers too
    assert _ping(enabled, topic=rpcapi.stats_topic(enabled.topic),
                 server=socket.gethostname()) == "pong"

    disabled = daemon_factory(server_db.url)
    with pytest.raises(exception.InvalidRequest,
                       match="oslo_rpc_server_ping"):
        _ping(disabled)
    assert "Rejected oslo_rpc_server_ping message" in disabled.log()


# -- casts while no scheduler is up -----------------------------------------


@pytest.fixture
def idle_daemon(rabbit, tmp_path, server_db):
    """A daemon's config and client, the daemon not started yet."""
    d = conftest.Daemon(str(tmp_path), rabbit, server_db.url)
    yield d
    code = d.stop()
    d.transport.cleanup()
    assert code in (0, None), d.log()
    assert not conftest._tracebacks(d.log(), set()), d.log()


def _memory_mb(state):
    return next(r.total for r in state.resources
                if r.resource_class == "MEMORY_MB")


def _wait_for_report(daemon, node):
    return waiting.until(
        "report %d of %s" % (node.report_sequence, node.host),
        lambda: _reported(daemon, node), log=daemon.log)


def _reported(daemon, node):
    states = daemon.client.get_host_states(None, hosts=[node.host])
    if states and states[0].report_sequence >= node.report_sequence:
        return states[0]
    return None


def test_agents_cast_through_a_cold_start_and_a_full_stop(idle_daemon,
                                                          caplog):
    d = idle_daemon
    # cold start: no scheduler has ever served this topic
    factories.cast_report(d.client, "agent-1", memory_mb=1024)
    d.client.provider_usage_changed(None, [])
    d.start()
    # nobody listened: that report went nowhere (at most once)
    assert d.client.get_host_states(None) == []
    first = factories.cast_report(d.client, "agent-1", memory_mb=2048)
    assert _memory_mb(_wait_for_report(d, first)) == 2048
    d.client.provider_usage_changed(None, [])

    assert d.stop() == 0
    # every scheduler stopped: RabbitMQ deleted the fanout exchanges that
    # this client's connection had declared; the casts still go out
    with caplog.at_level(logging.WARNING, logger="gantt.rpcapi.client"):
        factories.cast_report(d.client, "agent-1", memory_mb=3072)
        d.client.provider_usage_changed(None, [])
        factories.cast_report(d.client, "agent-1", memory_mb=3072)
    resent = [r.getMessage() for r in caplog.records
              if r.name == "gantt.rpcapi.client"]
    assert resent and all("sending it again" in m for m in resent), resent

    d.start()
    again = factories.cast_report(d.client, "agent-1", memory_mb=4096)
    assert _memory_mb(_wait_for_report(d, again)) == 4096


def _example_module():
    spec = importlib.util.spec_from_file_location("external_client",
                                                  EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_external_example_casts_while_every_scheduler_is_stopped(
        idle_daemon):
    example = _example_module()
    d = idle_daemon
    client = messaging.get_rpc_client(
        d.transport, messaging.Target(exchange=example.EXCHANGE,
                                      topic=d.topic, version="1.0"))
    fanout = client.prepare(fanout=True)
    node = example.compute_node("ext-1", vcpus=4, memory_mb=4096,
                                disk_gb=40)
    d.start()
    example.cast_to_all(fanout, {}, "update_resource_stats",
                        compute_node=node)
    assert d.stop() == 0
    example.cast_to_all(fanout, {}, "update_resource_stats",
                        compute_node=node)      # does not raise
