"""The real Placement, in-process, loaded through its own HTTP API.

``placement.direct.PlacementDirect`` runs the whole Placement WSGI app
(middleware, microversion handling, JSON schema validation, policy) behind
wsgi-intercept, so the requests below go through a real requests /
keystoneauth client without a socket. The database is a temporary SQLite
file whose schema Placement's own migrations create at start-up.

A world is loaded the way a compute service and an operator would: custom
traits and resource classes, ``POST /resource_providers`` (parents first),
``PUT .../inventories``, ``PUT .../traits``, ``PUT .../aggregates``, and the
existing usage as real consumers through ``POST /allocations``, so that
Placement validates every inventory and allocation. Between worlds the
provider, consumer and aggregate tables are emptied (traits and resource
classes stay: Placement caches their ids).

Placement's database layer can be configured once per process, so one
:class:`Placement` serves a whole test session.
"""

import functools
import logging
import shutil
import tempfile
import urllib.parse
import uuid as uuidlib

MICROVERSION = "1.39"
HEADERS = {"OpenStack-API-Version": "placement %s" % MICROVERSION,
           "Accept": "application/json"}
PROJECT = "7f06cd96-7a3a-4a1a-8d5c-0c7c5f1d4b1e"
USER = "0b3d3f30-4a54-4c2b-8a8e-2c3e2b1bb2f6"
# emptied between worlds, children before parents
_WORLD_TABLES = ("allocations", "consumers", "inventories",
                 "resource_provider_traits", "resource_provider_aggregates",
                 "resource_providers", "placement_aggregates", "projects",
                 "users")


def root_trait(k):
    """The trait only the ``k``-th root of a loaded world has."""
    return "CUSTOM_DIFF_ROOT_%d" % k


class PlacementError(AssertionError):
    """Placement answered a loading call with an unexpected status."""


def _configure(url):
    from oslo_config import cfg
    from oslo_policy import opts as policy_opts
    from placement import conf as placement_conf
    from placement import db_api

    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    policy_opts.set_defaults(conf)
    conf.set_override("connection", url, group="placement_database")
    conf.set_override("sync_on_startup", True, group="placement_database")
    conf.set_override("sqlite_synchronous", False,
                      group="placement_database")
    conf([], project="placement", default_config_files=[])
    db_api.configure(conf)
    return conf


def query_params(request):
    """The query string of ``request`` as a list of (key, value) pairs.

    Per group: ``resources$S``, one ``required$S`` with the all-of and
    forbidden traits, one ``required$S=in:...`` per any-of set (1.39), one
    ``member_of$S`` per any-of aggregate set (``in:`` when more than one),
    ``member_of$S=!in:...`` for the forbidden aggregates, ``in_tree$S``; then
    ``group_policy``, one ``same_subtree`` per set and ``root_required``.
    """
    params = []
    for g in request.groups:
        s = g.suffix
        if g.resources:
            params.append(("resources" + s, ",".join(
                "%s:%d" % ra for ra in g.resources)))
        plain = sorted(t for anyof in g.required if len(anyof) == 1
                       for t in anyof)
        plain += ["!" + t for t in sorted(g.forbidden)]
        if plain:
            params.append(("required" + s, ",".join(plain)))
        for anyof in g.required:
            if len(anyof) > 1:
                params.append(("required" + s, "in:" + ",".join(
                    sorted(anyof))))
        for anyof in g.member_of:
            params.append(("member_of" + s, "in:" * (len(anyof) > 1)
                           + ",".join(sorted(anyof))))
        if g.forbidden_aggs:
            aggs = sorted(g.forbidden_aggs)
            params.append(("member_of" + s, ("!in:" + ",".join(aggs))
                           if len(aggs) > 1 else "!" + aggs[0]))
        if g.in_tree:
            params.append(("in_tree" + s, g.in_tree))
    if request.group_policy:
        params.append(("group_policy", request.group_policy))
    for suffixes in request.same_subtree:
        params.append(("same_subtree", ",".join(sorted(suffixes))))
    if request.root_required or request.root_forbidden:
        params.append(("root_required", ",".join(
            sorted(request.root_required)
            + ["!" + t for t in sorted(request.root_forbidden)])))
    return params


def canonical(allocation_request):
    """One allocation request of the JSON answer as a hashable value:
    (frozenset of (rp, rc, amount), frozenset of (suffix, frozenset(rps)))."""
    allocs = frozenset(
        (rp, rc, amount)
        for rp, body in allocation_request["allocations"].items()
        for rc, amount in body["resources"].items())
    mappings = frozenset(
        (suffix, frozenset(rps))
        for suffix, rps in allocation_request.get("mappings", {}).items())
    return allocs, mappings


class Placement:
    """Placement on a temporary SQLite database, with a world loaded."""

    def __init__(self, url=None):
        from placement import direct

        logging.getLogger("placement").setLevel(logging.WARNING)
        self._tmp = None
        if url is None:
            self._tmp = tempfile.mkdtemp(prefix="gantt-placement-diff-")
            url = "sqlite:///%s/placement.sqlite" % self._tmp
        self.conf = _configure(url)
        self._direct = direct.PlacementDirect(self.conf)
        # PlacementDirect hands wsgi-intercept a factory that builds the
        # app (and checks the schema) again for every request: build once
        self._direct.app = functools.cache(self._direct.app)
        self.client = self._direct.__enter__()
        self._traits = set()
        self._classes = set()
        self.world = None
        self.root_traits = {}
        self.calls = 0
        # the app (and so the schema sync) is loaded on the first request
        self.call("GET", "/")

    def close(self):
        self._direct.__exit__(None, None, None)
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)

    # HTTP ---------------------------------------------------------------

    def call(self, method, path, body=None, expect=(200,)):
        self.calls += 1
        kwargs = {"headers": dict(HEADERS)}
        if body is not None:
            kwargs["json"] = body
        resp = self.client.request(path, method, **kwargs)
        if resp.status_code not in expect:
            raise PlacementError("%s %s -> %d %s\nbody: %s" % (
                method, path, resp.status_code, resp.text, body))
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    # loading ------------------------------------------------------------

    def reset(self):
        from placement import db_api
        import sqlalchemy as sa

        with db_api.get_placement_engine().begin() as conn:
            for table in _WORLD_TABLES:
                conn.execute(sa.text("DELETE FROM %s" % table))
        self.world = None

    def ensure_traits(self, names):
        for name in sorted(set(names) - self._traits):
            if name.startswith("CUSTOM_"):
                self.call("PUT", "/traits/" + name, expect=(201, 204))
            self._traits.add(name)

    def ensure_classes(self, names):
        for name in sorted(set(names) - self._classes):
            if name.startswith("CUSTOM_"):
                self.call("PUT", "/resource_classes/" + name,
                          expect=(201, 204))
            self._classes.add(name)

    def load(self, world, extra_traits=()):
        """Replace whatever is loaded by ``world``.

        Each root also gets a trait of its own, :func:`root_trait`, that no
        generated request names: ``root_required`` on it asks Placement
        for the candidates anchored on that one root (see compare.py).
        """
        from gantt.tests.placement_diff import worlds

        self.reset()
        self.root_traits = {
            root.uuid: root_trait(k)
            for k, root in enumerate(world.roots())}
        self.ensure_traits(set(worlds.CUSTOM_TRAITS) | set(extra_traits) | {
            t for p in world.providers for t in p.traits} | set(
                self.root_traits.values()))
        self.ensure_classes(set(worlds.CUSTOM_CLASSES) | {
            rc for p in world.providers for rc in p.inventories})
        for p in world.providers:
            self._load_provider(p, self.root_traits.get(p.uuid),
                                world.before.get(p.uuid))
        if world.consumers:
            body = {}
            for k, consumer in enumerate(world.consumers):
                cid = str(uuidlib.UUID(int=(world.seed << 32) + k + 1))
                body[cid] = {
                    "allocations": {
                        rp: {"resources": dict(amounts)}
                        for rp, amounts in consumer.items()},
                    "project_id": PROJECT, "user_id": USER,
                    "consumer_generation": None,
                    "consumer_type": "INSTANCE"}
            self.call("POST", "/allocations", body, expect=(204,))
        for uuid in sorted(world.before):
            # shrunk below its usage after the allocations were made
            self._put_inventories(uuid, world.by_uuid[uuid].inventories)
        self.world = world

    def _put_inventories(self, uuid, inventories):
        base = "/resource_providers/" + uuid
        gen = self.call("GET", base)["generation"]
        self.call("PUT", base + "/inventories", {
            "resource_provider_generation": gen,
            "inventories": {rc: inv.as_dict() for rc, inv
                            in sorted(inventories.items())}})

    def _load_provider(self, p, own_trait=None, inventories=None):
        body = {"uuid": p.uuid, "name": p.name}
        if p.parent:
            body["parent_provider_uuid"] = p.parent
        gen = self.call("POST", "/resource_providers", body)["generation"]
        base = "/resource_providers/" + p.uuid
        inventories = inventories or p.inventories
        if inventories:
            gen = self.call("PUT", base + "/inventories", {
                "resource_provider_generation": gen,
                "inventories": {rc: inv.as_dict() for rc, inv
                                in sorted(inventories.items())},
            })["resource_provider_generation"]
        traits = set(p.traits) | ({own_trait} if own_trait else set())
        if traits:
            gen = self.call("PUT", base + "/traits", {
                "resource_provider_generation": gen,
                "traits": sorted(traits),
            })["resource_provider_generation"]
        if p.aggregates:
            self.call("PUT", base + "/aggregates", {
                "resource_provider_generation": gen,
                "aggregates": sorted(p.aggregates),
            })

    # querying -----------------------------------------------------------

    def url(self, request):
        return "/allocation_candidates?" + urllib.parse.urlencode(
            query_params(request), safe=",:!")

    def raw_candidates(self, request):
        """The JSON answer of GET /allocation_candidates (asserts 200)."""
        return self.call("GET", self.url(request))

    def candidates(self, request):
        """The allocation requests, each as :func:`canonical` gives it
        (a list: Placement's answer, duplicates and order kept)."""
        body = self.raw_candidates(request)
        return [canonical(ar) for ar in body["allocation_requests"]]
