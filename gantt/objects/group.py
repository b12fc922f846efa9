"""Holistic groups on the wire: a group described whole
(:class:`GroupRequest`), the joint decision (:class:`GroupPlan`), and the
reference a member's RequestSpec makes to its slot (:class:`GroupSlotRef`).

A group is decided once for all its members and claimed under one
reservation consumer per member slot; each member, created later, names
its slot and takes that claim over (see doc/source/admin/groups.rst).
"""

from gantt.objects import base
from gantt.objects import fields


class _Defaults:
    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class GroupMember(_Defaults, base.GanttObject):
    """``count`` members of one shape: what each asks for is a
    RequestSpec (flavor or request groups, traits, zone, profile)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "name": fields.StringField(),
        "count": fields.NonNegativeIntegerField(),
        "request_spec": fields.ObjectField("RequestSpec"),
    }


@base.GanttObjectRegistry.register
class GroupRequest(_Defaults, base.GanttObject):
    """A whole group: its policies (GroupLevelPolicy, as server groups'
    per-level policies: gantt.objects.request_spec), its member shapes
    and how to decide.

    ``time_budget`` (seconds) bounds the joint solver; ``reservation_ttl``
    (seconds) is how long an unbuilt member's reservation is held.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "group_uuid": fields.UUIDField(),
        "project_id": fields.StringField(nullable=True, default=None),
        "user_id": fields.StringField(nullable=True, default=None),
        "policies": fields.ListOfObjectsField("GroupLevelPolicy",
                                              default=[]),
        "members": fields.ListOfObjectsField("GroupMember"),
        "objective": fields.GroupObjectiveField(default="most-spread"),
        "time_budget": fields.FloatField(default=1.0),
        "reservation_ttl": fields.NonNegativeIntegerField(default=600),
    }

    obj_relationships = {"policies": [("1.0", "1.0")],
                         "members": [("1.0", "1.0")]}


@base.GanttObjectRegistry.register
class GroupSlot(_Defaults, base.GanttObject):
    """One member slot of a plan: its shape, the reservation consumer
    that holds its claim (None in a dry run) and ``[chosen,
    alternates…]`` as Selections (the chosen one ``claimed`` when
    reserved)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "slot": fields.NonNegativeIntegerField(),
        "member": fields.StringField(),
        "reservation_uuid": fields.UUIDField(nullable=True, default=None),
        "selections": fields.ListOfObjectsField("Selection"),
    }


@base.GanttObjectRegistry.register
class GroupPlan(_Defaults, base.GanttObject):
    """The joint decision for a group.

    ``method``: ``solver-optimal`` (proved optimal), ``solver-feasible``
    (the solver's best in the time budget; ``gap`` is how far from the
    optimum it may be, relative) or ``greedy-fallback`` (the sequential
    answer: the solver found nothing better in time, or the model was too
    large).
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "group_uuid": fields.UUIDField(),
        "slots": fields.ListOfObjectsField("GroupSlot", default=[]),
        "method": fields.StringField(),
        "gap": fields.FloatField(nullable=True, default=None),
        "objective_value": fields.FloatField(nullable=True, default=None),
        "reserved": fields.BooleanField(default=False),
        "expires_at": fields.DateTimeField(nullable=True, default=None),
        "seconds": fields.FloatField(default=0.0),
    }


@base.GanttObjectRegistry.register
class GroupSlotRef(_Defaults, base.GanttObject):
    """Which reserved slot of which group a member is built into."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "group_uuid": fields.UUIDField(),
        "slot": fields.NonNegativeIntegerField(),
    }
