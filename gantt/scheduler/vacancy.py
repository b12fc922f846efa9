"""Vacancy: telling a provider's owner that the last allocation left it.

A container service runs its containers in Nova instances that report
themselves as container hosts; once a host holds nothing, its owner may
delete the instance. The worker whose committed change (a release, a
claim moved elsewhere) left such a provider empty announces it once:
``provider.vacant`` with the provider's generation, the token its owner
gives ``retire_provider``, which refuses if anything was placed there
since. Other workers hear of the change as usage news and announce
nothing, so each vacancy is announced at once by exactly one worker.

That worker may die between its commit and the announcement, or the
notification may be lost on its way. Two things make up for it:

* ``gantt host-list --vacant`` (``get_host_states``) lists every vacant
  provider from the workers' caches, whatever was announced: it is the
  durable source, for an owner that polls;
* every worker re-announces, at its periodic usage sync (``[scheduler]
  usage_sync_interval``), each provider that stayed vacant at the same
  generation from one sync to the next and is not retired: once per
  vacancy and worker (:meth:`VacancyWatch.reannounce`). An announcement
  lost with its worker is therefore made again within two sync
  intervals, and an owner hears of a vacancy it did not retire at most
  once more per worker; retiring is a compare-and-swap, so a duplicate
  costs a refused ``retire_provider`` (ProviderNotFound), never a wrong
  deletion.

Which kinds matter is ``[scheduler] vacancy_kinds`` (container hosts by
default).
"""

import dataclasses
import logging

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Vacancy:
    """A provider the last allocation just left."""

    provider_uuid: str
    kind: str
    generation: int
    name: str | None = None
    service: str | None = None
    instance_uuid: str | None = None


class VacancyWatch:
    """Finds, among the providers a committed change touched, those it
    left vacant, and announces each.

    :param cache: the worker's HostStateCache, holding the change already
    :param kinds: the kinds whose vacancy is announced
    :param announce: ``announce(Vacancy)``; a failure is logged, never
        raised into the claim that made the change
    """

    def __init__(self, cache, kinds, announce):
        self.cache = cache
        self.kinds = frozenset(kinds)
        self.announce = announce
        # (uuid, generation) of the providers vacant at the last sync,
        # and those of them re-announced already
        self._last_sync = set()
        self._reannounced = set()

    def after_commit(self, states):
        """``states``: the touched providers' committed states
        (``db.allocations.ProviderState``)."""
        if not self.kinds:
            return
        for state in states:
            if any(state.usages.values()):
                continue
            held = self.cache.vacant(state.uuid, self.kinds)
            if held is None:
                continue
            kind, _generation, name, service, instance_uuid = held
            self._announce(Vacancy(
                provider_uuid=state.uuid, kind=kind,
                generation=state.generation, name=name, service=service,
                instance_uuid=instance_uuid))

    def reannounce(self):
        """At a periodic sync: announce again each provider vacant at the
        same generation as at the previous sync, once.

        :returns: the Vacancies announced
        """
        if not self.kinds:
            return []
        now = {}
        for provider in self.cache.standalone_providers():
            held = self.cache.vacant(provider.uuid, self.kinds)
            # a generation not known yet (-1) is no token to retire with
            if held is not None and held[1] >= 0:
                kind, generation, name, service, instance_uuid = held
                now[(provider.uuid, generation)] = Vacancy(
                    provider_uuid=provider.uuid, kind=kind,
                    generation=generation, name=name, service=service,
                    instance_uuid=instance_uuid)
        due = (now.keys() & self._last_sync) - self._reannounced
        self._last_sync = set(now)
        self._reannounced = (self._reannounced | due) & self._last_sync
        announced = [now[key] for key in sorted(due)]
        for vacancy in announced:
            self._announce(vacancy, again=True)
        return announced

    def _announce(self, vacancy, again=False):
        LOG.info("Provider %s (%s) is vacant at generation %d%s",
                 vacancy.provider_uuid, vacancy.kind, vacancy.generation,
                 " (announced again)" if again else "")
        try:
            self.announce(vacancy)
        except Exception:
            LOG.exception("Could not announce the vacancy of %s",
                          vacancy.provider_uuid)
