"""A COMPUTE_NODE root made through the REST API gets a host row (see
gantt.db.api_hosts), and the workers are told which trees changed."""

import uuid

import pytest
import sqlalchemy as sa

from gantt.api import app as app_mod
from gantt.db import hosts as db_hosts
from gantt.db import reports
from gantt.db.models import REPORTS
from gantt.tests import factories
from gantt.tests.unit.api.conftest import Client

LATEST = "1.39"
INVENTORY = {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}}


class Told:
    """The notifier: which roots each write named."""

    def __init__(self):
        self.roots = []

    def usage_changed(self, states):
        pass

    def providers_changed(self, root_uuids=()):
        self.roots.append(list(root_uuids))


@pytest.fixture
def told():
    return Told()


@pytest.fixture
def api(api_conf, sqlite_db, told):
    client = Client(app_mod.make_app(api_conf, db=sqlite_db, notifier=told))
    client.db = sqlite_db
    return client


def _ok(resp, status=200):
    assert resp.status_int == status, resp.body
    return resp.json if resp.body else None


def _node(api, name, traits=("COMPUTE_NODE",), node=None, parent=None):
    node = node or str(uuid.uuid4())
    body = {"name": name, "uuid": node}
    if parent:
        body["parent_provider_uuid"] = parent
    _ok(api.post("/resource_providers", body, version=LATEST))
    gen = _ok(api.put("/resource_providers/%s/inventories" % node, {
        "resource_provider_generation": 0, "inventories": INVENTORY},
        version=LATEST))["resource_provider_generation"]
    _set_traits(api, node, traits, gen)
    return node


def _generation(api, node):
    return _ok(api.get("/resource_providers/" + node,
                       version=LATEST))["generation"]


def _set_traits(api, node, traits, gen=None):
    gen = _generation(api, node) if gen is None else gen
    _ok(api.put("/resource_providers/%s/traits" % node, {
        "resource_provider_generation": gen, "traits": list(traits)},
        version=LATEST))


def _host_rows(db):
    with db.begin() as conn:
        return {r.host: r for r in conn.execute(sa.select(REPORTS))}


def test_a_compute_node_root_becomes_a_host(api, told):
    node = _node(api, "cn1")
    (row,) = _host_rows(api.db).values()
    # in Nova's default zone ([nova] default_availability_zone) until an
    # aggregate names another
    assert (row.host, row.nodename, row.disabled, row.source,
            row.cell_uuid, row.availability_zone) == (
        "cn1", "cn1", False, "placement-api", None, "nova")
    assert row.report_sequence == db_hosts.RESET_SEQUENCE
    # every write named the node's tree
    assert told.roots == [[node]] * 3


def test_the_node_is_in_nova_s_default_cell_and_zone(api_conf, sqlite_db,
                                                    told):
    """Nova's computes name no cell to Placement; the Selections name
    ``[nova] default_cell_uuid`` for such a node, and so does its row, so
    that a move Nova keeps in the instance's cell still finds it. A node
    in no zone aggregate is in ``[nova] default_availability_zone`` to
    Nova: the row says so, so that a request for that zone finds it."""
    cell = str(uuid.uuid4())
    api_conf.set_override("default_cell_uuid", cell, "nova")
    api = Client(app_mod.make_app(api_conf, db=sqlite_db, notifier=told))
    api.db = sqlite_db
    node = _node(api, "cn-cell")
    assert _host_rows(sqlite_db)["cn-cell"].cell_uuid == cell
    other = str(uuid.uuid4())
    api_conf.set_override("default_cell_uuid", other, "nova")
    api_conf.set_override("default_availability_zone", "az0", "nova")
    _set_traits(api, node, ["COMPUTE_NODE", "HW_CPU_X86_AVX2"])
    row = _host_rows(sqlite_db)["cn-cell"]
    assert (row.cell_uuid, row.availability_zone) == (other, "az0")


def test_without_compute_node_there_is_no_host(api):
    _node(api, "plain", traits=["HW_CPU_X86_AVX2"])
    assert _host_rows(api.db) == {}


def test_the_disabled_trait_disables_and_a_write_refreshes(api):
    node = _node(api, "cn2")
    seen = _host_rows(api.db)["cn2"].received_at
    _set_traits(api, node, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])
    row = _host_rows(api.db)["cn2"]
    assert row.disabled and row.received_at >= seen
    _set_traits(api, node, ["COMPUTE_NODE"])
    assert not _host_rows(api.db)["cn2"].disabled


def test_losing_the_trait_or_the_provider_ends_the_host(api):
    node = _node(api, "cn3")
    _set_traits(api, node, [])
    assert _host_rows(api.db) == {}
    _set_traits(api, node, ["COMPUTE_NODE"])
    assert set(_host_rows(api.db)) == {"cn3"}
    _ok(api.delete("/resource_providers/" + node, version=LATEST), 204)
    assert _host_rows(api.db) == {}


def test_a_rename_follows_as_nodename_the_host_stays(api):
    node = _node(api, "cn4")
    _ok(api.put("/resource_providers/" + node, {"name": "cn4-renamed"},
                version=LATEST))
    row = _host_rows(api.db)["cn4"]
    assert row.nodename == "cn4-renamed"


def test_a_child_write_names_the_root_and_makes_no_host(api, told):
    root = _node(api, "cn5")
    # a child with the trait is no host: only roots are
    _node(api, "cn5-numa0", parent=root)
    assert set(_host_rows(api.db)) == {"cn5"}
    assert told.roots[-1] == [root]
    # moved under another root, a root is a host no longer
    other = _node(api, "cn6")
    _ok(api.put("/resource_providers/" + other, {
        "name": "cn6", "parent_provider_uuid": root}, version=LATEST))
    assert set(_host_rows(api.db)) == {"cn5"}


def test_a_host_name_held_by_an_agent_gives_no_host(api):
    # an agent's host name need not be its node's (the provider's) name
    node = factories.compute_node_obj("taken")
    node.nodename = "taken-node"
    assert reports.save_report(api.db, node).applied
    other = _node(api, "taken")
    rows = _host_rows(api.db)
    assert list(rows) == ["taken"] and rows["taken"].source is None
    assert other != node.uuid


def test_an_agent_takes_the_node_over_and_rest_leaves_its_row(api):
    name = "cn7"
    node = _node(api, name, node=factories.host_uuid(name))
    report = factories.compute_node_obj(name, vcpus=32, sequence=1,
                                        zone="az1")
    assert reports.save_report(api.db, report).applied
    row = _host_rows(api.db)[name]
    assert (row.source, row.availability_zone, row.report_sequence) == (
        None, "az1", 1)
    _set_traits(api, node, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])
    row = _host_rows(api.db)[name]
    assert (row.source, row.disabled) == (None, False)
