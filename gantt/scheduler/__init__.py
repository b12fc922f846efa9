"""The scheduling engine: one worker's services, wired here.

    agents' reports -> StatsService (intake/) -> database -> HostStateCache
    request -> Placer: its profile's Pipeline.rank
                       (candidates -> filters -> weighers)
            -> pick -> layout -> ClaimService (database, cache, peers)
            -> selections [claimed, alternates...]
    operators -> OperatorService (aggregates, host states, statistics,
                 explain)
    groups -> GroupService (groups/: decided whole, reserved; members
              take their slots over through the Placer)

:func:`build` is the composition root: it makes the services in
dependency order and says, for each wire, why it is there. The RPC
endpoint holds the :class:`Scheduler` it returns and calls one service
method per RPC method. Nothing here touches oslo.messaging (the worker
hands in a ``broadcast`` callable).
"""

import dataclasses
import random
import threading
import time

from gantt.scheduler import claims as claims_mod
from gantt.scheduler import counters as counters_mod
from gantt.scheduler import intake
from gantt.scheduler import lookups
from gantt.scheduler import operator as operator_mod
from gantt.scheduler import placer as placer_mod
from gantt.scheduler import vacancy
from gantt.scheduler.groups import members as members_mod
from gantt.scheduler.groups import service as groups_mod
from gantt.scheduler.pipeline import layouts as layouts_mod
from gantt.scheduler.pipeline import profiles as profiles_mod
from gantt.scheduler.state import cache as cache_mod


@dataclasses.dataclass(frozen=True)
class Scheduler:
    """One worker's services: what the RPC endpoints hold."""

    stats: intake.StatsService
    placer: placer_mod.Placer
    claims: claims_mod.ClaimService
    operator: operator_mod.OperatorService
    counters: counters_mod.Counters
    ready: threading.Event
    groups: groups_mod.GroupService
    vacancy: vacancy.VacancyWatch


def build(conf, db, *, broadcast=None, clock=time.time,
          worker_name="gantt", rng=None, on_vacant=None):
    """The worker's services, wired.

    :param db: a :class:`~gantt.db.api.Database` (None for in-memory
        benchmarks that never claim)
    :param broadcast: ``broadcast([ProviderUsage])`` tells the peers of a
        committed claim; None tells nobody
    :param clock: the cache's clock (tests and benchmarks fix it)
    :param rng: the random source of picking (tests fix it)
    :param on_vacant: ``on_vacant(vacancy.Vacancy)`` announces a provider
        the last allocation left (the notifier's ``provider.vacant``);
        None announces nothing
    """
    # the one copy of the world every service reads or writes; its clock
    # decides which hosts are up
    cache = cache_mod.HostStateCache(clock, conf.topology.levels)
    # every service counts into the same statistics
    counters = counters_mod.Counters()
    # set once the cache is loaded: the endpoint answers only then
    ready = threading.Event()
    # read-only questions (group hosts, held allocations) for requests
    # and claims
    lookup = lookups.DatabaseLookup(db)
    # which providers a committed change left vacant: their owners hear it
    watch = vacancy.VacancyWatch(cache, conf.scheduler.vacancy_kinds,
                                 on_vacant or (lambda vacant: None))
    # the only writer of allocations: publishes each change to the cache,
    # then to the peers, before it returns
    claims = claims_mod.ClaimService(conf, db, cache, lookup, broadcast,
                                     after_commit=watch.after_commit)
    # each profile's plugins, in the operator's order, ranked in one
    # place: a pipeline per profile and packing policy a request may
    # name (and Placement's allocation candidates: the resource rule
    # alone, the same weighers); a bad profile stops the worker here
    routes = profiles_mod.build(conf, rng or random.Random())
    # holistic groups: decided whole through the same profiles' filters,
    # reserved through the claim service
    groups = groups_mod.GroupService(conf, db, cache, routes, claims,
                                     lookup)
    # decides through the request's profile's pipeline, claims through
    # the claim service; the reservations it marks in the cache keep
    # this worker's concurrent requests apart; a member of a reserved
    # group takes its slot over instead
    placer = placer_mod.Placer(
        conf, cache, routes, layouts_mod.TreeLayouts(), claims, lookup,
        counters, members=members_mod.MemberPlacer(groups))
    # explain asks the placer for a cycle and its pipeline (nothing
    # claimed); statistics read the claim service's lost races
    operator = operator_mod.OperatorService(
        conf, db, cache, counters, claims=claims, placer=placer,
        worker_name=worker_name)
    # reports and providers into the cache; at start-up the operator's
    # aggregates come first, so that hosts join them as they are loaded
    stats = intake.StatsService(conf, db, cache, counters, ready,
                                load_aggregates=operator.reload_aggregates)
    return Scheduler(stats=stats, placer=placer, claims=claims,
                     operator=operator, counters=counters, ready=ready,
                     groups=groups, vacancy=watch)
