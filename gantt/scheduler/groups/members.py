"""MemberPlacer: ``select_destinations`` for an instance that names a
reserved slot of a holistic group (``RequestSpec.group_slot``).

No new decision when the slot is still reserved and its host is up: the
slot's claim passes to the instance in one transaction
(:func:`gantt.db.reservations.convert`), and the alternates are the
ones the group's plan decided for the slot and kept with it: hosts of
the slot's class (the same domain at every level a policy names) that
the plan left empty, so that a member moved there keeps every policy
whatever the other members became. They are checked again on the cache
(up, enabled, room for the member); only when one of them no longer
passes (or the slot was reserved before alternates were kept) are the
alternates decided anew, on the cache, with the group's members read
where they are. Otherwise (the slot expired or was released, or its
host is down or disabled) the slot is freed and the member is placed
anew as a one-member extension of the group, every other member held
where it is, so the group's policies still hold.
"""

import logging
import typing

from gantt import exception
from gantt.db import allocations
from gantt.db import reservations
from gantt.objects import group as group_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.scheduler import claims as claims_mod
from gantt.scheduler import selections
from gantt.scheduler.groups import fleet as fleet_mod
from gantt.scheduler.groups import service as service_mod

LOG = logging.getLogger(__name__)


class MemberPlacer:
    """Builds members into their reserved slots."""

    def __init__(self, groups):
        self.groups = groups

    def place(self, spec, instance_uuids, return_alternates=True):
        """``[[claimed, alternates…]]`` for the one instance.

        One transaction when the slot is taken over: a statement reads
        the group's rules, the slot (and its kept alternates) and what it
        holds; then the slot is taken (:func:`reservations.convert`, one
        statement on PostgreSQL, three on MariaDB, behind a
        compare-and-swap) and committed.

        :raises: InvalidRequest (an unknown group; a member asking for
            other resources than its slot holds), NoValidHost,
            GroupSlotTaken (another member took the slot),
            ConsumerConflict
        """
        if len(instance_uuids) != 1:
            raise exception.InvalidRequest(
                reason="a request naming a group slot places one instance")
        ref, instance = spec.group_slot, instance_uuids[0]
        groups = self.groups
        with groups.db.begin() as conn:
            slot = reservations.read_slot(conn, ref.group_uuid, ref.slot)
            if slot.stored is None:
                raise exception.InvalidRequest(
                    reason="group %s is not reserved here" % ref.group_uuid)
            taken = self._take_over(conn, _Member(ref, spec, instance, slot),
                                    return_alternates)
        if taken is not None:
            return [taken]
        if slot.row is not None and slot.row.instance_uuid is None:
            groups.release_slot(slot.row.consumer_uuid)
        return [self._anew(_member_request(ref.group_uuid, slot.stored,
                                           spec), instance,
                           return_alternates)]

    def _take_over(self, conn, member, return_alternates):
        """``[claimed, alternates…]`` if the slot was taken over in
        ``conn``'s transaction, else None (gone, or its host down)."""
        groups, slot = self.groups, member.slot
        view = groups.cache.view(groups.conf.scheduler.service_down_time)
        if slot.row is None or (slot.row.instance_uuid is None
                                and not _up(view, slot.holds)):
            return None
        request = fleet_mod.member_request(
            groups.routes, groups.lookup, _member_spec(member.spec),
            "member")
        _check_shape(member.ref, slot.holds, request.resources)
        chosen = view.row_of(next(iter(slot.holds), None))
        others = (self._alternates(conn, member, view, chosen)
                  if return_alternates else [])
        if not reservations.convert(conn, slot.row, member.instance,
                                    now=groups.clock()):
            return None
        resources = next(iter(slot.holds.values()))
        return [selections.build(view, chosen, member.instance, resources,
                                 0.0, claimed=True, allocations=slot.holds)
                ] + [selections.build(view, r, member.instance, resources,
                                      0.0, claimed=False) for r in others]

    def _alternates(self, conn, member, view, chosen):
        """The slot's alternate rows, best first: the plan's when every
        one of them still takes the member, else decided anew."""
        kept = member.slot.alternates()
        if kept is not None:
            rows = _usable(view, kept, next(iter(
                member.slot.holds.values()), {}))
            if len(rows) == len(kept):
                return rows
        return self._decided(conn, member, view, chosen)

    def _decided(self, conn, member, view, chosen):
        """Alternates decided on the cache, the group's members held
        where they are (this one left out)."""
        groups, ref = self.groups, member.ref
        request = _member_request(ref.group_uuid, member.slot.stored,
                                  member.spec)
        members = reservations.members_by_provider(conn, ref.group_uuid)
        _fleet, answer = groups.decide(
            request, _others(members, view, chosen), view=view)
        if not answer.placed:
            return []
        rows = [int(answer.rows[0])] + list(answer.alternates[0])
        return [r for r in dict.fromkeys(rows) if r != chosen][
            :groups.alternates_count()]

    def _anew(self, request, instance, return_alternates):
        """Place the member as a one-member extension of its group."""
        groups = self.groups
        held = groups.held(request.group_uuid)
        rule = service_mod.claim_rule(request.group_uuid,
                                      service_mod.policies_of(request))
        owner = allocations.ConsumerInfo(request.project_id,
                                         request.user_id, rule)
        for _ in range(groups.conf.scheduler.claim_retry_count):
            fleet, answer = groups.decide(request, held)
            if not answer.placed:
                raise exception.NoValidHost(reason=answer.reason)
            row = int(answer.rows[0])
            resources = dict(fleet.requests[0].resources)
            where = {str(fleet.view.uuids[row]): resources}
            try:
                groups.claims.claim(instance, where, owner=owner, new=True)
            except claims_mod.NEXT_CANDIDATE as exc:
                groups.claims.refresh(where, exc)
                continue
            LOG.info("Member %s of group %s placed anew on %s (its slot "
                     "was gone)", instance, request.group_uuid,
                     fleet.view.hosts[row])
            view = fleet.view
            others = answer.alternates[0] if return_alternates else ()
            return [selections.build(view, row, instance, resources, 0.0,
                                     claimed=True)] + [
                selections.build(view, r, instance, resources, 0.0,
                                 claimed=False) for r in others]
        raise exception.NoValidHost(
            reason="claims for the member lost %d races in a row"
            % groups.conf.scheduler.claim_retry_count)


class _Member(typing.NamedTuple):
    """One member naming its slot, and the slot as read."""

    ref: object               # the spec's GroupSlotRef
    spec: object              # the member's RequestSpec
    instance: str
    slot: reservations.SlotRead


def _usable(view, uuids, resources):
    """The rows of ``uuids`` that are up, enabled and have room for
    ``resources`` (``{class: amount}``) now, in order."""
    rows = [view.row_of(uuid) for uuid in uuids]
    ok = view.up() & ~view.column("disabled").astype(bool)
    for rc, amount in resources.items():
        ok = ok & view.fits(rc, amount)
    return [r for r in rows if r is not None and ok[r]]


def _up(view, holds):
    """Whether every host the slot holds room on is up and enabled."""
    rows = [view.row_of(uuid) for uuid in holds]
    return bool(rows) and all(
        r is not None and view.up()[r] and not view.column("disabled")[r]
        for r in rows)


def _others(members, view, chosen):
    """The group's members per provider, this one left out."""
    held = dict(members)
    if chosen is not None:
        uuid = str(view.uuids[chosen])
        if held.get(uuid):
            held[uuid] -= 1
    return held


def _check_shape(ref, holds, resources):
    """A member must ask for what its slot holds: taking the slot over
    moves those allocations as they are."""
    reserved = {}
    for amounts in holds.values():
        for rc, amount in amounts.items():
            reserved[rc] = reserved.get(rc, 0) + amount
    if holds and reserved != dict(resources):
        raise exception.InvalidRequest(
            reason="slot %d of group %s holds %s; this member asks for %s"
            % (ref.slot, ref.group_uuid, _amounts(reserved),
               _amounts(resources)))


def _amounts(resources):
    return ", ".join("%s=%d" % kv for kv in sorted(resources.items()))


def _member_spec(spec):
    """``spec`` as one member without a slot: a new RequestSpec sharing
    ``spec``'s field values (read, never changed, by the decision), not a
    deep copy of them; ``spec`` itself is left as it was."""
    fields = {name: getattr(spec, name) for name in spec.fields
              if spec.obj_attr_is_set(name)}
    fields.update(group_slot=None, num_instances=1)
    return type(spec)(spec._context, **fields)


def _member_request(group_uuid, stored, spec):
    """A one-member GroupRequest of ``spec`` under the stored rules."""
    member_spec = _member_spec(spec)
    return group_obj.GroupRequest(
        group_uuid=group_uuid, project_id=stored.project_id,
        user_id=stored.user_id, objective=stored.objective,
        policies=[request_spec_obj.GroupLevelPolicy(**p)
                  for p in stored.policies],
        members=[group_obj.GroupMember(name="member", count=1,
                                       request_spec=member_spec)],
        time_budget=1.0, reservation_ttl=1)

