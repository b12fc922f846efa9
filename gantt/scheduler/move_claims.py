"""The claims of moves: a migration's, and Nova's evacuation's.

A migration (:meth:`MoveClaims.move_claim`) hands the instance's source
allocations to the migration consumer in the transaction that claims the
destination for the instance (Placement's and Nova's way since Queens).

An evacuation (:meth:`MoveClaims.evacuation_claim`) is Nova's move off
a compute that is down: Nova's conductor asks for a host other than the
instance's (``ignore_hosts`` names it) while the instance still holds its
claim there, and nova-scheduler claims the destination *in addition*
(Placement's "doubled-up" allocation, ``claim_resources`` of Nova's report
client): both stay counted until the source compute comes back and frees
its part (``_destroy_evacuated_instances``), or the evacuation fails and
the destination's part is freed. Gantt's own calls never grow a held
claim unasked (:mod:`.held`); Nova's front door asks for this one, and
only for an instance whose whole claim is on hosts the request ignores.

A mixin of :class:`~.placer.Placer`: both claim through its ranking and
picking (``_claim_one``), only the claim written differs.
"""

import functools
import logging

from gantt import exception

LOG = logging.getLogger(__name__)


class MoveClaims:
    """The move claims of a :class:`~.placer.Placer`."""

    def move_claim(self, spec, instance_uuid, migration_uuid,
                   return_alternates=True):
        """Choose and claim a destination for a moving instance.

        The instance's current allocations (the source) pass to the
        migration consumer in the same transaction that claims the
        destination for the instance, so both stay counted until
        ``confirm_move`` or ``revert_move``. Resizing on the same host
        needs room for both, as with Placement. Calling it again (a lost
        reply) replaces the destination and leaves the source alone.

        :returns: ``[claimed, alternates…]`` for the instance
        :raises: InvalidRequest, NoValidHost (nothing changed)
        """
        if instance_uuid == migration_uuid:
            raise exception.InvalidRequest(
                reason="the migration uuid must differ from the instance's")
        # a duplicate delivered after the move ended (the claim
        # transaction checks again; this saves choosing for nothing)
        self.lookup.refuse_finished_move(migration_uuid)
        cycle = self.cycle(spec, [instance_uuid])
        if self.lookup.allocations_of([migration_uuid]):
            # a retried move: the destination claimed before is the
            # instance's to replace; the source stays with the migration
            cycle.count_out_held(self.lookup.allocations_of([instance_uuid]))
        elif cycle.request.instance_group is not None:
            cycle.count_out_member(self.lookup.allocations_of(
                [instance_uuid]).get(instance_uuid, {}))
        claim = functools.partial(self.claims.claim_move,
                                  migration_uuid=migration_uuid)
        claimed = self._claim_one(cycle, instance_uuid, claim)
        placed = self._selections(cycle, claimed, return_alternates)
        LOG.info("Move of %s (migration %s): destination %s claimed",
                 instance_uuid, migration_uuid, placed[0].service_host)
        return placed

    def evacuation_claim(self, spec, instance_uuid, return_alternates=True):
        """Claim a destination in addition to the claim the instance holds
        on hosts ``spec`` ignores (Nova's evacuation, see the module).

        :returns: ``[claimed, alternates…]`` for the instance; the
            Selection's allocation request is the destination's part
        :raises: ConsumerConflict (it holds nothing, or holds some on a
            host the request allows), InvalidRequest, NoValidHost
        """
        held = self.lookup.allocations_of([instance_uuid]).get(
            instance_uuid, {})
        cycle = self.cycle(spec, [instance_uuid])
        _refuse_unless_left_behind(cycle, instance_uuid, held)
        cycle.count_out_member(held)

        def claim(consumer_uuid, allocation_map, *, owner):
            return self.claims.claim(consumer_uuid, added(
                held, allocation_map), owner=owner)

        claimed = self._claim_one(cycle, instance_uuid, claim)
        placed = self._selections(cycle, claimed, return_alternates)
        LOG.info("Evacuation of %s: destination %s claimed; it keeps its "
                 "claim on %s until its compute frees it", instance_uuid,
                 placed[0].service_host, ", ".join(sorted(held)))
        return placed


def _refuse_unless_left_behind(cycle, instance_uuid, held):
    """ConsumerConflict unless every provider of ``held`` is on a host
    the request ignores (what the instance leaves behind)."""
    view = cycle.view
    ignored = {h.lower() for h in cycle.request.ignore_hosts or ()}
    rows = [view.row_of(p) for p in held]
    hosts = {str(view.hosts[r]).lower() for r in rows if r is not None}
    if not held or None in rows or not hosts <= ignored:
        raise exception.ConsumerConflict(
            consumer=instance_uuid,
            reason="only a claim on the hosts a request ignores can have "
                   "a destination added (an evacuation)")


def added(held, allocation_map):
    """``held`` plus ``allocation_map`` (``{provider: {class: amount}}``),
    amounts of a provider in both summed."""
    total = {p: dict(amounts) for p, amounts in held.items()}
    for provider, amounts in allocation_map.items():
        mine = total.setdefault(provider, {})
        for rc, amount in amounts.items():
            mine[rc] = mine.get(rc, 0) + amount
    return total
