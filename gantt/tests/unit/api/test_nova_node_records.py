"""A compute node nova-compute makes through the REST API takes its
service host and hypervisor capabilities from Nova's own record of it
(``[nova] api_database_connection``; see gantt.nova.compute_nodes), as
nova-scheduler reads them: here Nova's two tables are SQLite files."""

import json
import logging
import uuid

import pytest
import sqlalchemy as sa

from gantt.api import app as app_mod
from gantt.db import tree_load
from gantt.db.models import REPORTS
from gantt.nova import compute_nodes
from gantt.scheduler.state import load as load_mod
from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.unit.api import test_compute_hosts as hosts
from gantt.tests.unit.api.conftest import Client

X86_KVM = json.dumps([["x86_64", "kvm", "hvm"]])


@pytest.fixture
def nova(tmp_path):
    return gantt_fixtures.NovaRecords(
        "sqlite:///%s" % (tmp_path / "nova_api.sqlite"),
        "sqlite:///%s" % (tmp_path / "nova_cell1.sqlite"))


@pytest.fixture
def api(api_conf, sqlite_db, nova):
    api_conf.set_override("api_database_connection", nova.api_url, "nova")
    client = Client(app_mod.make_app(api_conf, db=sqlite_db,
                                     notifier=hosts.Told()))
    client.db = sqlite_db
    return client


def _seen_by_workers(db, node):
    """The host a worker's cache takes from the database."""
    stored, _roots = tree_load.load_trees(db, {node})
    (host,) = stored
    return load_mod.stored_host(host)


def test_the_service_host_and_capabilities_are_nova_s(api, nova):
    node = str(uuid.uuid4())
    nova.add_node(node, "compute", "fake-mini", hypervisor_type="kvm",
                  hypervisor_version=8002000, supported_instances=X86_KVM)
    assert hosts._node(api, "fake-mini", node=node) == node
    row = hosts._host_rows(api.db)["compute"]
    # in the cell whose database holds the record, not the default one
    assert (row.host, row.nodename, row.cell_uuid) == (
        "compute", "fake-mini", nova.cell_uuid)
    seen = _seen_by_workers(api.db, node)
    assert (seen.host, seen.nodename) == ("compute", "fake-mini")
    assert seen.capabilities == {
        "hypervisor_type": "kvm", "hypervisor_version": 8002000,
        "supported_instances": X86_KVM}


def test_without_a_record_the_node_names_the_host_until_one_is_read(
        api, nova):
    node = str(uuid.uuid4())
    hosts._node(api, "cn-late", node=node)
    row = hosts._host_rows(api.db)["cn-late"]
    assert (row.nodename, row.details) == ("cn-late", "{}")
    # Nova's record shows up (an upgrade: the option set later); the
    # node's next write takes it
    nova.add_node(node, "svc-late", "cn-late", supported_instances=X86_KVM)
    hosts._set_traits(api, node, ["COMPUTE_NODE", "HW_CPU_X86_AVX2"])
    assert set(hosts._host_rows(api.db)) == {"svc-late"}
    assert hosts._host_rows(api.db)["svc-late"].cell_uuid == nova.cell_uuid
    assert _seen_by_workers(api.db, node).capabilities == {
        "supported_instances": X86_KVM}


def test_a_deleted_record_is_not_read(api, nova):
    node = str(uuid.uuid4())
    nova.add_node(node, "old-service", "cn-del", deleted=1)
    hosts._node(api, "cn-del", node=node)
    assert set(hosts._host_rows(api.db)) == {"cn-del"}


def test_two_nodes_of_one_service_host_make_one_host(api, nova, caplog):
    """One host name, one compute node: the second node of a service
    (Ironic's many nodes) is no host, and the log says why."""
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    nova.add_node(first, "ironic-svc", "node-a")
    nova.add_node(second, "ironic-svc", "node-b")
    hosts._node(api, "node-a", node=first)
    with caplog.at_level(logging.WARNING):
        hosts._node(api, "node-b", node=second)
    assert [(r.host, r.nodename) for r in hosts._host_rows(
        api.db).values()] == [("ironic-svc", "node-a")]
    assert "another compute node is host ironic-svc" in caplog.text


def test_nova_s_databases_unreadable_leave_the_node_named_after_itself(
        api_conf, sqlite_db, tmp_path, caplog):
    """A wrong URL is logged; the REST write still succeeds."""
    api_conf.set_override(
        "api_database_connection",
        "sqlite:///%s" % (tmp_path / "no" / "such.sqlite"), "nova")
    api = Client(app_mod.make_app(api_conf, db=sqlite_db,
                                  notifier=hosts.Told()))
    with caplog.at_level(logging.WARNING):
        hosts._node(api, "cn-unread")
    assert set(hosts._host_rows(sqlite_db)) == {"cn-unread"}
    assert "could not be read from Nova's databases" in caplog.text


def test_a_templated_cell_url_is_skipped_with_a_warning(nova, caplog):
    engine = sa.create_engine(nova.api_url)
    with engine.begin() as conn:
        conn.execute(nova.cells.update().where(
            nova.cells.c.name == "cell1").values(
                database_connection="{scheme}://{username}@db/nova"))
    engine.dispose()
    node = str(uuid.uuid4())
    nova.add_node(node, "compute", "fake-mini")
    reader = compute_nodes.SqlComputeNodes(nova.api_url)
    with caplog.at_level(logging.WARNING):
        assert reader.lookup(node) is None
    assert "Cell cell1" in caplog.text and "template" in caplog.text
    reader.dispose()


def test_the_reader_looks_in_every_cell_but_cell0(nova, tmp_path):
    node = str(uuid.uuid4())
    nova.add_node(node, "compute", "fake-mini")
    reader = compute_nodes.from_conf(gantt_fixtures.make_conf(**{
        "nova.api_database_connection": nova.api_url}))
    assert reader.lookup(node) == compute_nodes.NodeRecord(
        host="compute", nodename="fake-mini", cell_uuid=nova.cell_uuid)
    assert reader.lookup(str(uuid.uuid4())) is None
    reader.dispose()
    assert compute_nodes.from_conf(gantt_fixtures.make_conf()) is None


def test_no_reader_no_lookup(api_conf, sqlite_db):
    """Without the option nothing of Nova's is read (the module's
    default): the row is named after the node."""
    api = Client(app_mod.make_app(api_conf, db=sqlite_db,
                                  notifier=hosts.Told()))
    hosts._node(api, "cn-plain")
    with sqlite_db.begin() as conn:
        row = conn.execute(sa.select(REPORTS)).one()
    assert (row.host, row.details) == ("cn-plain", "{}")
