"""Provider trees in host reports: children saved, loaded, removed, refused.

The tree saves run on SQLite, MariaDB and PostgreSQL (``any_db``).
"""

import threading

from oslo_utils import uuidutils
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import models
from gantt.db import reports
from gantt.db import tree_writer
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories
from gantt.tests import stored_hosts

RP = models.ResourceProvider.__table__
REPORTS = models.HostReport.__table__
H1 = factories.host_uuid("h1")
H2 = factories.host_uuid("h2")
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
GROUP = "0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819"
AGG = "5a1e0c52-4a39-4c0a-9d5e-0d3b1e8b7a11"


def uuid_of(name):
    return factories.host_uuid("provider/" + name)


def rp(name, parent, inventories=None, traits=(), aggregates=()):
    """A child provider; ``parent`` is a provider name or a uuid."""
    return provider_obj.ResourceProvider(
        uuid=uuid_of(name), name=name,
        parent_provider_uuid=(parent if uuidutils.is_uuid_like(parent)
                              else uuid_of(parent)),
        inventories=[compute_node.Inventory(resource_class=rc, total=total)
                     for rc, total in (inventories or {}).items()],
        traits=list(traits), aggregates=list(aggregates))


def tree(**changes):
    """h1's children: two NUMA cells, a PF under cell 0 and a VF group
    under the PF (a great-grandchild of the node)."""
    children = {
        "numa0": rp("numa0", H1, {"VCPU": 4, "MEMORY_MB": 4096},
                    traits=["CUSTOM_NUMA"]),
        "numa1": rp("numa1", H1, {"VCPU": 4, "MEMORY_MB": 4096}),
        "pf0": rp("pf0", "numa0", {"SRIOV_NET_VF": 8},
                  traits=["CUSTOM_PHYSNET_A"], aggregates=[AGG]),
        "vfs": rp("vfs", "pf0", {"CUSTOM_VF_GROUP": 2}),
    }
    children.update(changes)
    return [c for c in children.values() if c is not None]


def save(db, children, sequence, name="h1", force=False, **fields):
    node = factories.compute_node_obj(name, sequence=sequence,
                                      child_providers=children, **fields)
    return reports.save_report(db, node, force=force)


def host(db, uuid=H1):
    [found] = [h for h in stored_hosts.load_hosts(db) if h.uuid == uuid]
    return found


def children_of(db, uuid=H1):
    return {c.uuid: c for c in host(db, uuid).children}


def generations(db):
    with db.begin() as conn:
        return {u: g for u, g in conn.execute(
            sa.select(RP.c.uuid, RP.c.generation))}


def claim(db, consumer, allocation_map, **kwargs):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, allocation_map, **kwargs)


def everything(db):
    """Every row of every table: to prove that nothing was stored."""
    rows = {}
    with db.begin() as conn:
        for name, table in models.Base.metadata.tables.items():
            rows[name] = sorted(
                tuple(str(v) for v in r) for r in conn.execute(
                    sa.select(table)))
    return rows


# -- round trip ---------------------------------------------------------------


def test_a_tree_round_trips_parents_before_children(any_db):
    # the report lists a grandchild before its parent: stored all the same
    children = tree()
    reported = [children[3], children[2], children[1], children[0]]
    result = save(any_db, reported, sequence=1)
    assert result.applied is True
    assert result.generations == {
        H1: 0, uuid_of("numa0"): 0, uuid_of("numa1"): 0, uuid_of("pf0"): 0,
        uuid_of("vfs"): 0}
    assert (result.generation, result.refused,
            result.stored_inventories) == (0, {}, None)

    loaded = host(any_db)
    order = [c.uuid for c in loaded.children]
    assert sorted(order) == sorted(uuid_of(n)
                                   for n in ("numa0", "numa1", "pf0", "vfs"))
    for child in loaded.children:
        # parents first: each parent is the root or comes earlier
        assert (child.parent_uuid == H1
                or order.index(child.parent_uuid) < order.index(child.uuid))
    by_name = {c.name: c for c in loaded.children}
    assert {n: c.parent_uuid for n, c in by_name.items()} == {
        "numa0": H1, "numa1": H1, "pf0": uuid_of("numa0"),
        "vfs": uuid_of("pf0")}
    assert by_name["numa0"].inventories == {
        "VCPU": (4, 0, 1, 2147483647, 1, 1.0),
        "MEMORY_MB": (4096, 0, 1, 2147483647, 1, 1.0)}
    assert by_name["pf0"].inventories["SRIOV_NET_VF"][0] == 8
    assert (by_name["pf0"].traits, by_name["pf0"].aggregates) == (
        {"CUSTOM_PHYSNET_A"}, {AGG})
    assert by_name["numa0"].traits == {"CUSTOM_NUMA"}
    assert by_name["vfs"].inventories["CUSTOM_VF_GROUP"][0] == 2
    assert all(c.generation == 0 and c.usage == {}
               for c in loaded.children)
    # the root keeps its own inventory, apart from its children's
    assert loaded.inventories["VCPU"][0] == 16
    # every child points at the node as its root
    with any_db.begin() as conn:
        root_id = conn.execute(sa.select(RP.c.id).where(
            RP.c.uuid == H1)).scalar_one()
        roots = set(conn.execute(sa.select(RP.c.root_provider_id)).scalars())
    assert roots == {root_id}


def test_a_parent_added_after_its_child_still_loads_first(sqlite_db):
    """numa0 moves under a new provider: the parent is a newer row than
    its child, and must still come before it."""
    save(sqlite_db, tree(), sequence=1)
    socket = rp("socket", H1, {"CUSTOM_SOCKET": 1})
    moved = rp("numa0", "socket", {"VCPU": 4, "MEMORY_MB": 4096},
               traits=["CUSTOM_NUMA"])
    result = save(sqlite_db, [moved, socket] + tree()[1:], sequence=2)
    assert result.generations[uuid_of("socket")] == 0
    assert result.generations[uuid_of("numa0")] == 1
    order = [c.name for c in host(sqlite_db).children]
    assert order.index("socket") < order.index("numa0") < order.index(
        "pf0") < order.index("vfs")
    assert children_of(sqlite_db)[uuid_of("numa0")].parent_uuid == (
        uuid_of("socket"))


def test_children_carry_their_usage(any_db):
    save(any_db, tree(), sequence=1)
    claim(any_db, VM1, {H1: {"DISK_GB": 10}, uuid_of("numa0"): {"VCPU": 2},
                        uuid_of("pf0"): {"SRIOV_NET_VF": 1}})
    children = children_of(any_db)
    assert children[uuid_of("numa0")].usage == {"VCPU": 2}
    assert children[uuid_of("pf0")].usage == {"SRIOV_NET_VF": 1}
    assert children[uuid_of("numa1")].usage == {}
    assert host(any_db).usage == {"DISK_GB": 10}
    assert children[uuid_of("numa0")].generation == 1


def test_load_hosts_queries_do_not_grow_with_hosts(sqlite_db):
    statements = []

    def count(*_args):
        statements.append(1)

    def load_counting():
        statements.clear()
        sa.event.listen(sqlite_db.engine, "before_cursor_execute", count)
        try:
            loaded = stored_hosts.load_hosts(sqlite_db)
        finally:
            sa.event.remove(sqlite_db.engine, "before_cursor_execute", count)
        return loaded, len(statements)

    save(sqlite_db, tree(), sequence=1)
    one, queries_for_one = load_counting()
    for i in range(2, 12):
        kids = [rp("n%d" % i, factories.host_uuid("h%d" % i), {"VCPU": 1}),
                rp("p%d" % i, "n%d" % i, {"SRIOV_NET_VF": 2})]
        save(sqlite_db, kids, sequence=1, name="h%d" % i)
    many, queries_for_many = load_counting()
    assert (len(one), len(many)) == (1, 11)
    assert queries_for_many == queries_for_one
    assert all(len(h.children) == (4 if h.uuid == H1 else 2) for h in many)


# -- generations --------------------------------------------------------------


@pytest.mark.parametrize("changes, bumped", [
    ({}, set()),                                          # periodic re-send
    ({"numa1": rp("numa1", H1, {"VCPU": 8, "MEMORY_MB": 4096})}, {"numa1"}),
    ({"pf0": rp("pf0", "numa0", {"SRIOV_NET_VF": 8})}, {"pf0"}),   # traits
    ({"vfs": rp("vfs", "pf0", {"CUSTOM_VF_GROUP": 2},
                aggregates=[AGG])}, {"vfs"}),
    ({"vfs": rp("vfs", "numa1", {"CUSTOM_VF_GROUP": 2})}, {"vfs"}),  # moved
    ({"root": True}, {"h1"}),
])
def test_only_the_providers_that_changed_move(any_db, changes, bumped):
    save(any_db, tree(), sequence=1)
    before = generations(any_db)
    changes = dict(changes)
    root_change = {"vcpus": 32} if changes.pop("root", False) else {}
    result = save(any_db, tree(**changes), sequence=2, **root_change)
    after = generations(any_db)
    names = {uuid_of(n): n for n in ("numa0", "numa1", "pf0", "vfs")}
    names[H1] = "h1"
    assert {names[u] for u in after if after[u] != before[u]} == bumped
    assert all(after[u] - before[u] in (0, 1) for u in after)
    assert result.generations == after
    assert result.refused == {}


def test_a_renamed_child_keeps_its_generation(sqlite_db):
    save(sqlite_db, tree(), sequence=1)
    before = generations(sqlite_db)
    renamed = rp("numa1", H1, {"VCPU": 4, "MEMORY_MB": 4096})
    renamed.name = "cell-1"
    save(sqlite_db, tree(numa1=renamed), sequence=2)
    assert generations(sqlite_db) == before
    assert children_of(sqlite_db)[uuid_of("numa1")].name == "cell-1"


# -- children leaving ---------------------------------------------------------


@pytest.mark.parametrize("held_on, kept, refused", [
    # nobody holds anything: the subtree under numa0 goes entirely
    (None, set(), {}),
    # the great-grandchild holds: it and its removed ancestors stay
    ("vfs", {"numa0", "pf0", "vfs"}, {
        "vfs": "provider has allocations",
        "pf0": "child provider %s has allocations" % uuid_of("vfs"),
        "numa0": "child provider %s has allocations" % uuid_of("vfs")}),
    # the PF holds: its parent stays for it, its own child goes
    ("pf0", {"numa0", "pf0"}, {
        "pf0": "provider has allocations",
        "numa0": "child provider %s has allocations" % uuid_of("pf0")}),
])
def test_children_left_out_go_unless_they_hold_allocations(any_db, held_on,
                                                           kept, refused):
    save(any_db, tree(), sequence=1)
    rcs = {"vfs": "CUSTOM_VF_GROUP", "pf0": "SRIOV_NET_VF"}
    if held_on:
        claim(any_db, VM1, {uuid_of(held_on): {rcs[held_on]: 1}})
    # the next report has numa1 only
    result = save(any_db, tree(numa0=None, pf0=None, vfs=None), sequence=2)
    assert result.applied is True
    expect = {uuid_of(n): {"provider": why} for n, why in refused.items()}
    assert result.refused == expect
    remaining = set(children_of(any_db))
    assert remaining == {uuid_of("numa1")} | {uuid_of(n) for n in kept}
    assert set(result.generations) == remaining | {H1}
    if kept:
        # the cache must be told what the database still holds
        assert set(result.stored_inventories) == {uuid_of(n) for n in kept}
        assert result.stored_inventories[uuid_of(held_on)] == {
            rcs[held_on]: (8 if held_on == "pf0" else 2, 0, 1, 2147483647,
                           1, 1.0)}
    else:
        assert result.stored_inventories is None
    with any_db.begin() as conn:
        stored = set(conn.execute(sa.select(RP.c.uuid)).scalars())
    assert stored == remaining | {H1}


def test_a_kept_child_goes_once_its_allocations_are_released(sqlite_db):
    save(sqlite_db, tree(), sequence=1)
    claim(sqlite_db, VM1, {uuid_of("pf0"): {"SRIOV_NET_VF": 1}})
    assert save(sqlite_db, tree(pf0=None, vfs=None), sequence=2).refused
    with sqlite_db.begin() as conn:
        allocations.release(conn, VM1)
    result = save(sqlite_db, tree(pf0=None, vfs=None), sequence=3)
    assert result.refused == {}
    assert uuid_of("pf0") not in children_of(sqlite_db)


# -- inventory cuts on a child ------------------------------------------------


@pytest.mark.parametrize("force, total_after, refused", [
    (False, 4, {"VCPU": "3 in use exceeds the new capacity 2"}),
    (True, 2, {}),
])
def test_a_cut_below_usage_on_a_child(any_db, force, total_after, refused):
    save(any_db, tree(), sequence=1)
    claim(any_db, VM1, {uuid_of("numa0"): {"VCPU": 3}})
    before = generations(any_db)
    cut = rp("numa0", H1, {"VCPU": 2, "MEMORY_MB": 2048},
             traits=["CUSTOM_NUMA"])
    result = save(any_db, tree(numa0=cut), sequence=2, force=force)
    assert result.applied is True
    numa0 = children_of(any_db)[uuid_of("numa0")]
    # the class in use keeps its inventory unless forced; the other is cut
    assert numa0.inventories["VCPU"][0] == total_after
    assert numa0.inventories["MEMORY_MB"][0] == 2048
    assert result.refused == ({uuid_of("numa0"): refused} if refused
                              else {})
    if refused:
        assert result.stored_inventories == {uuid_of("numa0"): {
            "VCPU": (4, 0, 1, 2147483647, 1, 1.0),
            "MEMORY_MB": (2048, 0, 1, 2147483647, 1, 1.0)}}
    else:
        assert result.stored_inventories is None
    assert generations(any_db)[uuid_of("numa0")] == (
        before[uuid_of("numa0")] + 1)
    assert numa0.usage == {"VCPU": 3}


@pytest.mark.parametrize("force", [False, True])
def test_a_class_in_use_is_never_removed(any_db, force):
    # forcing takes cuts below usage, but a class left out of the report
    # while allocated stays: its allocations would count against nothing
    save(any_db, tree(), sequence=1)
    claim(any_db, VM1, {uuid_of("numa0"): {"VCPU": 3}})
    no_vcpu = rp("numa0", H1, {"MEMORY_MB": 1024}, traits=["CUSTOM_NUMA"])
    result = save(any_db, tree(numa0=no_vcpu), sequence=2, force=force)
    assert result.refused == {uuid_of("numa0"): {
        "VCPU": "3 in use; a class cannot be removed while allocated"}}
    numa0 = children_of(any_db)[uuid_of("numa0")]
    assert numa0.inventories["VCPU"][0] == 4
    assert numa0.inventories["MEMORY_MB"][0] == 1024
    assert numa0.usage == {"VCPU": 3}
    # once released, the same report removes it
    with any_db.begin() as conn:
        allocations.release(conn, VM1)
    result = save(any_db, tree(numa0=no_vcpu), sequence=3, force=force)
    assert result.refused == {}
    assert "VCPU" not in children_of(any_db)[uuid_of("numa0")].inventories


def test_a_refused_cut_alone_leaves_the_generation(sqlite_db):
    save(sqlite_db, tree(), sequence=1)
    claim(sqlite_db, VM1, {uuid_of("numa1"): {"VCPU": 4}})
    before = generations(sqlite_db)
    result = save(sqlite_db, tree(numa1=rp("numa1", H1, {
        "VCPU": 1, "MEMORY_MB": 4096})), sequence=2)
    assert set(result.refused[uuid_of("numa1")]) == {"VCPU"}
    assert generations(sqlite_db) == before


# -- invalid trees ------------------------------------------------------------


def _standalone(db, name):
    report = provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=uuid_of(name), name=name,
            inventories=[compute_node.Inventory(resource_class="DISK_GB",
                                                total=100)]),
        report_sequence=1)
    reports.save_provider(db, report)


def _as_child(uuid, parent=H1):
    return provider_obj.ResourceProvider(uuid=uuid, name="x",
                                         parent_provider_uuid=parent)


# malformed whatever the database holds: refused before any SQL
MALFORMED = [
    ([rp("orphan", "nowhere")], uuid_of("nowhere")),      # unknown parent
    ([rp("numa1", H1)], uuid_of("numa1")),                # duplicate uuid
    ([_as_child(H1)], H1),                                # root as a child
    ([rp("selfish", "selfish")], uuid_of("selfish")),     # its own parent
    ([rp("loop-a", "loop-b"), rp("loop-b", "loop-a")],    # a cycle
     uuid_of("loop-a")),
    ([rp("bad-agg", H1, aggregates=["not-a-uuid"])], "not-a-uuid"),
    ([rp("twice", H1, {"VCPU": 1}), rp("pf9", "twice")], None),
]
# uuids that belong elsewhere: found in the database, inside the save
OWNED = [
    ([rp("h2-numa", H1)], uuid_of("h2-numa")),            # h2's child
    ([_as_child(H2)], H2),                                # another root
    ([rp("pool", H1)], uuid_of("pool")),                  # standalone
]


@pytest.mark.parametrize("extra, bad", MALFORMED)
def test_malformed_trees_are_rejected(sqlite_db, extra, bad):
    _rejected(sqlite_db, extra, bad)


@pytest.mark.parametrize("extra, bad", OWNED)
def test_providers_of_others_are_rejected(any_db, extra, bad):
    _rejected(any_db, extra, bad)


def _rejected(db, extra, bad):
    """The report with ``extra`` children raises, and nothing is stored
    (not even its sequence or the root's new inventory)."""
    any_db = db
    save(any_db, [rp("h2-numa", H2, {"VCPU": 1})], sequence=1, name="h2")
    _standalone(any_db, "pool")
    save(any_db, tree(), sequence=1)
    before = everything(any_db)
    if bad is None:
        # a class reported twice by one child
        extra[0].inventories = extra[0].inventories * 2
        bad = "VCPU reported twice"
    with pytest.raises(exception.InvalidRequest) as raised:
        save(any_db, tree() + extra, sequence=2, vcpus=2)
    assert bad in str(raised.value)
    assert everything(any_db) == before


@pytest.mark.parametrize("new_host", [True, False])
def test_a_child_of_another_tree_is_rejected_for_a_new_host(any_db,
                                                            new_host):
    save(any_db, tree(), sequence=1)
    name = "h3" if new_host else "h2"
    if not new_host:
        save(any_db, [], sequence=1, name="h2")
    before = everything(any_db)
    stolen = rp("pf0", factories.host_uuid(name), {"SRIOV_NET_VF": 1})
    with pytest.raises(exception.InvalidRequest, match=uuid_of("pf0")):
        save(any_db, [stolen], sequence=2, name=name)
    assert everything(any_db) == before


@pytest.mark.parametrize("root", ["numa0", "pool"])
def test_a_node_whose_uuid_is_another_kind_of_provider_is_rejected(any_db,
                                                                   root):
    save(any_db, tree(), sequence=1)
    _standalone(any_db, "pool")
    before = everything(any_db)
    node = factories.compute_node_obj("h9", sequence=5)
    node.uuid = uuid_of(root)
    with pytest.raises(exception.InvalidRequest, match=uuid_of(root)):
        reports.save_report(any_db, node)
    assert everything(any_db) == before


# -- the sequence guard, for trees --------------------------------------------


@pytest.mark.parametrize("sequence", [5, 10])
def test_an_older_tree_report_changes_nothing(any_db, sequence):
    save(any_db, tree(), sequence=10)
    before = everything(any_db)
    result = save(any_db, tree(numa0=None, pf0=None, vfs=None,
                               numa1=rp("numa1", H1, {"VCPU": 64})),
                  sequence=sequence)
    assert result.applied is False
    assert everything(any_db) == before
    assert result.generations == generations(any_db)
    assert result.generation == 0
    # what the database holds, for every provider of the tree
    assert set(result.stored_inventories) == set(result.generations)
    assert result.stored_inventories[uuid_of("numa1")]["VCPU"][0] == 4


def test_two_workers_inserting_a_new_tree_at_once(server_db, monkeypatch):
    """The other worker commits the same new host between this worker's
    look-up and its insert: the unique key stops the second insert, and
    the retry finds the report stored (applied=False), not an error."""
    node = factories.compute_node_obj("h1", sequence=1,
                                      child_providers=tree())
    insert = reports._insert_tree
    raced = []

    def racing_insert(conn, *args):
        if not raced:
            raced.append(1)
            thread = threading.Thread(
                target=reports.save_report, args=(server_db, node))
            thread.start()
            thread.join(30)
        return insert(conn, *args)

    monkeypatch.setattr(reports, "_insert_tree", racing_insert)
    result = reports.save_report(server_db, node)
    assert raced and result.applied is False
    assert set(result.generations) == {H1} | {c.uuid for c in tree()}
    assert len(host(server_db).children) == 4


# -- allocations on children find their host ----------------------------------


def test_allocations_on_children_find_their_host(any_db):
    save(any_db, tree(), sequence=1)
    save(any_db, [rp("h2-numa", H2, {"VCPU": 4})], sequence=1, name="h2")
    group = allocations.GroupClaim(GROUP, "anti-affinity")
    allocations.ensure_group(any_db, group)
    # VM1 only on h1's grandchild, VM2 only on h2's child
    claim(any_db, VM1, {uuid_of("pf0"): {"SRIOV_NET_VF": 1}}, group=group)
    claim(any_db, VM2, {uuid_of("h2-numa"): {"VCPU": 1}}, group=group)
    with any_db.begin() as conn:
        assert allocations.hosts_of_consumers(conn, [VM1]) == {"h1"}
        assert allocations.hosts_of_consumers(conn, [VM1, VM2]) == {
            "h1", "h2"}
        assert allocations.group_hosts(conn, GROUP) == {"h1": 1, "h2": 1}
    # and the group policy sees them: a third member on h1's root is refused
    with pytest.raises(exception.GroupPolicyViolation):
        claim(any_db, "33333333-3333-4333-8333-333333333333",
              {H1: {"VCPU": 1}}, group=group)


# -- a save racing a claim ---------------------------------------------------


@pytest.mark.parametrize("target", ["numa0", "h1"])
def test_a_claim_committed_while_a_save_waits_is_counted(server_db,
                                                         monkeypatch,
                                                         target):
    """The save has read the tree (on MariaDB that fixes its snapshot)
    when a claim commits on the provider it cuts: the cut must see that
    claim and be refused, never leave the provider overcommitted."""
    save(server_db, tree(), sequence=1, vcpus=4)
    uuid = H1 if target == "h1" else uuid_of("numa0")
    lock = tree_writer.TreeWriter.lock
    reached, go = threading.Event(), threading.Event()

    def paused_lock(self, *args, **kwargs):
        reached.set()
        assert go.wait(30)
        return lock(self, *args, **kwargs)

    monkeypatch.setattr(tree_writer.TreeWriter, "lock", paused_lock)
    cut = rp("numa0", H1, {"VCPU": 1, "MEMORY_MB": 4096},
             traits=["CUSTOM_NUMA"])
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault(
        "result", save(server_db, tree(numa0=cut), sequence=2, vcpus=1)))
    thread.start()
    assert reached.wait(30)
    claim(server_db, VM1, {uuid: {"VCPU": 3}})
    go.set()
    thread.join(30)
    result = outcome["result"]
    assert result.refused == {uuid: {
        "VCPU": "3 in use exceeds the new capacity 1"}}
    stored = host(server_db) if target == "h1" else children_of(
        server_db)[uuid]
    assert stored.inventories["VCPU"][0] == 4
    assert stored.usage == {"VCPU": 3}


def test_a_save_waits_for_a_claim_that_swapped_but_did_not_commit(
        server_db, monkeypatch):
    """The claim has compared-and-swapped numa0's generation but not yet
    written its allocation when the save cuts numa0: the save must wait on
    the provider's row and then count the claim, not cut beneath it."""
    save(server_db, tree(), sequence=1)
    swap = allocations._bump_generations
    swapped, go = threading.Event(), threading.Event()

    def paused_swap(*args):
        result = swap(*args)
        swapped.set()
        assert go.wait(30)
        return result

    monkeypatch.setattr(allocations, "_bump_generations", paused_swap)
    claimer = threading.Thread(target=claim, args=(
        server_db, VM1, {uuid_of("numa0"): {"VCPU": 3}}))
    claimer.start()
    assert swapped.wait(30)
    cut = rp("numa0", H1, {"VCPU": 1, "MEMORY_MB": 4096},
             traits=["CUSTOM_NUMA"])
    outcome = {}
    saver = threading.Thread(target=lambda: outcome.setdefault(
        "result", save(server_db, tree(numa0=cut), sequence=2)))
    saver.start()
    saver.join(0.5)         # the save runs until it has to wait
    go.set()
    claimer.join(30)
    saver.join(30)
    assert outcome["result"].refused == {uuid_of("numa0"): {
        "VCPU": "3 in use exceeds the new capacity 1"}}
    numa0 = children_of(server_db)[uuid_of("numa0")]
    assert (numa0.inventories["VCPU"][0], numa0.usage) == (4, {"VCPU": 3})
