"""A solver's answer as the wire's :class:`~gantt.objects.group.GroupPlan`."""

import dataclasses
import datetime

from oslo_utils import uuidutils

from gantt.objects import group as group_obj
from gantt.scheduler import selections


@dataclasses.dataclass(frozen=True)
class Slot:
    """One member slot of an answer: its number, shape and host row."""

    slot: int
    shape: int
    member: str
    row: int
    alternates: tuple
    consumer_uuid: str


def slots(fleet, answer, first_slot=0):
    """The :class:`Slot` of each member, numbered from ``first_slot``,
    each with a new reservation consumer uuid."""
    shape_of = [i for i, s in enumerate(fleet.problem.shapes)
                for _ in range(s.count)]
    return [Slot(first_slot + i, shape, fleet.problem.shapes[shape].name,
                 int(row), tuple(alternates), uuidutils.generate_uuid())
            for i, (shape, row, alternates) in enumerate(zip(
                shape_of, answer.rows, answer.alternates, strict=True))]


def allocation(fleet, slot, row=None):
    """``{provider uuid: {class: amount}}`` of a slot on its row (or on
    ``row``)."""
    resources = fleet.requests[slot.shape].resources
    return {str(fleet.view.uuids[slot.row if row is None else row]):
            dict(resources)}


def alternate_uuids(fleet, slot, count):
    """The providers of a slot's first ``count`` alternates, as the plan
    answers them (kept with the reservation, see
    :func:`gantt.db.reservations.reserve`)."""
    return tuple(str(fleet.view.uuids[row])
                 for row in slot.alternates[:count])


def build(group_uuid, fleet, answer, planned, *, reserved, expires_at=None,
          alternates=2):
    """The GroupPlan of ``planned`` slots."""
    # the scheduler's own values (as gantt.scheduler.selections builds
    # Selections): built without ovo's coercion of each field
    return group_obj.GroupPlan.trusted(
        group_uuid=group_uuid, method=answer.method,
        gap=None if answer.gap is None else float(answer.gap),
        objective_value=(None if answer.objective is None
                         else float(answer.objective)), reserved=reserved,
        expires_at=_aware(expires_at), seconds=float(answer.seconds),
        slots=[_slot(fleet, s, reserved, alternates) for s in planned])


def _aware(moment):
    """The database's naive UTC time as the object's aware one."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=datetime.timezone.utc)


def _slot(fleet, slot, reserved, alternates):
    resources = fleet.requests[slot.shape].resources
    chosen = selections.build(fleet.view, slot.row, slot.consumer_uuid,
                              resources, 0.0, claimed=reserved)
    others = [selections.build(fleet.view, row, slot.consumer_uuid,
                               resources, 0.0, claimed=False)
              for row in slot.alternates[:alternates]]
    return group_obj.GroupSlot.trusted(
        slot=slot.slot, member=slot.member,
        reservation_uuid=slot.consumer_uuid if reserved else None,
        selections=[chosen] + others)
