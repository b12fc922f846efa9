"""RequestSpec and its parts: what a conductor asks the scheduler for."""

from oslo_utils import versionutils

from gantt import exception
from gantt.objects import base
from gantt.objects import fields


class _Defaults:
    """Unset optional fields read as their declared defaults."""

    def obj_load_attr(self, attrname):
        self.obj_set_defaults(attrname)


@base.GanttObjectRegistry.register
class Flavor(_Defaults, base.GanttObject):
    """The size of an instance; ``extra_specs`` as in Nova."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "name": fields.StringField(default="unnamed"),
        "vcpus": fields.NonNegativeIntegerField(default=0),
        "memory_mb": fields.NonNegativeIntegerField(default=0),
        "root_gb": fields.NonNegativeIntegerField(default=0),
        "ephemeral_gb": fields.NonNegativeIntegerField(default=0),
        "swap": fields.NonNegativeIntegerField(default=0),
        "extra_specs": fields.DictOfStringsField(default={}),
    }


@base.GanttObjectRegistry.register
class ImageMeta(_Defaults, base.GanttObject):
    """The image an instance boots from; only its properties matter here."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "id": fields.StringField(nullable=True, default=None),
        "name": fields.StringField(nullable=True, default=None),
        "properties": fields.DictOfStringsField(default={}),
    }


@base.GanttObjectRegistry.register
class RequestGroup(_Defaults, base.GanttObject):
    """One group of resources that must come from one provider.

    The unsuffixed group (``suffix`` empty) may be spread across a provider
    tree; suffixed (granular) groups each come from a single provider.
    """

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "suffix": fields.StringField(default=""),
        "resources": fields.DictOfIntegersField(default={}),
        "required_traits": fields.ListOfStringsField(default=[]),
        "forbidden_traits": fields.ListOfStringsField(default=[]),
        # each inner list is "at least one of these traits"
        "any_traits": fields.ListOfListsOfStringsField(default=[]),
        # each inner list is "member of at least one of these aggregates"
        "member_of": fields.ListOfListsOfStringsField(default=[]),
        "forbidden_aggregates": fields.ListOfStringsField(default=[]),
        "in_tree": fields.UUIDField(nullable=True, default=None),
    }


@base.GanttObjectRegistry.register
class GroupLevelPolicy(_Defaults, base.GanttObject):
    """A server group's rule at one level of the datacenter (see
    :class:`gantt.scheduler.state.topology.LevelPolicy`)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "level": fields.StringField(),
        "rule": fields.LevelRuleField(),
        # max-per: members per domain; spread: the max skew
        "limit": fields.IntegerField(default=1),
        # soft rules: the weigher's weight
        "weight": fields.FloatField(default=1.0),
    }


@base.GanttObjectRegistry.register
class InstanceGroup(_Defaults, base.GanttObject):
    """A server group: its policy is enforced by filters and in the claim."""

    # Version 1.0: Initial version
    # Version 1.1: Added level_policies
    VERSION = "1.1"

    fields = {
        "uuid": fields.UUIDField(),
        "name": fields.StringField(nullable=True, default=None),
        "policy": fields.GroupPolicyField(),
        # e.g. {"max_server_per_host": "2"} for anti-affinity
        "rules": fields.DictOfStringsField(default={}),
        # instances the caller already knows to be members (may be empty:
        # the scheduler also knows the members it placed)
        "members": fields.ListOfStringsField(default=[]),
        "hosts": fields.ListOfStringsField(default=[]),
        # rules per level of the datacenter (rack anti-affinity…), besides
        # ``policy`` (which is a rule at level host)
        "level_policies": fields.ListOfObjectsField("GroupLevelPolicy",
                                                    default=[]),
    }

    obj_relationships = {"level_policies": [("1.1", "1.0")]}

    def obj_make_compatible(self, primitive, target_version):
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            # checked first: ovo's backport drops the field. An older
            # worker would place the group ignoring the level policies.
            if primitive.get("level_policies"):
                raise exception.VersionCapped(
                    method="a server group with level policies",
                    version="1.11",
                    cap="a version older than 1.11 (InstanceGroup 1.0)")
            primitive.pop("level_policies", None)
        super().obj_make_compatible(primitive, target_version)


@base.GanttObjectRegistry.register
class Destination(_Defaults, base.GanttObject):
    """A destination the caller requires (host, node, cell or aggregates)."""

    # Version 1.0: Initial version
    VERSION = "1.0"

    fields = {
        "host": fields.StringField(nullable=True, default=None),
        "node": fields.StringField(nullable=True, default=None),
        "cell_uuid": fields.UUIDField(nullable=True, default=None),
        # each entry is a comma-separated "any of" list, as in Nova
        "aggregates": fields.ListOfStringsField(default=[]),
    }


@base.GanttObjectRegistry.register
class RequestSpec(_Defaults, base.GanttObject):
    """Everything the scheduler needs to place ``num_instances`` instances."""

    # Version 1.0: Initial version
    # Version 1.1: Added same_subtree, root_required and root_forbidden
    # Version 1.2: Added profile, packing and capabilities; flavor is
    #              nullable (a request without one asks for its
    #              request_groups' resources only)
    # Version 1.3: Added group_slot (a member of a reserved group)
    VERSION = "1.3"

    fields = {
        "instance_uuid": fields.UUIDField(nullable=True, default=None),
        "project_id": fields.StringField(nullable=True, default=None),
        "user_id": fields.StringField(nullable=True, default=None),
        "num_instances": fields.IntegerField(default=1),
        "flavor": fields.ObjectField("Flavor", nullable=True),
        "image": fields.ObjectField("ImageMeta", nullable=True, default=None),
        "request_groups": fields.ListOfObjectsField("RequestGroup",
                                                    default=[]),
        "group_policy": fields.RequestGroupPolicyField(
            nullable=True, default=None),
        "availability_zone": fields.StringField(nullable=True, default=None),
        "instance_group": fields.ObjectField(
            "InstanceGroup", nullable=True, default=None),
        "scheduler_hints": fields.DictOfListOfStringsField(default={}),
        "requested_destination": fields.ObjectField(
            "Destination", nullable=True, default=None),
        "ignore_hosts": fields.ListOfStringsField(default=[]),
        "force_hosts": fields.ListOfStringsField(default=[]),
        "force_nodes": fields.ListOfStringsField(default=[]),
        # Placement's same_subtree: each inner list names request group
        # suffixes whose providers must share one subtree
        "same_subtree": fields.ListOfListsOfStringsField(default=[]),
        # traits the root of the chosen tree must have / must not have
        "root_required": fields.ListOfStringsField(default=[]),
        "root_forbidden": fields.ListOfStringsField(default=[]),
        # the scheduling profile that ranks this request (None: default)
        "profile": fields.StringField(nullable=True, default=None),
        # a packing policy, where the profile lets requests choose one
        "packing": fields.StringField(nullable=True, default=None),
        # capability requirements, as volume-type extra specs write them
        # (e.g. {"thin_provisioning_support": "<is> True"})
        "capabilities": fields.DictOfStringsField(default={}),
        # the reserved slot of a holistic group this instance is built
        # into (gantt.objects.group): its claim is taken over, not decided
        "group_slot": fields.ObjectField("GroupSlotRef", nullable=True,
                                         default=None),
    }

    # which version of each embedded object each RequestSpec version carries
    obj_relationships = {
        "flavor": [("1.0", "1.0")], "image": [("1.0", "1.0")],
        "request_groups": [("1.0", "1.0")],
        "instance_group": [("1.0", "1.0"), ("1.3", "1.1")],
        "requested_destination": [("1.0", "1.0")],
        "group_slot": [("1.3", "1.0")]}

    def obj_make_compatible(self, primitive, target_version):
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 3):
            _refuse_group_slot(primitive)
        super().obj_make_compatible(primitive, target_version)
        if target < (1, 2):
            _refuse_newer_asks(primitive)
            for name in ("profile", "packing", "capabilities"):
                primitive.pop(name, None)
        if target < (1, 1):
            for name in ("same_subtree", "root_required", "root_forbidden"):
                primitive.pop(name, None)


#: 1.2's fields whose meaning a worker reading 1.1 would silently drop
_NEWER_ASKS = (("profile", "a request naming scheduling profile %s"),
               ("packing", "a request naming packing policy %s"),
               ("capabilities", "a request with capabilities %s"))


def _refuse_newer_asks(primitive):
    """Refuse a 1.2 request that a 1.1 worker would place differently:
    one naming a profile (other than ``default``), a packing policy or
    capabilities, or one without a flavor. Nothing is sent: placing it
    with the wrong profile would be silently wrong.

    :raises: VersionCapped
    """
    # (a flavor never set is left out: an older worker refuses that one
    # itself, "the request has no flavor")
    if "flavor" in primitive and primitive["flavor"] is None:
        asks = "a request without a flavor"
    else:
        asks = next((what % (_named(primitive[name]),)
                     for name, what in _NEWER_ASKS
                     if primitive.get(name) not in (None, {}, "default")),
                    None)
    if asks is not None:
        raise exception.VersionCapped(
            method=asks, version="1.10",
            cap="a version older than 1.10 (RequestSpec 1.1)")


def _refuse_group_slot(primitive):
    """A member of a reserved group cannot be sent to a worker that
    does not know reservations: it would be placed anew, outside its
    group's plan.

    :raises: VersionCapped
    """
    if primitive.get("group_slot") is not None:
        raise exception.VersionCapped(
            method="a request naming a reserved group slot",
            version="1.12",
            cap="a version older than 1.12 (RequestSpec 1.2)")
    primitive.pop("group_slot", None)


def _named(value):
    """A profile's or policy's name; a dict's keys."""
    return ", ".join(sorted(value)) if isinstance(value, dict) else value
