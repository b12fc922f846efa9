"""Providers of any kind in the database: what a ProviderReport 1.2 says
is stored and read back typed, and a vacant provider is retired by a
compare-and-swap on its generation that a racing claim never slips past.
"""

import threading

import pytest
import sqlalchemy as sa

from gantt import exception
from gantt.db import allocations
from gantt.db import api as db_api
from gantt.db import host_load
from gantt.db import migration
from gantt.db import models
from gantt.db import reports
from gantt.db import retire
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.tests import factories

CTR = factories.host_uuid("provider/ctr-1")
VM1 = "11111111-1111-4111-8111-111111111111"
VM2 = "22222222-2222-4222-8222-222222222222"
INSTANCE = "33333333-3333-4333-8333-333333333333"
CAPS = {"thin_provisioning_support": True, "total_capacity_gb": 1000.5,
        "max_volumes": 100, "volume_backend_name": "lvm", "ratio": 1.0,
        "one": 1}


def report(sequence=1, kind="container", uuid=CTR, **fields):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=uuid, name="ctr-1",
            inventories=[compute_node.Inventory(
                resource_class="VCPU", total=4),
                compute_node.Inventory(
                resource_class="MEMORY_MB", total=4096)]),
        report_sequence=sequence, kind=kind, **fields)


def stored(db):
    return {p.uuid: p for p in host_load.load_standalone_providers(db)}


def claim(db, consumer, allocation_map):
    with db.begin() as conn:
        return allocations.claim(conn, consumer, allocation_map)


def release(db, consumer):
    with db.begin() as conn:
        return allocations.release(conn, consumer)


def generation(db, uuid=CTR):
    with db.begin() as conn:
        return conn.execute(sa.select(models.RP.c.generation).where(
            models.RP.c.uuid == uuid)).scalar()


def test_what_a_report_says_round_trips_typed(any_db):
    reports.save_provider(any_db, report(
        kind="volume", service="cinder-volume@lvm", availability_zone="az1",
        capabilities=CAPS, instance_uuid=INSTANCE))
    pool = stored(any_db)[CTR]
    assert (pool.kind, pool.service, pool.availability_zone,
            pool.instance_uuid) == ("volume", "cinder-volume@lvm", "az1",
                                    INSTANCE)
    assert pool.capabilities == CAPS
    # True stays a boolean, 1.0 a float, 1 an integer
    assert [type(pool.capabilities[k]) for k in (
        "thin_provisioning_support", "ratio", "one")] == [bool, float, int]
    # a newer report replaces all of it
    reports.save_provider(any_db, report(sequence=2, kind="volume"))
    pool = stored(any_db)[CTR]
    assert (pool.service, pool.capabilities, pool.instance_uuid) == (
        None, {}, None)


def test_a_report_that_says_nothing_is_a_pool(any_db):
    reports.save_provider(any_db, provider_obj.ProviderReport(
        provider=report().provider, report_sequence=1))
    assert stored(any_db)[CTR].kind == "pool"


def test_capabilities_the_database_cannot_hold_are_refused(sqlite_db):
    big = {"k%d" % i: "x" * 255 for i in range(300)}
    with pytest.raises(exception.InvalidRequest, match="capabilities"):
        reports.save_provider(sqlite_db, report(capabilities=big))
    assert stored(sqlite_db) == {}


# -- retire ------------------------------------------------------------------


def test_a_vacant_provider_is_retired_at_its_generation(any_db):
    reports.save_provider(any_db, report())
    claim(any_db, VM1, {CTR: {"VCPU": 1}})
    release(any_db, VM1)
    vacant_at = generation(any_db)
    assert vacant_at == 2
    with pytest.raises(exception.ProviderConflict) as conflict:
        retire.retire(any_db, CTR, vacant_at - 1)
    assert (conflict.value.kwargs["actual"],
            conflict.value.kwargs["expected"]) == (2, 1)
    assert generation(any_db) == vacant_at          # refused: unchanged
    assert retire.retire(any_db, CTR, vacant_at) == "container"
    assert stored(any_db) == {}
    with any_db.begin() as conn:
        for table in (models.INV, models.PROVIDER_REPORTS):
            assert conn.execute(sa.select(sa.func.count()).select_from(
                table)).scalar() == 0
    with pytest.raises(exception.ProviderNotFound):
        retire.retire(any_db, CTR, vacant_at)


def test_a_provider_in_use_is_not_retired(any_db):
    reports.save_provider(any_db, report())
    claim(any_db, VM1, {CTR: {"VCPU": 1}})
    with pytest.raises(exception.ProviderInUse):
        retire.retire(any_db, CTR, generation(any_db))
    assert generation(any_db) == 1          # the swap was rolled back
    assert CTR in stored(any_db)


def test_a_compute_node_is_not_retired(any_db):
    node = factories.compute_node_obj("h1")
    reports.save_report(any_db, node)
    with pytest.raises(exception.InvalidRequest, match="not a standalone"):
        retire.retire(any_db, node.uuid, 0)
    assert generation(any_db, node.uuid) == 0


# -- a claim racing the retirement: exactly one wins --------------------------


def _paused(monkeypatch, module, name):
    """Pause ``module.name`` right after it ran, until ``go`` is set."""
    original = getattr(module, name)
    done, go = threading.Event(), threading.Event()

    def paused(*args, **kwargs):
        result = original(*args, **kwargs)
        done.set()
        assert go.wait(30)
        return result

    monkeypatch.setattr(module, name, paused)
    return done, go


def _run(outcome, key, work):
    def target():
        try:
            outcome[key] = work()
        except Exception as exc:            # what the thread ended with
            outcome[key] = exc
    thread = threading.Thread(target=target)
    thread.start()
    return thread


def _allocated(db, uuid=CTR):
    with db.begin() as conn:
        return conn.execute(
            sa.select(sa.func.count()).select_from(models.ALLOC)
            .join(models.RP,
                  models.RP.c.id == models.ALLOC.c.resource_provider_id)
            .where(models.RP.c.uuid == uuid)).scalar()


def test_a_claim_that_swapped_first_wins_over_the_retirement(
        server_db, monkeypatch):
    """The claim has swapped the provider's generation but not committed
    when the owner retires it at the generation it saw vacant: the
    retirement waits on the provider's row, then finds the generation
    moved and is refused; the claim stands."""
    reports.save_provider(server_db, report())
    vacant_at = generation(server_db)
    swapped, go = _paused(monkeypatch, allocations, "_bump_generations")
    outcome = {}
    claimer = _run(outcome, "claim", lambda: claim(
        server_db, VM1, {CTR: {"VCPU": 1}}))
    assert swapped.wait(30)
    retirer = _run(outcome, "retire", lambda: retire.retire(
        server_db, CTR, vacant_at))
    retirer.join(0.5)           # it runs until it waits on the row
    assert retirer.is_alive()
    go.set()
    claimer.join(30)
    retirer.join(30)
    assert not isinstance(outcome["claim"], Exception)
    assert isinstance(outcome["retire"], exception.ProviderConflict)
    assert CTR in stored(server_db) and _allocated(server_db) == 1


def test_a_retirement_that_swapped_first_wins_over_the_claim(
        server_db, monkeypatch):
    """The retirement has swapped (and so locked) the provider when a
    claim that read it vacant swaps in turn: the claim waits, then finds
    no provider at that generation and fails; nothing is ever allocated
    on the retired provider."""
    reports.save_provider(server_db, report())
    vacant_at = generation(server_db)
    swapped, go = _paused(monkeypatch, retire, "_swap")
    outcome = {}
    retirer = _run(outcome, "retire", lambda: retire.retire(
        server_db, CTR, vacant_at))
    assert swapped.wait(30)
    claimer = _run(outcome, "claim", lambda: claim(
        server_db, VM1, {CTR: {"VCPU": 1}}))
    claimer.join(0.5)
    assert claimer.is_alive()       # waiting on the provider's row
    go.set()
    retirer.join(30)
    claimer.join(30)
    assert outcome["retire"] == "container"
    assert isinstance(outcome["claim"], (exception.ClaimConflict,
                                         exception.ProviderNotFound))
    assert stored(server_db) == {}
    assert _allocated(server_db) == 0
    # the claim tried again finds no such provider
    with pytest.raises(exception.ProviderNotFound):
        claim(server_db, VM1, {CTR: {"VCPU": 1}})


def test_0009_makes_the_stored_providers_pools(tmp_path):
    db = db_api.Database("sqlite:///" + str(tmp_path / "m.sqlite"))
    migration.upgrade(db, "0008")
    with db.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO resource_providers (id, uuid, name, generation, "
            "created_at) VALUES (1, :u, 'pool', 0, CURRENT_TIMESTAMP)"),
            {"u": CTR})
        conn.execute(sa.text(
            "INSERT INTO provider_reports (resource_provider_id, "
            "report_sequence, received_at) VALUES (1, 7, "
            "CURRENT_TIMESTAMP)"))
    migration.upgrade(db, "0009")
    assert migration.current_version(db) == "0009"
    migration.upgrade(db)       # today's reader reads today's schema
    pool = stored(db)[CTR]
    assert (pool.report_sequence, pool.kind, pool.service,
            pool.capabilities, pool.instance_uuid) == (7, "pool", None, {},
                                                       None)
