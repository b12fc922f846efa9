"""Vacancy: telling a provider's owner that the last allocation left it.

A container service runs its containers in Nova instances that report
themselves as container hosts; once a host holds nothing, its owner may
delete the instance. The worker whose committed change (a release, a
claim moved elsewhere) left such a provider empty announces it once:
``provider.vacant`` with the provider's generation, the token its owner
gives ``retire_provider``, which refuses if anything was placed there
since. Other workers hear of the change as usage news and announce
nothing, so each vacancy is announced by exactly one worker (or none, if
that worker dies between its commit and the announcement: ``gantt
host-list --vacant`` lists every vacant provider whatever was announced).

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
            vacancy = Vacancy(provider_uuid=state.uuid, kind=kind,
                              generation=state.generation, name=name,
                              service=service, instance_uuid=instance_uuid)
            LOG.info("Provider %s (%s) is vacant at generation %d",
                     state.uuid, kind, state.generation)
            try:
                self.announce(vacancy)
            except Exception:
                LOG.exception("Could not announce the vacancy of %s",
                              state.uuid)
