"""ResourceRequest: a RequestSpec checked and turned into what filters read.

Everything a caller can get wrong is caught here, once, with an
``InvalidRequest`` that names the bad value, so that no filter ever has to
guess at a malformed spec.
"""

import collections
import dataclasses
import math
import re

import os_resource_classes
import os_traits

from gantt import exception
from gantt.scheduler import numa as numa_mod

_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())
# resources[N]:CLASS=amount and trait[N]:NAME=required|forbidden, as in Nova
# (suffixes as Nova and Placement take them: digits, or _ and up to 64 of
# [a-zA-Z0-9_-])
_RESOURCES_SPEC = re.compile(
    r"^resources([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?:(.+)$")
_TRAIT_SPEC = re.compile(r"^trait([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?:(.+)$")
_MAX_INSTANCES = 1000
_HARD_POLICIES = ("affinity", "anti-affinity")


def validate_resource_class(name):
    if name in _STANDARD_CLASSES or _CUSTOM.match(name or ""):
        return name
    raise exception.InvalidRequest(
        reason="unknown resource class %r (use a standard class or "
               "CUSTOM_[A-Z0-9_]+)" % (name,))


def validate_trait(name):
    if name in _STANDARD_TRAITS or _CUSTOM.match(name or ""):
        return name
    raise exception.InvalidRequest(
        reason="unknown trait %r (use a standard trait or CUSTOM_[A-Z0-9_]+)"
               % (name,))


@dataclasses.dataclass(frozen=True)
class ResourceGroup:
    """One request group, validated."""

    suffix: str
    resources: dict
    required_traits: frozenset
    forbidden_traits: frozenset
    any_traits: tuple          # of frozensets: at least one of each
    member_of: tuple           # of frozensets: member of one of each
    forbidden_aggregates: frozenset
    in_tree: str | None


@dataclasses.dataclass
class GroupState:
    """A server group's policy and where its members already are."""

    uuid: str
    policy: str
    max_per_host: int
    # host name -> number of members already there
    hosts: collections.Counter

    @property
    def is_hard(self):
        return self.policy in _HARD_POLICIES


@dataclasses.dataclass
class ResourceRequest:
    """A validated request for one instance (repeated num_instances times)."""

    spec: object                      # the RequestSpec, for plugins
    groups: tuple                     # of ResourceGroup
    group_policy: str
    resources: dict                   # all groups summed, per class
    availability_zone: str | None
    force_hosts: frozenset
    force_nodes: frozenset
    ignore_hosts: frozenset
    destination: object | None        # Destination
    instance_group: GroupState | None
    same_host: frozenset | None       # hosts of the instances in the hint
    different_host: frozenset | None
    extra_specs: dict
    image_properties: dict
    hints: dict
    # the guest NUMA topology (hw:numa_nodes, cpu_policy, mem_page_size)
    numa: numa_mod.GuestTopology | None = None
    project_id: str | None = None
    image_id: str | None = None
    # what plugins derive from the request once (PCI requests…), by name
    derived: dict = dataclasses.field(default_factory=dict)
    # Placement's same_subtree (frozensets of suffixes) and root traits
    same_subtree: tuple = ()
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()

    @property
    def needs_tree_features(self):
        """Whether a lone provider could answer differently than its
        columns say (granular groups spread over a tree need the solver)."""
        return len(self.groups) > 1 or bool(self.same_subtree)

    @property
    def forced(self):
        return bool(self.force_hosts or self.force_nodes)

    def memo(self, name, build):
        """``build()`` once per request, kept under ``name``."""
        if name not in self.derived:
            self.derived[name] = build()
        return self.derived[name]

    @property
    def required_traits(self):
        """Every group's required traits (the isolation pre-filter's)."""
        return frozenset().union(*(g.required_traits for g in self.groups))


def _positive_int(value, what):
    try:
        amount = int(value)
    except (TypeError, ValueError):
        raise exception.InvalidRequest(
            reason="%s must be an integer, got %r" % (what, value)) from None
    if amount < 0:
        raise exception.InvalidRequest(
            reason="%s must not be negative, got %d" % (what, amount))
    return amount


def _flavor_resources(flavor):
    """The unsuffixed group's resources as Nova derives them from a flavor."""
    disk = flavor.root_gb + flavor.ephemeral_gb + math.ceil(flavor.swap / 1024)
    return {"VCPU": flavor.vcpus, "MEMORY_MB": flavor.memory_mb,
            "DISK_GB": disk}


def _groups_from_extra_specs(extra_specs):
    """``{suffix: (resources, required, forbidden)}`` from extra specs."""
    groups = collections.defaultdict(lambda: ({}, set(), set()))
    for key, value in extra_specs.items():
        match = _RESOURCES_SPEC.match(key)
        if match:
            suffix, rc = match.group(1) or "", match.group(2)
            groups[suffix][0][validate_resource_class(rc)] = _positive_int(
                value, "extra spec %s" % key)
            continue
        match = _TRAIT_SPEC.match(key)
        if match:
            suffix, trait = match.group(1) or "", match.group(2)
            validate_trait(trait)
            if value == "required":
                groups[suffix][1].add(trait)
            elif value == "forbidden":
                groups[suffix][2].add(trait)
            else:
                raise exception.InvalidRequest(
                    reason="extra spec %s must be 'required' or 'forbidden', "
                           "got %r" % (key, value))
    return groups


def _explicit_group(group):
    resources = {validate_resource_class(rc): _positive_int(v, rc)
                 for rc, v in group.resources.items()}
    for rc, amount in resources.items():
        # Placement refuses "VCPU:0" too: a zero here is a caller's mistake
        # (a flavor's zero means "none", and is dropped before this point)
        if amount == 0:
            raise exception.InvalidRequest(
                reason="request group %r asks for 0 %s; leave the class out "
                       "instead" % (group.suffix or "", rc))
    return ResourceGroup(
        suffix=group.suffix or "",
        resources=resources,
        required_traits=frozenset(map(validate_trait, group.required_traits)),
        forbidden_traits=frozenset(
            map(validate_trait, group.forbidden_traits)),
        any_traits=tuple(frozenset(map(validate_trait, any_of))
                         for any_of in group.any_traits if any_of),
        member_of=tuple(frozenset(m) for m in group.member_of if m),
        forbidden_aggregates=frozenset(group.forbidden_aggregates),
        in_tree=group.in_tree)


def _build_groups(spec):
    """Flavor, extra specs and explicit groups, merged by suffix."""
    flavor = spec.flavor
    by_suffix = {}
    extra = _groups_from_extra_specs(flavor.extra_specs)
    base_resources = {rc: a for rc, a in _flavor_resources(flavor).items()}
    unsuffixed = extra.get("", ({}, set(), set()))
    # resources:CLASS in extra specs overrides the flavor's own amount
    base_resources.update(unsuffixed[0])
    extra[""] = (base_resources, unsuffixed[1], unsuffixed[2])
    for suffix, (resources, required, forbidden) in extra.items():
        by_suffix[suffix] = ResourceGroup(
            suffix=suffix,
            resources={rc: a for rc, a in resources.items() if a > 0},
            required_traits=frozenset(required),
            forbidden_traits=frozenset(forbidden),
            any_traits=(), member_of=(), forbidden_aggregates=frozenset(),
            in_tree=None)
    for group in spec.request_groups:
        explicit = _explicit_group(group)
        known = by_suffix.get(explicit.suffix)
        by_suffix[explicit.suffix] = (
            _merge(known, explicit) if known else explicit)
    return tuple(by_suffix[s] for s in sorted(by_suffix))


def _merge(a, b):
    resources = dict(a.resources)
    for rc, amount in b.resources.items():
        resources[rc] = resources.get(rc, 0) + amount
    return ResourceGroup(
        suffix=a.suffix, resources=resources,
        required_traits=a.required_traits | b.required_traits,
        forbidden_traits=a.forbidden_traits | b.forbidden_traits,
        any_traits=a.any_traits + b.any_traits,
        member_of=a.member_of + b.member_of,
        forbidden_aggregates=a.forbidden_aggregates | b.forbidden_aggregates,
        in_tree=b.in_tree or a.in_tree)


def _group_state(spec, lookup):
    group = spec.instance_group
    if group is None:
        return None
    rules = group.rules
    max_per_host = 1
    if "max_server_per_host" in rules:
        if group.policy != "anti-affinity":
            raise exception.InvalidRequest(
                reason="max_server_per_host only applies to anti-affinity")
        max_per_host = _positive_int(rules["max_server_per_host"],
                                     "max_server_per_host")
        if max_per_host < 1:
            raise exception.InvalidRequest(
                reason="max_server_per_host must be at least 1")
    hosts = collections.Counter(lookup.group_hosts(group.uuid))
    for host in group.hosts:
        hosts.setdefault(host, 1)
    return GroupState(uuid=group.uuid, policy=group.policy,
                      max_per_host=max_per_host, hosts=hosts)


def _hint_hosts(hints, name, lookup):
    uuids = hints.get(name)
    if not uuids:
        return None
    return frozenset(lookup.consumer_hosts(uuids))


def from_spec(spec, instance_uuids, lookup):
    """Validate ``spec`` and build the :class:`ResourceRequest`.

    :param lookup: answers ``group_hosts(group_uuid)`` and
        ``consumer_hosts(uuids)`` from the database
    :raises: InvalidRequest
    """
    if not spec.obj_attr_is_set("flavor") or spec.flavor is None:
        raise exception.InvalidRequest(reason="the request has no flavor")
    if not instance_uuids:
        raise exception.InvalidRequest(reason="no instance uuids given")
    if len(instance_uuids) > _MAX_INSTANCES:
        raise exception.InvalidRequest(
            reason="at most %d instances per request" % _MAX_INSTANCES)
    if len(set(instance_uuids)) != len(instance_uuids):
        raise exception.InvalidRequest(reason="instance uuids repeat")
    image_props = dict(spec.image.properties) if spec.image else {}
    topology = numa_mod.guest_topology(spec.flavor, image_props)
    groups = _build_groups(spec)
    resources = collections.Counter()
    for group in groups:
        resources.update(group.resources)
    if not resources:
        raise exception.InvalidRequest(
            reason="the request asks for no resources at all")
    hints = dict(spec.scheduler_hints)
    same_subtree, root_required, root_forbidden = _tree_options(spec, groups)
    return ResourceRequest(
        spec=spec, groups=groups,
        group_policy=spec.group_policy or "none",
        resources=dict(resources),
        availability_zone=spec.availability_zone,
        force_hosts=frozenset(spec.force_hosts),
        force_nodes=frozenset(spec.force_nodes),
        ignore_hosts=frozenset(spec.ignore_hosts),
        destination=spec.requested_destination,
        instance_group=_group_state(spec, lookup),
        same_host=_hint_hosts(hints, "same_host", lookup),
        different_host=_hint_hosts(hints, "different_host", lookup),
        extra_specs=dict(spec.flavor.extra_specs),
        image_properties=image_props,
        hints=hints, numa=topology, project_id=spec.project_id,
        image_id=spec.image.id if spec.image else None,
        same_subtree=same_subtree, root_required=root_required,
        root_forbidden=root_forbidden)


def _tree_options(spec, groups):
    """same_subtree, root_required and root_forbidden, validated as
    Placement validates them (every suffix named must exist; a group with
    no resources is only meaningful inside a same_subtree)."""
    suffixes = {g.suffix for g in groups}
    same_subtree = []
    for names in spec.same_subtree:
        wanted = frozenset(n or "" for n in names)
        unknown = sorted(wanted - suffixes)
        if unknown or "" in wanted:
            raise exception.InvalidRequest(
                reason="same_subtree names %s, which is not the suffix of "
                       "a request group" % ",".join(unknown or ["''"]))
        if len(wanted) > 1:
            same_subtree.append(wanted)
    in_subtree = frozenset().union(*same_subtree)
    for group in groups:
        if group.suffix and not group.resources and (
                group.suffix not in in_subtree):
            raise exception.InvalidRequest(
                reason="request group %r has no resources and is in no "
                       "same_subtree" % group.suffix)
    root_required = frozenset(map(validate_trait, spec.root_required))
    root_forbidden = frozenset(map(validate_trait, spec.root_forbidden))
    both = root_required & root_forbidden
    if both:
        raise exception.InvalidRequest(
            reason="root traits both required and forbidden: %s"
                   % ",".join(sorted(both)))
    return tuple(same_subtree), root_required, root_forbidden
