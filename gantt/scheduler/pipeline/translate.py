"""A RequestSpec checked and turned into a :class:`.request.ResourceRequest`.

Everything a caller can get wrong is caught here, once, with an
``InvalidRequest`` that names the bad value, so that no filter ever has to
guess at a malformed spec. The allocation requests callers hand back
(``claim_allocations``, ``reclaim``) are checked here too.
"""


import collections
import math
import re

from gantt import exception
from gantt.objects import request_spec as objects_request_spec
from gantt.scheduler import vocabulary
from gantt.scheduler.pipeline import containers
from gantt.scheduler.pipeline import image_meta
from gantt.scheduler.pipeline import profiles as profiles_mod
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.pipeline import zones
from gantt.scheduler.state import numa as numa_mod
from gantt.scheduler.state import topology as topology_mod

# resources[N]:CLASS=amount and trait[N]:NAME=required|forbidden, as in Nova
# (suffixes as Nova and Placement take them: digits, or _ and up to 64 of
# [a-zA-Z0-9_-])
_RESOURCES_SPEC = re.compile(
    r"^resources([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?:(.+)$")
_TRAIT_SPEC = re.compile(r"^trait([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?:(.+)$")
_MAX_INSTANCES = 1000
_GROUP_POLICIES = ("none", "isolate")


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
            rc = vocabulary.validate_resource_class(rc)
            groups[suffix][0][rc] = _positive_int(
                value, "extra spec %s" % key)
            continue
        match = _TRAIT_SPEC.match(key)
        if match:
            suffix, trait = match.group(1) or "", match.group(2)
            vocabulary.validate_trait(trait)
            if value == "required":
                groups[suffix][1].add(trait)
            elif value == "forbidden":
                groups[suffix][2].add(trait)
            else:
                raise exception.InvalidRequest(
                    reason="extra spec %s must be 'required' or 'forbidden', "
                           "got %r" % (key, value))
    return groups


def _image_required_traits(image_props, extra):
    """The image's ``trait:T=required`` properties (Nova's
    ``traits_required``) are required traits of the unsuffixed group, as
    Nova's ResourceRequest takes them; an image can only require."""
    for key, value in image_props.items():
        if key.startswith("trait:") and value == "required":
            trait = key[len("trait:"):]
            vocabulary.validate_trait(trait)
            extra[""][1].add(trait)


def _explicit_group(group):
    resources = {vocabulary.validate_resource_class(rc): _positive_int(v, rc)
                 for rc, v in group.resources.items()}
    for rc, amount in resources.items():
        # Placement refuses "VCPU:0" too: a zero here is a caller's mistake
        # (a flavor's zero means "none", and is dropped before this point)
        if amount == 0:
            raise exception.InvalidRequest(
                reason="request group %r asks for 0 %s; leave the class out "
                       "instead" % (group.suffix or "", rc))
    return request_mod.ResourceGroup(
        suffix=group.suffix or "",
        resources=resources,
        required_traits=frozenset(
            map(vocabulary.validate_trait, group.required_traits)),
        forbidden_traits=frozenset(
            map(vocabulary.validate_trait, group.forbidden_traits)),
        any_traits=tuple(frozenset(map(vocabulary.validate_trait, any_of))
                         for any_of in group.any_traits if any_of),
        member_of=tuple(frozenset(m) for m in group.member_of if m),
        forbidden_aggregates=frozenset(group.forbidden_aggregates),
        in_tree=group.in_tree)


def _standard_resources(flavor, extra, cpu):
    """Complete the unsuffixed group of ``extra`` as Nova's ResourceRequest
    does: the CPU policy's PCPU (and VCPU) in place of the flavor's VCPU
    and its HW_CPU_HYPERTHREADING trait, then the flavor's VCPU, MEMORY_MB
    and DISK_GB for each class that no group of the extra specs names
    (``resources[N]:VCPU`` or ``:PCPU`` replace the flavor's VCPU)."""
    # (the unsuffixed group always exists: extra is a defaultdict)
    resources, required, forbidden = extra[""]
    translated = cpu.resources(flavor.vcpus)
    if translated:
        resources.update(translated)
    if cpu.trait is not None:
        trait, value = cpu.trait
        (required if value == "required" else forbidden).add(trait)
    named = set().union(*(r for r, _req, _forb in extra.values()))
    for rc, amount in _flavor_resources(flavor).items():
        if rc in named or (rc == "VCPU" and "PCPU" in named):
            continue
        resources[rc] = amount


def _build_groups(spec, flavor, cpu, image_props):
    """Flavor, extra specs, the image's traits and explicit groups,
    merged by suffix."""
    by_suffix = {}
    extra = _groups_from_extra_specs(flavor.extra_specs)
    _standard_resources(flavor, extra, cpu)
    _image_required_traits(image_props, extra)
    for suffix, (resources, required, forbidden) in extra.items():
        by_suffix[suffix] = request_mod.ResourceGroup(
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
    return request_mod.ResourceGroup(
        suffix=a.suffix, resources=resources,
        required_traits=a.required_traits | b.required_traits,
        forbidden_traits=a.forbidden_traits | b.forbidden_traits,
        any_traits=a.any_traits + b.any_traits,
        member_of=a.member_of + b.member_of,
        forbidden_aggregates=a.forbidden_aggregates | b.forbidden_aggregates,
        in_tree=b.in_tree or a.in_tree)


def _group_state(spec, lookup, topology):
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
    return request_mod.GroupState(uuid=group.uuid, policy=group.policy,
                      max_per_host=max_per_host, hosts=hosts,
                      levels=topology_mod.policies_of(
                          group.level_policies, topology))


def _hint_hosts(hints, name, lookup):
    uuids = hints.get(name)
    if not uuids:
        return None
    return frozenset(lookup.consumer_hosts(uuids))


def from_spec(spec, instance_uuids, lookup, profiles=None, datacenter=None):
    """Validate ``spec`` and build the :class:`ResourceRequest`.

    A spec without a flavor asks for its ``request_groups`` only.

    :param lookup: answers ``group_hosts(group_uuid)`` and
        ``consumer_hosts(uuids)`` from the database
    :param profiles: profile name -> :class:`.request.Profile`, the
        scheduler's (by default Nova's profile alone)
    :param datacenter: the
        :class:`~gantt.scheduler.state.topology.Topology`
        level policies are checked against (None: the default levels)
    :raises: InvalidRequest (UnknownProfile, PackingRefused,
        UnknownLevel)
    """
    profile, packing = profiles_mod.profile_of(
        spec, profiles or profiles_mod.NOVA_PROFILES)
    if not instance_uuids:
        raise exception.InvalidRequest(reason="no instance uuids given")
    if len(instance_uuids) > _MAX_INSTANCES:
        raise exception.InvalidRequest(
            reason="at most %d instances per request" % _MAX_INSTANCES)
    if len(set(instance_uuids)) != len(instance_uuids):
        raise exception.InvalidRequest(reason="instance uuids repeat")
    # canonical typed values, as Nova's ImageMetaProps holds them
    image_props = image_meta.canonical(
        dict(spec.image.properties) if spec.image else {})
    flavor = _flavor(spec)
    cpu = numa_mod.cpu_request(flavor, image_props)
    groups = _build_groups(spec, flavor, cpu, image_props)
    _check_trait_conflicts(groups)
    group_policy = _group_policy(spec, flavor, groups)
    topology = numa_mod.guest_topology(flavor, image_props, cpu)
    resources = collections.Counter()
    for group in groups:
        resources.update(group.resources)
    if not resources:
        raise exception.InvalidRequest(
            reason="the request asks for no resources at all")
    hints = dict(spec.scheduler_hints)
    same_subtree, root_required, root_forbidden = _tree_options(spec, groups)
    return request_mod.ResourceRequest(
        spec=spec, groups=groups,
        group_policy=group_policy,
        resources=dict(resources),
        availability_zone=spec.availability_zone,
        force_hosts=frozenset(spec.force_hosts),
        force_nodes=frozenset(spec.force_nodes),
        ignore_hosts=frozenset(spec.ignore_hosts),
        destination=spec.requested_destination,
        instance_group=_group_state(
            spec, lookup, datacenter or topology_mod.Topology(
                topology_mod.DEFAULT_LEVELS)),
        same_host=_hint_hosts(hints, "same_host", lookup),
        different_host=_hint_hosts(hints, "different_host", lookup),
        extra_specs=dict(flavor.extra_specs),
        image_properties=image_props,
        hints=hints, numa=topology, project_id=spec.project_id,
        image_id=spec.image.id if spec.image else None,
        same_subtree=same_subtree, root_required=root_required,
        root_forbidden=root_forbidden, profile=profile.name,
        packing=packing, provider_kinds=profile.provider_kinds,
        capabilities=dict(spec.capabilities),
        **containers.request_fields(hints),
        **zones.request_fields(hints, spec.availability_zone))


def _flavor(spec):
    """The spec's flavor; for a request without one, a flavor of nothing
    (no resources, no extra specs): its request groups say it all."""
    if spec.obj_attr_is_set("flavor") and spec.flavor is not None:
        return spec.flavor
    return _NO_FLAVOR


_NO_FLAVOR = objects_request_spec.Flavor(
    name="", vcpus=0, memory_mb=0, root_gb=0, ephemeral_gb=0, swap=0,
    extra_specs={})


def _check_trait_conflicts(groups):
    """A group that requires a trait it forbids (or only forbidden ones
    among an any-of set) is Placement's 400, not a request that matches
    nothing."""
    for group in groups:
        conflicts = sorted(group.required_traits & group.forbidden_traits)
        conflicts += [",".join(sorted(any_of)) for any_of in group.any_traits
                      if any_of <= group.forbidden_traits]
        if conflicts:
            raise exception.InvalidRequest(
                reason="request group %r both requires and forbids %s"
                       % (group.suffix, "; ".join(conflicts)))


def _group_policy(spec, flavor, groups):
    """``none`` or ``isolate``: the spec's, else the flavor's
    ``group_policy`` extra spec, as Nova reads it.

    Without one, Placement refuses (400) a query with two or more suffixed
    groups. Nova sends ``none`` for the caller when at most one of them
    comes from the flavor (the others from ports); Gantt does the same, and
    refuses the request when the flavor itself names two or more.
    """
    policy = spec.group_policy or flavor.extra_specs.get("group_policy")
    if policy is not None:
        if policy not in _GROUP_POLICIES:
            raise exception.InvalidRequest(
                reason="group_policy must be 'none' or 'isolate', not %r"
                       % (policy,))
        return policy
    suffixed = [g.suffix for g in groups if g.suffix]
    from_flavor = _flavor_suffixes(flavor.extra_specs)
    if len(suffixed) > 1 and len(from_flavor) > 1:
        raise exception.InvalidRequest(
            reason="the flavor names %d numbered request groups (%s) but no "
                   "group_policy: set the extra spec group_policy to 'none' "
                   "or 'isolate'" % (len(from_flavor),
                                     ", ".join(sorted(from_flavor))))
    return "none"


def _flavor_suffixes(extra_specs):
    """The suffixes of the numbered groups a flavor's extra specs name."""
    found = set()
    for key in extra_specs:
        match = _RESOURCES_SPEC.match(key) or _TRAIT_SPEC.match(key)
        if match and match.group(1):
            found.add(match.group(1))
    return found


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
    root_required = frozenset(
        map(vocabulary.validate_trait, spec.root_required))
    root_forbidden = frozenset(
        map(vocabulary.validate_trait, spec.root_forbidden))
    both = root_required & root_forbidden
    if both:
        raise exception.InvalidRequest(
            reason="root traits both required and forbidden: %s"
                   % ",".join(sorted(both)))
    return tuple(same_subtree), root_required, root_forbidden


def validate_allocation_request(allocation_request):
    """An AllocationRequest checked: ``{provider: {class: amount}}``.

    :raises: InvalidRequest
    """
    result = {}
    for item in allocation_request.allocations:
        if item.resource_provider_uuid in result:
            raise exception.InvalidRequest(
                reason="provider %s appears twice in the allocation request"
                       % item.resource_provider_uuid)
        result[item.resource_provider_uuid] = _allocation_amounts(item)
    if not result:
        raise exception.InvalidRequest(reason="the allocation request is "
                                              "empty")
    return result


def _allocation_amounts(item):
    amounts = {}
    for rc, amount in item.resources.items():
        vocabulary.validate_resource_class(rc)
        if amount <= 0:
            raise exception.InvalidRequest(
                reason="%s: amounts must be positive, got %d"
                       % (rc, amount))
        amounts[rc] = amount
    if not amounts:
        raise exception.InvalidRequest(
            reason="provider %s is given no resources"
            % item.resource_provider_uuid)
    return amounts
