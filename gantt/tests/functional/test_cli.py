"""The ``gantt`` operator CLI, run as an operator runs it (the console
script in a subprocess) against one real daemon on PostgreSQL: what it
prints, what it stores (read back over RPC), and how it fails."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid

from oslo_utils import uuidutils
import pytest
import yaml

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.tests import factories as f
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

GANTT = os.path.join(os.path.dirname(sys.executable), "gantt")
HOSTS = ("cli-a", "cli-b", "cli-c")


@pytest.fixture(scope="module")
def daemon(rabbit, tmp_path_factory):
    """One daemon for the module: three hosts, cli-a and cli-c reporting
    zone az1, cli-b none (cli-a its rack); they report once, and stay up
    for the module."""
    database = conftest._database("postgresql")
    d = conftest.Daemon(str(tmp_path_factory.mktemp("cli")), rabbit,
                        database.url, extra="service_down_time = 3600")
    try:
        d.start()
        for host in HOSTS:
            d.client.update_resource_stats(None, f.compute_node_obj(
                host, zone=None if host == "cli-b" else "az1",
                location="row=b/rack=b07" if host == "cli-a" else None))
        d.wait_for_hosts(len(HOSTS))
        yield d
    finally:
        code = d.stop()
        d.transport.cleanup()
        database.cleanUp()
    assert code in (0, None), d.log()
    assert not conftest._tracebacks(d.log(), set()), d.log()


def gantt(daemon, *args, config=None):
    return subprocess.run(
        [GANTT, "--config-file", config or daemon.conf_file, *args],
        capture_output=True, text=True, timeout=waiting.CALL)


def ok(daemon, *args):
    done = gantt(daemon, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def as_json(daemon, *args):
    return json.loads(ok(daemon, *args, "-f", "json"))


def one_error_line(done, code):
    assert done.returncode == code, done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("gantt: ")
    return done.stderr


def idle_run_seconds(tmp_path):
    """How long a ``gantt`` command takes here that sends nothing (its
    config refused after the imports): this machine's start-up time now,
    which load makes long. "Soon" is measured beyond it."""
    conf = tmp_path / "idle.conf"
    conf.write_text("[DEFAULT]\ntransport_url = foo://nowhere/\n")
    started = time.monotonic()
    done = subprocess.run([GANTT, "--config-file", str(conf), "host",
                           "list"], capture_output=True, text=True,
                          timeout=waiting.CALL)
    assert done.returncode == 2, done.stderr
    return time.monotonic() - started


def stored(daemon, agg_uuid):
    found = [a for a in daemon.client.get_aggregates(None)
             if a.uuid == agg_uuid]
    return found[0] if found else None


def test_host_list_shows_the_zone_the_scheduler_places_in(daemon):
    created = as_json(daemon, "aggregate", "create", "east", "--zone",
                      "east", "--host", "cli-b")
    assert uuidutils.is_uuid_like(created["uuid"])
    assert (created["name"], created["availability_zone"],
            created["hosts"]) == ("east", "east", ["cli-b"])
    hosts = as_json(daemon, "host", "list")
    assert [(h["Host"], h["Zone"], h["State"], h["Status"])
            for h in hosts] == [("cli-a", "az1", "up", "enabled"),
                                ("cli-b", "east", "up", "enabled"),
                                ("cli-c", "az1", "up", "enabled")]
    assert hosts[0]["vCPUs"] == 16 and hosts[0]["Memory MB"] == 65536
    # the zone shown is the one the AvailabilityZoneFilter uses
    for zone, expected in (("east", ["cli-b"]), ("az1", ["cli-a", "cli-c"])):
        placed = daemon.client.explain(
            None, f.request(availability_zone=zone))
        assert sorted(h.host for h in placed.weighed) == expected
    ok(daemon, "aggregate", "delete", "east")
    assert ok(daemon, "host", "list", "-f", "value", "-c", "Host",
              "-c", "Zone").splitlines() == ["cli-a az1", "cli-b None",
                                             "cli-c az1"]


def test_columns_are_chosen_with_c_and_long_adds_some(daemon):
    assert [sorted(h) for h in as_json(daemon, "host", "list", "-c", "Host",
                                       "-c", "State")] == [
        ["Host", "State"]] * 3
    [first, *_rest] = as_json(daemon, "host", "list", "--long")
    assert first["UUID"] == f.host_uuid("cli-a")
    assert first["Instances"] == 0
    table = ok(daemon, "host", "list")
    assert "| Host " in table and "| cli-c " in table


def test_an_aggregate_created_changed_and_deleted_by_name(daemon):
    agg = str(uuid.uuid4())
    created = as_json(daemon, "aggregate", "create", "ssd", "--uuid", agg,
                      "--property", "ssd=true", "--host", "cli-a")
    assert created["uuid"] == agg
    ok(daemon, "aggregate", "set", "ssd", "--name", "fast", "--zone", "west",
       "--property", "disk=nvme")
    assert stored(daemon, agg).obj_to_dict() == {
        "uuid": agg, "name": "fast", "hosts": ["cli-a"],
        "metadata": {"ssd": "true", "disk": "nvme",
                     "availability_zone": "west"}}
    ok(daemon, "aggregate", "unset", "fast", "--property", "ssd")
    shown = as_json(daemon, "aggregate", "add", "host", agg, "cli-c")
    assert shown["hosts"] == ["cli-a", "cli-c"]
    assert shown["properties"] == {"disk": "nvme"}
    ok(daemon, "aggregate", "remove", "host", "fast", "cli-a")
    assert stored(daemon, agg).hosts == ["cli-c"]
    not_in = gantt(daemon, "aggregate", "remove", "host", "fast", "cli-b")
    assert "not in aggregate fast: cli-b" in one_error_line(not_in, 1)
    listed = as_json(daemon, "aggregate", "list")
    assert [(a["Name"], a["Availability Zone"], a["Hosts"])
            for a in listed if a["UUID"] == agg] == [
        ("fast", "west", ["cli-c"])]
    assert as_json(daemon, "aggregate", "show", agg)["name"] == "fast"
    ok(daemon, "aggregate", "delete", "fast")
    assert stored(daemon, agg) is None
    gone = gantt(daemon, "aggregate", "show", agg)
    assert "no such aggregate: %s" % agg in one_error_line(gone, 1)


def test_the_old_aggregate_set_stores_the_name_it_is_given(daemon):
    agg = str(uuid.uuid4())
    done = gantt(daemon, "aggregate-set", agg, "gpu", "--host", "cli-b",
                 "--property", "gpu=a100")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "aggregate %s (gpu) set\n" % agg
    assert "deprecated" in done.stderr
    assert stored(daemon, agg).obj_to_dict() == {
        "uuid": agg, "name": "gpu", "hosts": ["cli-b"],
        "metadata": {"gpu": "a100"}}
    legacy = as_json(daemon, "aggregate-list")
    assert [a["Name"] for a in legacy if a["UUID"] == agg] == ["gpu"]
    ok(daemon, "aggregate-delete", agg)
    assert stored(daemon, agg) is None


def test_an_unknown_host_is_refused_and_nothing_is_stored(daemon):
    refused = gantt(daemon, "aggregate", "create", "typo", "--host",
                    "cli-a", "--host", "cli-z")
    line = one_error_line(refused, 2)
    assert "Unknown host(s) cli-z" in line
    assert not [a for a in daemon.client.get_aggregates(None)
                if a.name == "typo"]
    agg = as_json(daemon, "aggregate", "create", "typo", "--host",
                  "cli-a")["uuid"]
    added = gantt(daemon, "aggregate", "add", "host", agg, "cli-z")
    assert "cli-z" in one_error_line(added, 2)
    assert stored(daemon, agg).hosts == ["cli-a"]
    # refused by the scheduler, whoever calls
    with pytest.raises(exception.HostNotFound):
        daemon.client.set_aggregate(None, aggregate_obj.Aggregate(
            uuid=agg, name="typo", hosts=["cli-a", "cli-y"], metadata={}))
    assert stored(daemon, agg).hosts == ["cli-a"]
    ok(daemon, "aggregate", "delete", agg)


def test_bad_input_is_refused_before_anything_is_sent(daemon):
    bad_uuid = gantt(daemon, "aggregate", "create", "x", "--uuid", "nope")
    assert "not a uuid" in one_error_line(bad_uuid, 2)
    bad_property = gantt(daemon, "aggregate", "create", "x", "--property",
                         "novalue")
    assert "KEY=VALUE" in one_error_line(bad_property, 2)
    assert not [a for a in daemon.client.get_aggregates(None)
                if a.name == "x"]


def test_host_show_and_stats_show(daemon):
    shown = as_json(daemon, "host", "show", "cli-a")
    assert (shown["host"], shown["availability_zone"], shown["up"]) == (
        "cli-a", "az1", True)
    assert shown["location"] == "row=b/rack=b07"
    assert shown["resources"]["VCPU"]["total"] == 16
    legacy = json.loads(ok(daemon, "host-show", f.host_uuid("cli-c"), "-f",
                           "json"))
    assert legacy["host"] == "cli-c"
    missing = gantt(daemon, "host", "show", "cli-nope")
    assert "no such host: cli-nope" in one_error_line(missing, 1)
    stats = as_json(daemon, "stats", "show")
    assert stats["hosts"] == len(HOSTS)
    assert ok(daemon, "stats", "-f", "value", "-c", "hosts").strip() == "3"


def test_the_shipped_example_request_explains(daemon, tmp_path):
    example = ok(daemon, "explain", "--example")
    assert yaml.safe_load(example)["flavor"]["vcpus"] == 2
    spec = tmp_path / "request.yaml"
    spec.write_text(example)
    text = ok(daemon, "explain", str(spec))
    assert text.startswith("3 of 3 hosts")
    assert "Best 3 of 3 hosts" in text
    # the profile that ranked: Gantt's default, which packs
    assert "\nProfile: default, packing: balanced+stack\n" in text
    result = as_json(daemon, "explain", str(spec), "--limit", "2")
    assert (result["considered"], result["passed"]) == (3, 3)
    assert len(result["weighed"]) == 2


def test_a_bad_spec_file_is_one_line(daemon, tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("flavor: {vcpus: 1, gpus: 2}\n")
    done = gantt(daemon, "explain", str(spec))
    assert "flavor: unknown field(s) gpus" in one_error_line(done, 2)
    missing = gantt(daemon, "explain", str(tmp_path / "nowhere.yaml"))
    assert "nowhere.yaml" in one_error_line(missing, 2)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_broker_that_is_down_is_one_line_soon(daemon, tmp_path):
    port = _closed_port()
    conf = tmp_path / "down.conf"
    conf.write_text("[DEFAULT]\ntransport_url = rabbit://guest:guest@"
                    "127.0.0.1:%d/\n" % port)
    started = time.monotonic()
    done = gantt(daemon, "host", "list", config=str(conf))
    took = time.monotonic() - started
    line = one_error_line(done, 1)
    assert "Cannot reach the message broker at 127.0.0.1:%d" % port in line
    assert done.stdout == ""
    assert took < idle_run_seconds(tmp_path) + 10, took


@pytest.mark.parametrize("url", ["foo://somewhere/", "rabbit://u:p@[::1/"])
def test_a_bad_transport_url_is_one_line(tmp_path, url):
    conf = tmp_path / "bad.conf"
    conf.write_text("[DEFAULT]\ntransport_url = %s\n" % url)
    done = subprocess.run([GANTT, "--config-file", str(conf), "host",
                           "list"], capture_output=True, text=True,
                          timeout=waiting.CALL)
    assert "gantt: [DEFAULT] transport_url: " in one_error_line(done, 2)


def test_no_scheduler_on_the_topic_is_one_line_after_the_timeout(daemon,
                                                                  tmp_path):
    conf = tmp_path / "nobody.conf"
    conf.write_text(open(daemon.conf_file).read()
                    + "\n[scheduler]\ntopic = gantt-nobody-%s\n"
                    % uuid.uuid4().hex[:8])
    started = time.monotonic()
    done = gantt(daemon, "--timeout", "2", "stats", "show",
                 config=str(conf))
    took = time.monotonic() - started
    assert "no gantt-scheduler answered" in one_error_line(done, 1)
    assert "within 2 s" in done.stderr
    assert took < idle_run_seconds(tmp_path) + 10, took
    bad = gantt(daemon, "--timeout", "0", "stats", "show")
    assert bad.returncode == 2 and "positive" in bad.stderr


def test_a_closed_pipe_is_no_traceback(daemon):
    proc = subprocess.Popen([GANTT, "--config-file", daemon.conf_file,
                             "host", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()          # the reader is gone before any output
    _out, err = proc.communicate(timeout=waiting.CALL)
    assert proc.returncode == 141, err
    assert err == ""
    shell = subprocess.run(
        "set -o pipefail; '%s' --config-file '%s' host list -f value "
        "-c Host | head -1" % (GANTT, daemon.conf_file), shell=True,
        executable=shutil.which("bash"), capture_output=True, text=True,
        timeout=waiting.CALL)
    assert shell.stdout == "cli-a\n"
    assert shell.stderr == ""


def test_config_dir_is_read(daemon, tmp_path):
    confdir = tmp_path / "gantt.conf.d"
    confdir.mkdir()
    shutil.copy(daemon.conf_file, confdir / "10-gantt.conf")
    done = subprocess.run([GANTT, "--config-dir", str(confdir), "host",
                           "list", "-f", "value", "-c", "Host"],
                          capture_output=True, text=True, timeout=waiting.CALL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == list(HOSTS)


def test_help_needs_no_scheduler():
    done = subprocess.run([GANTT, "aggregate", "create", "--help"],
                          capture_output=True, text=True, timeout=waiting.CALL)
    assert done.returncode == 0, done.stderr
    assert "usage: gantt aggregate create" in done.stdout
    assert "--uuid UUID" in done.stdout
    listing = subprocess.run([GANTT, "help"], capture_output=True,
                             text=True, timeout=waiting.CALL)
    assert "host list" in listing.stdout
    assert "aggregate-set" not in listing.stdout      # deprecated, hidden
