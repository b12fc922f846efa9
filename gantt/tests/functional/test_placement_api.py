"""The Placement REST API and the scheduler share one truth.

``gantt-api`` runs as a real process (its console script) on the
scheduler's database and broker, beside a real ``gantt-scheduler`` with
three workers, on MariaDB and then PostgreSQL. A REST allocation reaches
every worker's cache as a claim of another worker does; a REST ``PUT``
and a claim racing for the last slot have exactly one winner.
"""

import json
import os
import socket
import subprocess
import threading
import urllib.error
import urllib.request
import uuid

import pytest
import sqlalchemy as sa
import webob

from gantt import exception
from gantt.api import app as app_mod
from gantt.db import allocations
from gantt.objects import selection as selection_obj
from gantt.tests import factories as f
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.functional import conftest as functional
from gantt.tests.functional import invariants
from gantt.tests.functional import waiting

LATEST = "placement latest"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ApiProcess:
    """``gantt-api`` started from its console script."""

    def __init__(self, tmpdir, daemon, extra=""):
        """:param extra: more options of ``[api]``"""
        self.port = _free_port()
        self.conf_file = os.path.join(tmpdir, "api.conf")
        self.log_file = os.path.join(tmpdir, "api.log")
        with open(self.conf_file, "w") as out:
            out.write("[DEFAULT]\ntransport_url = %s\n[database]\n"
                      "connection = %s\n[scheduler]\ntopic = %s\n"
                      "[api]\nauth_strategy = noauth2\nport = %d\n%s\n" % (
                          daemon.conf.transport_url, daemon.db_url,
                          daemon.topic, self.port, extra))
        self.url = "http://127.0.0.1:%d" % self.port

    def start(self):
        self._log = open(self.log_file, "w")
        self.proc = subprocess.Popen(
            [os.path.join(functional.BIN, "gantt-api"), "--config-file",
             self.conf_file], stdout=self._log, stderr=subprocess.STDOUT)
        waiting.until("gantt-api serving on port %d" % self.port,
                      self._serving, log=self.log)
        return self

    def _serving(self):
        """Whether it logged that it serves (its listening line)."""
        assert self.proc.poll() is None, self.log()
        return waiting.API_SERVING in self.log()

    def call(self, method, path, body=None):
        """(status, JSON body or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header("X-Auth-Token", "admin")
        req.add_header("OpenStack-API-Version", LATEST)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=waiting.CALL) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")

    def log(self):
        with open(self.log_file) as log:
            return log.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(waiting.WAIT)
        self._log.close()


@pytest.fixture
def api(tmp_path, daemon):
    proc = ApiProcess(str(tmp_path), daemon).start()
    yield proc
    proc.stop()
    assert "Traceback" not in proc.log(), proc.log()


def _allocation(rp, vcpus, generation=None):
    return {"allocations": {rp: {"resources": {"VCPU": vcpus}}},
            "project_id": "p", "user_id": "u",
            "consumer_generation": generation, "consumer_type": "INSTANCE"}


def _used_vcpu(states, rp):
    """VCPU used on ``rp`` as one worker answers (None: it does not know
    the host yet: the report is a fanout cast, each worker applies it in
    its own time)."""
    found = [s for s in states if s.uuid == rp]
    if not found:
        return None
    (vcpu,) = [r for r in found[0].resources if r.resource_class == "VCPU"]
    return vcpu.used


def _every_worker(daemon, what, holds):
    """Until each worker, by name, has answered get_statistics with
    ``holds`` (each call goes to one of them)."""
    waiting.every_worker(what, lambda: daemon.client.get_statistics(None),
                         holds, daemon.workers, log=daemon.log)


def test_a_rest_allocation_reaches_every_worker(daemon_factory, server_db,
                                                tmp_path):
    """Each worker's own statistics say when it has the host (``hosts``)
    and when it has applied the API's usage cast (``peer_updates``: the
    only usage news, with no sync and no claim): the test waits on that
    state, worker by worker, not on a run of answers."""
    # no periodic usage sync: only the API's cast can tell the workers
    daemon = daemon_factory(server_db.url, workers=3,
                            extra="usage_sync_interval = 0\n")
    node = f.cast_report(daemon.client, "h000", vcpus=2)
    # every worker knows the host before the allocation is written
    _every_worker(daemon, "host h000 held", lambda s: s.hosts == 1)
    api = ApiProcess(str(tmp_path), daemon).start()
    try:
        status, _ = api.call("PUT", "/allocations/" + str(uuid.uuid4()),
                             _allocation(node.uuid, 2))
        assert status == 204
        _every_worker(daemon, "the API's usage cast applied",
                      lambda s: s.peer_updates >= 1)
        # so whichever worker answers, the host is full
        for _ in range(6):
            assert _used_vcpu(daemon.client.get_host_states(None),
                              node.uuid) == 2
        with pytest.raises(exception.NoValidHost):
            daemon.client.select_destinations(
                None, f.request(f.flavor(vcpus=1, memory_mb=512,
                                         root_gb=1)), f.uuids(1))
        assert "Traceback" not in api.log(), api.log()
    finally:
        api.stop()


def test_osc_style_reads_of_a_reported_host(api, daemon):
    """What ``openstack resource provider ...`` reads, for a host the
    scheduler knows from its agent's report."""
    node = f.cast_report(daemon.client, "h001", vcpus=4)
    daemon.wait_for_hosts(1)
    status, found = api.call("GET", "/resource_providers?name=h001")
    assert status == 200
    assert [p["uuid"] for p in found["resource_providers"]] == [node.uuid]
    status, inv = api.call("GET", "/resource_providers/%s/inventories" %
                           node.uuid)
    assert inv["inventories"]["VCPU"]["total"] == 4


# -- the race on the last slot ------------------------------------------------

def _app(db):
    conf = gantt_fixtures.make_conf(**{"api.auth_strategy": "noauth2",
                                       "api.notify_workers": False})
    return app_mod.make_app(conf, db=db)


def _put(app, consumer, rp):
    req = webob.Request.blank("/allocations/" + consumer, method="PUT")
    req.headers.update({"X-Auth-Token": "admin",
                        "OpenStack-API-Version": LATEST})
    req.body = json.dumps(_allocation(rp, 1)).encode()
    req.content_type = "application/json"
    return req.get_response(app)


def _holders(db):
    with db.engine.connect() as conn:
        return {r[0] for r in conn.execute(sa.text(
            "SELECT consumer_uuid FROM allocations"))}


def _held_before_swap(monkeypatch, consumer):
    """Hold ``consumer``'s claim just before its compare-and-swap."""
    checked, go_on = threading.Event(), threading.Event()
    swap = allocations._bump_generations

    def held_swap(conn, providers, who):
        if who == consumer and not go_on.is_set():
            checked.set()
            assert go_on.wait(30)
        return swap(conn, providers, who)

    monkeypatch.setattr(allocations, "_bump_generations", held_swap)
    return checked, go_on


def test_rest_put_held_loses_to_an_rpc_claim(daemon, monkeypatch):
    """The REST PUT reads the last VCPU free and is held before its swap;
    the worker's claim (RPC ``claim_allocations``) commits; the PUT then
    loses: 409, nothing written."""
    node = f.cast_report(daemon.client, "solo", vcpus=1)
    daemon.wait_for_hosts(1)
    rest, rpc = f.uuids(2)
    checked, go_on = _held_before_swap(monkeypatch, rest)
    answer = {}
    thread = threading.Thread(target=lambda: answer.update(
        resp=_put(_app(daemon.database), rest, node.uuid)))
    thread.start()
    assert checked.wait(30)
    daemon.client.claim_allocations(
        None, rpc, selection_obj.AllocationRequest(allocations=[
            selection_obj.AllocationItem(resource_provider_uuid=node.uuid,
                                         resources={"VCPU": 1})]))
    go_on.set()
    thread.join(30)
    assert answer["resp"].status_int == 409
    assert _holders(daemon.database) == {rpc}
    assert invariants.check(daemon.database).violations() == {}


def test_a_claim_held_loses_to_a_rest_put(daemon, monkeypatch):
    """The other way round: the scheduler's claim (the code behind every
    RPC claim) is held before its swap while a REST PUT commits."""
    node = f.cast_report(daemon.client, "solo", vcpus=1)
    daemon.wait_for_hosts(1)
    rest, rpc = f.uuids(2)
    checked, go_on = _held_before_swap(monkeypatch, rpc)
    result = {}

    def claim():
        try:
            with daemon.database.begin() as conn:
                allocations.claim(conn, rpc, {node.uuid: {"VCPU": 1}})
            result["claim"] = "won"
        except exception.ClaimConflict:
            result["claim"] = "lost"

    thread = threading.Thread(target=claim)
    thread.start()
    assert checked.wait(30)
    assert _put(_app(daemon.database), rest, node.uuid).status_int == 204
    go_on.set()
    thread.join(30)
    assert result == {"claim": "lost"}
    assert _holders(daemon.database) == {rest}
    assert invariants.check(daemon.database).violations() == {}
