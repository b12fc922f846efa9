"""Placement over the shared cloud, in-process (reference venv only).

The real Placement WSGI app through ``placement.direct.PlacementDirect``
(wsgi-intercept: a real requests/keystoneauth client and the full
middleware stack, no socket), at microversion ``latest``, on a database
whose schema Placement's own alembic migrations created and whose traits and
resource classes Placement synced itself.

The cloud is bulk-inserted with SQL into that schema (the HTTP API would
take several requests per provider): one compute-node provider per host
with its VCPU / MEMORY_MB / DISK_GB inventory, its traits (disabled hosts
carry COMPUTE_STATUS_DISABLED, as nova-compute sets it), its zone and rack
aggregates, and one consumer per running instance with its allocations.

The tree scenario (:mod:`trees`) is bulk-inserted the same way by
:class:`TreePopulator`: every provider row with its parent and root, its
inventories, traits (the custom physnet traits created through the API
first) and aggregates, the sharing pools, and the running instances'
allocations spread over each tree and its pool.
"""

import datetime
import logging

import fleet
import os_resource_classes as orc
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from placement import conf as placement_conf
from placement import db_api
from placement import direct
from placement.db.sqlalchemy import models

# the flat scenario's requests, shared with the Gantt REST side
from placement_requests import claim_body  # noqa: F401
from placement_requests import query  # noqa: F401
import sqlalchemy as sa
import trees

logging.basicConfig(level=logging.WARNING)

RESOURCES = ("VCPU", "MEMORY_MB", "DISK_GB")
RC_ID = {name: orc.STANDARDS.index(name) for name in RESOURCES}


def _seed(engine, t, trait_names, aggregates):
    """The rows every populated cloud needs: the project, the user and the
    aggregates (``[(id, uuid)]``); checks the traits exist.

    :returns: ({trait name: id}, the consumer type id or None)
    """
    with engine.begin() as conn:
        trait_id = dict(conn.execute(
            sa.select(t["traits"].c.name, t["traits"].c.id)
            .where(t["traits"].c.name.in_(trait_names))).all())
        missing = set(trait_names) - set(trait_id)
        assert not missing, "traits not synced or created: %s" % missing
        now = datetime.datetime.utcnow()
        conn.execute(t["projects"].insert(), [
            {"id": 1, "external_id": fleet.PROJECT_ID, "created_at": now}])
        conn.execute(t["users"].insert(), [
            {"id": 1, "external_id": fleet.USER_ID, "created_at": now}])
        ct = conn.execute(sa.select(t["consumer_types"].c.id)).first()
        if aggregates:
            conn.execute(t["placement_aggregates"].insert(), [
                {"id": agg_id, "uuid": uuid, "created_at": now}
                for agg_id, uuid in aggregates])
    return trait_id, (ct[0] if ct else None)


class Populator:
    """Bulk-inserts hosts of the cloud into Placement's schema."""

    def __init__(self, engine, cloud):
        self.engine = engine
        self.cloud = cloud
        self.t = models.BASE.metadata.tables
        self.agg_ids = {name: k + 1 for k, name in enumerate(
            sorted(cloud.aggregates))}
        self.done = 0
        names = set(fleet.COMMON_TRAITS + fleet.OPTIONAL_TRAITS
                    + (fleet.DISABLED_TRAIT,))
        self.trait_id, self.consumer_type_id = _seed(
            engine, self.t, names,
            [(self.agg_ids[name], agg["uuid"])
             for name, agg in sorted(cloud.aggregates.items())])

    def grow_to(self, count, batch=2000, progress=None):
        """Insert the hosts not inserted yet, up to ``count``."""
        hosts = self.cloud.hosts[:count]
        for lo in range(self.done, len(hosts), batch):
            self._insert(hosts[lo:lo + batch])
            if progress:
                progress(min(lo + batch, len(hosts)))
        self.done = len(hosts)
        if self.engine.dialect.name == "postgresql":
            # rows were inserted with explicit ids: move the sequences on so
            # that Placement's own inserts (a new project...) don't collide
            with self.engine.begin() as conn:
                for table in ("resource_providers", "placement_aggregates",
                              "projects", "users"):
                    conn.execute(sa.text(
                        "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                        "(SELECT max(id) FROM %s))" % (table, table)))

    def _insert(self, hosts):
        now = datetime.datetime.utcnow()
        rows = {name: [] for name in (
            "resource_providers", "inventories", "resource_provider_traits",
            "resource_provider_aggregates", "consumers", "allocations")}
        for host in hosts:
            self._rows(host, now, rows)
        with self.engine.begin() as conn:
            for name, values in rows.items():
                for lo in range(0, len(values), 5000):
                    conn.execute(self.t[name].insert(), values[lo:lo + 5000])

    def _rows(self, host, now, rows):
        rp_id = host["index"] + 1
        rows["resource_providers"].append({
            "id": rp_id, "uuid": host["uuid"], "name": host["name"],
            "generation": 1, "root_provider_id": rp_id,
            "parent_provider_id": None, "created_at": now})
        for rc, total, reserved, ratio in (
                ("VCPU", host["vcpus"], 0, fleet.CPU_RATIO),
                ("MEMORY_MB", host["memory_mb"], fleet.RESERVED_MB,
                 fleet.RAM_RATIO),
                ("DISK_GB", host["disk_gb"], 0, fleet.DISK_RATIO)):
            rows["inventories"].append({
                "resource_provider_id": rp_id, "resource_class_id": RC_ID[rc],
                "total": total, "reserved": reserved, "min_unit": 1,
                "max_unit": total, "step_size": 1, "allocation_ratio": ratio,
                "created_at": now})
        rows["resource_provider_traits"] += [
            {"resource_provider_id": rp_id, "trait_id": self.trait_id[x],
             "created_at": now} for x in host["traits"]]
        rows["resource_provider_aggregates"] += [
            {"resource_provider_id": rp_id,
             "aggregate_id": self.agg_ids[name], "created_at": now}
            for name in host["aggregates"]]
        for consumer, size in self.cloud.instances_of(host):
            rows["consumers"].append({
                "uuid": consumer,
                "project_id": 1, "user_id": 1, "generation": 1,
                "consumer_type_id": self.consumer_type_id,
                "created_at": now})
            for rc, used in zip(RESOURCES, size, strict=True):
                rows["allocations"].append({
                    "resource_provider_id": rp_id, "consumer_id": consumer,
                    "resource_class_id": RC_ID[rc], "used": used,
                    "created_at": now})


class TreePopulator:
    """Bulk-inserts hosts of a :class:`trees.TreeCloud` (their trees and
    their aggregates' sharing pools) into Placement's schema."""

    def __init__(self, engine, tc):
        self.engine = engine
        self.tc = tc
        self.t = models.BASE.metadata.tables
        self.done = 0
        t = self.t
        names = {x for p in tc.providers for x in p["traits"]}
        classes = {rc for p in tc.providers for rc in p["inventories"]}
        self.rc_id = {name: orc.STANDARDS.index(name) for name in classes}
        self.agg_ids = {agg["uuid"]: k + 1 for k, (_name, agg) in enumerate(
            sorted(tc.aggregates.items()))}
        self.trait_id, self.consumer_type_id = _seed(
            engine, t, names,
            [(agg_id, uuid) for uuid, agg_id in sorted(
                self.agg_ids.items(), key=lambda kv: kv[1])])

    def grow_to(self, count, batch=1000, progress=None):
        """Insert the hosts (and pools) not inserted yet, up to ``count``
        hosts."""
        trees.grow(self, count, batch, progress)
        if self.engine.dialect.name == "postgresql":
            with self.engine.begin() as conn:
                for table in ("resource_providers", "placement_aggregates",
                              "projects", "users"):
                    conn.execute(sa.text(
                        "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                        "(SELECT max(id) FROM %s))" % (table, table)))

    def _insert(self, lo, hi):
        now = datetime.datetime.utcnow()
        rows = {name: [] for name in (
            "resource_providers", "inventories", "resource_provider_traits",
            "resource_provider_aggregates", "consumers", "allocations")}
        for p in self.tc.providers_upto(lo, hi):
            self._provider_rows(p, now, rows)
        for consumer, _host, alloc in self.tc.consumers_upto(lo, hi):
            rows["consumers"].append({
                "uuid": consumer, "project_id": 1, "user_id": 1,
                "generation": 1, "consumer_type_id": self.consumer_type_id,
                "created_at": now})
            for uuid, amounts in alloc.items():
                rp_id = self.tc.by_uuid[uuid]["id"]
                for rc, used in amounts.items():
                    rows["allocations"].append({
                        "resource_provider_id": rp_id,
                        "consumer_id": consumer,
                        "resource_class_id": self.rc_id[rc], "used": used,
                        "created_at": now})
        with self.engine.begin() as conn:
            for name, values in rows.items():
                for k in range(0, len(values), 5000):
                    conn.execute(self.t[name].insert(), values[k:k + 5000])

    def _provider_rows(self, p, now, rows):
        rp_id = p["id"]
        rows["resource_providers"].append({
            "id": rp_id, "uuid": p["uuid"], "name": p["name"],
            "generation": 1, "root_provider_id": p["root_id"],
            "parent_provider_id": p["parent_id"], "created_at": now})
        for rc, (total, reserved, lo, hi, step, ratio) in sorted(
                p["inventories"].items()):
            rows["inventories"].append({
                "resource_provider_id": rp_id,
                "resource_class_id": self.rc_id[rc], "total": total,
                "reserved": reserved, "min_unit": lo, "max_unit": hi,
                "step_size": step, "allocation_ratio": ratio,
                "created_at": now})
        rows["resource_provider_traits"] += [
            {"resource_provider_id": rp_id, "trait_id": self.trait_id[x],
             "created_at": now} for x in p["traits"]]
        rows["resource_provider_aggregates"] += [
            {"resource_provider_id": rp_id,
             "aggregate_id": self.agg_ids[a], "created_at": now}
            for a in p["aggregates"]]


def create_custom_traits(client, names):
    """``PUT /traits/CUSTOM_*`` for each custom trait of ``names``."""
    for name in sorted(n for n in set(names) if n.startswith("CUSTOM_")):
        resp = client.put("/traits/" + name)
        assert resp.status_code in (201, 204), (name, resp.status_code)


def configure(url):
    """Placement's config and DB engine on ``url``; schema synced."""
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    policy_opts.set_defaults(conf)
    conf.set_override("connection", url, group="placement_database")
    conf.set_override("sync_on_startup", True, group="placement_database")
    conf([], project="placement", default_config_files=[])
    db_api.configure(conf)  # as placement.wsgi.init_application does
    return conf


def client(conf):
    """A context manager giving a requests-like client of the app."""
    return direct.PlacementDirect(conf, latest_microversion=True)


def engine():
    return db_api.get_placement_engine()


def tree_query(request):
    """``GET /allocation_candidates`` for a :meth:`trees.TreeCloud.request`
    (granular groups, microversion 1.36+ for same_subtree and
    root_required); no ``limit`` when the request's is None."""
    params = []
    for suffix, resources, required in request["groups"]:
        params.append("resources%s=%s" % (suffix, ",".join(
            "%s:%d" % kv for kv in sorted(resources.items()))))
        if required:
            params.append("required%s=%s" % (suffix, ",".join(required)))
    for suffixes in request["same_subtree"]:
        params.append("same_subtree=" + ",".join(suffixes))
    params.append("group_policy=" + request["group_policy"])
    if request["root_forbidden"]:
        params.append("root_required=" + ",".join(
            "!" + t for t in request["root_forbidden"]))
    if request.get("limit"):
        params.append("limit=%d" % request["limit"])
    return "/allocation_candidates?" + "&".join(params)


def tree_claim_body(allocation_request):
    """``PUT /allocations/{consumer}`` of one returned allocation request
    (its ``allocations``, as Nova claims a candidate)."""
    return {"allocations": {
        rp: {"resources": dict(body["resources"])}
        for rp, body in allocation_request["allocations"].items()},
        "project_id": fleet.PROJECT_ID, "user_id": fleet.USER_ID,
        "consumer_generation": None, "consumer_type": "INSTANCE"}


def version():
    from importlib.metadata import version as v
    return {"openstack-placement": v("openstack-placement"),
            "SQLAlchemy": v("SQLAlchemy")}
