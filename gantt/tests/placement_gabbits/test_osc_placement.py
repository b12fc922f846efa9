"""The real ``openstack resource provider ...`` CLI against ``gantt-api``.

osc-placement (in this folder's virtualenv, next to openstack-placement)
run as an operator runs it, in a subprocess, against a real ``gantt-api``
process (the console script) on a throw-away PostgreSQL database, with no
Keystone: ``noauth2`` on Gantt's side and keystoneauth's ``admin_token``
plugin on the client's (``--os-endpoint`` and ``--os-token admin``, the
user ``admin`` having the admin role under ``noauth2``). Run by
``tools/placement_gabbits.sh osc`` and ``tox -e placement-gabbits``.
"""

import json
import os
import socket
import subprocess
import sys
import urllib.request
import uuid

import pytest

from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
MICROVERSION = "1.39"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url, proc):
    def answers():
        assert proc.poll() is None, "gantt-api exited"
        with urllib.request.urlopen(url, timeout=waiting.CALL):
            return True
    waiting.until("gantt-api answering on %s" % url, answers,
                  ignoring=OSError, interval=0.2)


def _write_conf(path, db_url, port):
    with open(path, "w") as f:
        f.write("[database]\nconnection = %s\n\n[api]\nauth_strategy = "
                "noauth2\nhost = 127.0.0.1\nport = %d\nnotify_workers = "
                "false\n" % (db_url, port))


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    """A ``gantt-api`` process on a fresh PostgreSQL database."""
    database = gantt_fixtures.Database("postgresql")
    database.setUp()
    port = _free_port()
    conf = str(tmp_path_factory.mktemp("gantt-api") / "gantt.conf")
    _write_conf(conf, database.url, port)
    log = open(conf + ".log", "w")
    proc = subprocess.Popen([os.path.join(BIN, "gantt-api"),
                             "--config-file", conf],
                            stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d" % port
    try:
        _wait_for(url + "/", proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=waiting.WAIT)
        log.close()
        database.cleanUp()


def openstack(endpoint, *args):
    """``openstack ARGS -f json`` as an admin without Keystone."""
    done = subprocess.run(
        [os.path.join(BIN, "openstack"), "--os-auth-type", "admin_token",
         "--os-endpoint", endpoint, "--os-token", "admin",
         "--os-placement-api-version", MICROVERSION, *args, "-f", "json"],
        capture_output=True, text=True, timeout=waiting.CALL)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_an_operator_creates_a_provider_and_lists_it(endpoint):
    created = openstack(endpoint, "resource", "provider", "create",
                        "osc-node-1")
    listed = openstack(endpoint, "resource", "provider", "list",
                       "--name", "osc-node-1")
    assert [(p["uuid"], p["name"], p["generation"]) for p in listed] == [
        (created["uuid"], "osc-node-1", 0)]


def test_an_operator_sets_inventory_and_reads_it_back(endpoint):
    rp = openstack(endpoint, "resource", "provider", "create",
                   "osc-node-2")["uuid"]
    openstack(endpoint, "resource", "provider", "inventory", "set", rp,
              "--resource", "VCPU=8", "--resource",
              "VCPU:allocation_ratio=4.0", "--resource", "MEMORY_MB=4096",
              "--resource", "MEMORY_MB:reserved=512")
    shown = {inv["resource_class"]: inv for inv in openstack(
        endpoint, "resource", "provider", "inventory", "list", rp)}
    assert sorted(shown) == ["MEMORY_MB", "VCPU"]
    assert (shown["VCPU"]["total"], shown["VCPU"]["allocation_ratio"]) == (
        8, 4.0)
    assert (shown["MEMORY_MB"]["total"],
            shown["MEMORY_MB"]["reserved"]) == (4096, 512)


def test_usage_shows_what_an_allocation_takes(endpoint):
    rp = openstack(endpoint, "resource", "provider", "create",
                   "osc-node-3")["uuid"]
    openstack(endpoint, "resource", "provider", "inventory", "set", rp,
              "--resource", "VCPU=8", "--resource", "MEMORY_MB=4096")
    empty = openstack(endpoint, "resource", "provider", "usage", "show", rp)
    assert {u["resource_class"]: u["usage"] for u in empty} == {
        "VCPU": 0, "MEMORY_MB": 0}
    consumer = str(uuid.uuid4())
    openstack(endpoint, "resource", "provider", "allocation", "set",
              consumer, "--allocation",
              "rp=%s,VCPU=2,MEMORY_MB=1024" % rp,
              "--project-id", str(uuid.uuid4()),
              "--user-id", str(uuid.uuid4()), "--consumer-type", "INSTANCE")
    used = openstack(endpoint, "resource", "provider", "usage", "show", rp)
    assert {u["resource_class"]: u["usage"] for u in used} == {
        "VCPU": 2, "MEMORY_MB": 1024}
    shown = openstack(endpoint, "resource", "provider", "allocation", "show",
                      consumer)
    assert [(a["resource_provider"], a["resources"]) for a in shown] == [
        (rp, {"VCPU": 2, "MEMORY_MB": 1024})]
