"""MemberPlacer: ``select_destinations`` for an instance that names a
reserved slot of a holistic group (``RequestSpec.group_slot``).

No new decision when the slot is still reserved and its host is up: the
slot's claim passes to the instance in one transaction
(:func:`gantt.db.reservations.convert`). Otherwise (the slot expired or
was released, or its host is down or disabled) the slot is freed and the
member is placed anew as a one-member extension of the group, every other
member held where it is, so the group's policies still hold. Either way
the alternates are hosts that keep the group's policies, for
``reclaim`` after a failed build.
"""

import logging

from gantt import exception
from gantt.db import allocations
from gantt.db import reservations
from gantt.objects import group as group_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.scheduler import claims as claims_mod
from gantt.scheduler import selections
from gantt.scheduler.groups import service as service_mod

LOG = logging.getLogger(__name__)


class MemberPlacer:
    """Builds members into their reserved slots."""

    def __init__(self, groups):
        self.groups = groups

    def place(self, spec, instance_uuids, return_alternates=True):
        """``[[claimed, alternates…]]`` for the one instance.

        Two transactions when the slot is taken over: one reads the
        group's rules, the slot, what it holds and where the group's
        members are; the other takes the slot (:func:`reservations.
        convert`). The alternates are decided in between, on the cache.

        :raises: InvalidRequest (an unknown group; a member asking for
            other resources than its slot holds), NoValidHost, SlotTaken
            (another member took the slot), ConsumerConflict
        """
        if len(instance_uuids) != 1:
            raise exception.InvalidRequest(
                reason="a request naming a group slot places one instance")
        ref, instance = spec.group_slot, instance_uuids[0]
        groups = self.groups
        with groups.db.begin() as conn:
            slot = _read_slot(conn, ref)
        request = _member_request(ref.group_uuid, slot.stored, spec)
        view = groups.cache.view(groups.conf.scheduler.service_down_time)
        if slot.row is not None and (slot.row.instance_uuid is not None
                                     or _up(view, slot.holds)):
            chosen = view.row_of(next(iter(slot.holds), None))
            fleet, answer = groups.decide(
                request, _others(slot.members, view, chosen), view=view)
            _check_shape(ref, slot.holds, fleet.requests[0].resources)
            if self._take(slot.row, instance):
                return [self._answer(fleet, answer, chosen, instance,
                                     slot.holds, return_alternates)]
        if slot.row is not None and slot.row.instance_uuid is None:
            groups.release_slot(slot.row.consumer_uuid)
        return [self._anew(request, instance, return_alternates)]

    def _take(self, row, instance):
        now = self.groups.clock()
        return self.groups.claims.claimer.transaction(
            instance, lambda conn: reservations.convert(
                conn, row, instance, now=now))

    def _answer(self, fleet, answer, chosen, instance, held,
                return_alternates):
        view = fleet.view
        resources = next(iter(held.values()))
        claimed = selections.build(view, chosen, instance, resources, 0.0,
                                   claimed=True, allocations=held)
        if not return_alternates or not answer.placed:
            return [claimed]
        rows = [int(answer.rows[0])] + list(answer.alternates[0])
        return [claimed] + [
            selections.build(view, r, instance, resources, 0.0,
                             claimed=False)
            for r in dict.fromkeys(rows) if r != chosen][
            :self.groups.alternates_count()]

    def _anew(self, request, instance, return_alternates):
        """Place the member as a one-member extension of its group."""
        groups = self.groups
        held = groups.lookup.group_hosts(request.group_uuid)
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


class _Slot:
    """What one read of a slot found."""

    def __init__(self, stored, row, holds, members):
        self.stored, self.row = stored, row
        self.holds = holds          # {provider uuid: {class: amount}}
        self.members = members      # {host: members of the group}


def _read_slot(conn, ref):
    stored = reservations.load_plan(conn, ref.group_uuid)
    if stored is None:
        raise exception.InvalidRequest(
            reason="group %s is not reserved here" % ref.group_uuid)
    row = reservations.slot_row(conn, ref.group_uuid, ref.slot)
    holds = {}
    if row is not None:
        holds = allocations.consumer_allocations(
            conn, row.instance_uuid or row.consumer_uuid)
    return _Slot(stored, row, holds,
                 allocations.group_hosts(conn, ref.group_uuid))


def _up(view, holds):
    """Whether every host the slot holds room on is up and enabled."""
    rows = [view.row_of(uuid) for uuid in holds]
    return bool(rows) and all(
        r is not None and view.up()[r] and not view.column("disabled")[r]
        for r in rows)


def _others(members, view, chosen):
    """The group's members per host, this one left out."""
    held = dict(members)
    if chosen is not None:
        host = str(view.hosts[chosen])
        if held.get(host):
            held[host] -= 1
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


def _member_request(group_uuid, stored, spec):
    """A one-member GroupRequest of ``spec`` under the stored rules."""
    member_spec = spec.obj_clone()
    member_spec.group_slot = None
    member_spec.num_instances = 1
    return group_obj.GroupRequest(
        group_uuid=group_uuid, project_id=stored.project_id,
        user_id=stored.user_id, objective=stored.objective,
        policies=[request_spec_obj.GroupLevelPolicy(**p)
                  for p in stored.policies],
        members=[group_obj.GroupMember(name="member", count=1,
                                       request_spec=member_spec)],
        time_budget=1.0, reservation_ttl=1)

