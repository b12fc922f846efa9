"""Nova's request in, Gantt's request out; Gantt's answer back as Nova's.

A front door translates only (doc/source/admin/nova.rst lists what each
Nova field becomes): the engine, its pre-filters, filters, weighers and
claims are Gantt's, and each Selection it answers with becomes the
Selection Nova's conductor reads, its ``allocation_request`` the JSON body
Placement's ``GET /allocation_candidates`` would have offered at
:data:`ALLOCATION_REQUEST_VERSION` (what the conductor sends back to
``PUT /allocations/{consumer}`` to re-claim an alternate).
"""

from oslo_serialization import jsonutils

from gantt import exception
from gantt.nova import objects as nova_objects
from gantt.objects import request_spec as gantt_spec

#: the Placement microversion Nova 34's scheduler asks for allocation
#: candidates at (``SAME_SUBTREE_VERSION``) and its conductor claims at
ALLOCATION_REQUEST_VERSION = "1.36"
#: the scheduler hint by which Nova's conductor marks a rebuild
REBUILD_HINT = ("_nova_check_type", ["rebuild"])


def is_rebuild(spec):
    """Whether Nova asks only to check the instance's own host (a
    rebuild with a new image): Nova then claims nothing."""
    hints = spec.get("scheduler_hints") or {}
    return hints.get(REBUILD_HINT[0]) == REBUILD_HINT[1]


def request_spec(spec):
    """Gantt's RequestSpec for Nova's ``spec``.

    :raises: InvalidRequest (a Nova field Gantt cannot honour)
    """
    hints = {k: list(v) for k, v in (spec.get("scheduler_hints") or
                                     {}).items()}
    dest = spec.get("requested_destination")
    groups = [_group(g, i) for i, g in
              enumerate(spec.get("requested_resources") or ())]
    if dest is not None and dest.get("forbidden_aggregates"):
        groups.append(gantt_spec.RequestGroup(
            suffix="", forbidden_aggregates=sorted(
                dest.forbidden_aggregates)))
    if dest is not None and dest.get("allow_cross_cell_move"):
        hints["allow_cross_cell_move"] = ["True"]
    level = spec.get("request_level_params")
    return gantt_spec.RequestSpec(
        instance_uuid=spec.get("instance_uuid"),
        project_id=spec.get("project_id"), user_id=spec.get("user_id"),
        num_instances=spec.get("num_instances", 1),
        flavor=_flavor(spec.flavor, spec.get("is_bfv", False)),
        image=_image(spec.get("image")),
        request_groups=groups,
        availability_zone=spec.get("availability_zone"),
        instance_group=_instance_group(spec.get("instance_group")),
        scheduler_hints=hints,
        requested_destination=_destination(dest),
        ignore_hosts=list(spec.get("ignore_hosts") or ()),
        force_hosts=list(spec.get("force_hosts") or ()),
        force_nodes=list(spec.get("force_nodes") or ()),
        same_subtree=[list(s) for s in level.get("same_subtree", [])]
        if level else [],
        root_required=sorted(level.get("root_required", ())) if level else [],
        root_forbidden=sorted(level.get("root_forbidden", ()))
        if level else [])


def _flavor(flavor, is_bfv):
    """A boot-from-volume instance asks for no root disk (Nova's
    ``resources_from_request_spec``)."""
    return gantt_spec.Flavor(
        name=flavor.get("name") or "unnamed", vcpus=flavor.vcpus,
        memory_mb=flavor.memory_mb,
        root_gb=0 if is_bfv else flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb, swap=flavor.swap,
        extra_specs=dict(flavor.get("extra_specs") or {}))


def _image(image):
    if image is None:
        return None
    props = image.get("properties")
    properties = image_properties(props.data if props is not None else {})
    if image.get("disk_format"):
        properties["disk_format"] = image.disk_format
    return gantt_spec.ImageMeta(id=image.get("id"), name=image.get("name"),
                                properties=properties)


def image_properties(data):
    """Glance's property strings for ImageMetaProps' typed values: lists
    of sets (``hw_numa_cpus``) and of integers (``hw_numa_mem``) as the
    ``.N`` keys Glance has, ``traits_required`` as ``trait:T=required``,
    booleans as ``true``/``false``."""
    out = {}
    for key, value in data.items():
        if key == "traits_required":
            out.update(("trait:%s" % t, "required") for t in value or ())
        elif key in ("hw_numa_cpus", "hw_numa_mem") and isinstance(
                value, list):
            out.update(("%s.%d" % (key, i), _cell(v))
                       for i, v in enumerate(value))
        elif value is not None:
            out[key] = _scalar(value)
    return out


def _cell(value):
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in sorted(value))
    return str(value)


def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    return str(value)


def _instance_group(group):
    if group is None:
        return None
    policy = group.get("policy") or next(iter(group.get("policies") or ()),
                                         None)
    if policy is None:
        raise exception.InvalidRequest(
            reason="server group %s has no policy" % group.get("uuid"))
    return gantt_spec.InstanceGroup(
        uuid=group.uuid, name=group.get("name"), policy=policy,
        rules=dict(group.get("_rules") or {}),
        members=list(group.get("members") or ()),
        hosts=list(group.get("hosts") or ()))


def _destination(dest):
    if dest is None:
        return None
    cell = dest.get("cell")
    return gantt_spec.Destination(
        host=dest.get("host"), node=dest.get("node"),
        cell_uuid=cell.uuid if cell is not None else None,
        aggregates=list(dest.get("aggregates") or ()))


def _group(group, index):
    """A port's or accelerator's request group: its own provider (granular,
    suffixed by its requester) unless it may spread."""
    suffix = ""
    if group.get("use_same_provider", True):
        suffix = group.get("requester_id") or "_nova%d" % index
    return gantt_spec.RequestGroup(
        suffix=suffix, resources=dict(group.get("resources") or {}),
        required_traits=sorted(group.get("required_traits") or ()),
        forbidden_traits=sorted(group.get("forbidden_traits") or ()),
        member_of=[list(m) for m in group.get("aggregates") or ()],
        forbidden_aggregates=sorted(group.get("forbidden_aggregates") or ()),
        in_tree=group.get("in_tree"))


def allocation_request(selection):
    """Placement's allocation request (microversion 1.36) for a Gantt
    Selection, as a JSON string: ``allocations`` by provider, and the
    ``mappings`` of the request's unsuffixed group to the providers."""
    allocations = selection.allocation_request.as_mapping()
    return jsonutils.dumps({
        "allocations": {rp: {"resources": dict(res)}
                        for rp, res in sorted(allocations.items())},
        "mappings": {"": sorted(allocations)}})


def selection(sel, zone, cell_uuid):
    """Nova's Selection for a Gantt one.

    :param zone: the host's availability zone (None: Nova's default)
    :param cell_uuid: the cell to name when the host reported none
    """
    limits = dict(sel.limits) if sel.obj_attr_is_set("limits") else {}
    # a rebuild's check claims nothing: no request to re-claim, as Nova's
    claims = bool(sel.allocation_request.allocations)
    out = nova_objects.Selection(
        compute_node_uuid=sel.compute_node_uuid,
        service_host=sel.service_host, nodename=sel.nodename,
        limits=nova_objects.SchedulerLimits(
            vcpu=limits.get("vcpu"), disk_gb=limits.get("disk_gb"),
            memory_mb=limits.get("memory_mb"), numa_topology=None),
        allocation_request=allocation_request(sel) if claims else None,
        allocation_request_version=(ALLOCATION_REQUEST_VERSION if claims
                                    else None),
        availability_zone=zone)
    cell = (sel.cell_uuid if sel.obj_attr_is_set("cell_uuid") else None) or (
        cell_uuid)
    if cell is not None:
        out.cell_uuid = cell
    return out


def legacy_dict(sel):
    """What Nova's ``return_objects=False`` callers read: host, nodename
    and limits of the chosen host."""
    limits = dict(sel.limits or {})
    return {"host": sel.service_host, "nodename": sel.nodename,
            "limits": limits}
