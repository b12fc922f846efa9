"""A solver's answer as the wire's :class:`~gantt.objects.group.GroupPlan`."""

import dataclasses
import datetime

from oslo_utils import uuidutils

from gantt.objects import group as group_obj
from gantt.objects import selection as selection_obj
from gantt.scheduler import selections

#: a Selection's fields that depend on its host and shape only
_PER_HOST = ("service_host", "nodename", "compute_node_uuid", "cell_uuid",
             "weight", "limits", "allocation_request")


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
    hosts = _Hosts(fleet)
    return group_obj.GroupPlan.trusted(
        group_uuid=group_uuid, method=answer.method,
        gap=None if answer.gap is None else float(answer.gap),
        objective_value=(None if answer.objective is None
                         else float(answer.objective)), reserved=reserved,
        expires_at=_aware(expires_at), seconds=float(answer.seconds),
        slots=[_slot(hosts, s, reserved, alternates) for s in planned])


def _aware(moment):
    """The database's naive UTC time as the object's aware one."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=datetime.timezone.utc)


class _Hosts:
    """Selections of a plan's slots, what depends on the host and shape
    only (names, limits, allocation request) built once per host and
    shape and shared: the slots of a class name the same alternates, and
    a 2,000-member plan built four objects per Selection."""

    def __init__(self, fleet):
        self.fleet, self.built = fleet, {}

    def selection(self, row, shape, consumer_uuid, claimed):
        base = self.built.get((row, shape))
        if base is None:
            base = self.built[(row, shape)] = selections.build(
                self.fleet.view, row, consumer_uuid,
                self.fleet.requests[shape].resources, 0.0, claimed=claimed)
            return base
        return selection_obj.Selection.trusted(
            consumer_uuid=consumer_uuid, claimed=claimed,
            **{name: getattr(base, name) for name in _PER_HOST})


def _slot(hosts, slot, reserved, alternates):
    chosen = hosts.selection(slot.row, slot.shape, slot.consumer_uuid,
                             reserved)
    others = [hosts.selection(row, slot.shape, slot.consumer_uuid, False)
              for row in slot.alternates[:alternates]]
    return group_obj.GroupSlot.trusted(
        slot=slot.slot, member=slot.member,
        reservation_uuid=slot.consumer_uuid if reserved else None,
        selections=[chosen] + others)
