"""Request pre-filters: Nova's ``request_filter.py`` on Gantt's host table.

Nova turns these into Placement query parameters (required/forbidden root
traits, required/forbidden aggregates); Gantt applies the same rules to its
columns before the filters run. Options are Nova's, in ``[scheduler]``:

=========================================  =================================
``limit_tenants_to_placement_aggregate``   a project named by an
                                           aggregate's ``filter_tenant_id*``
                                           metadata uses only such
                                           aggregates (with
                                           ``placement_aggregate_required_
                                           for_tenants``: every project
                                           needs one)
``query_placement_for_availability_zone``  the requested zone, early
``query_placement_for_image_type_support`` ``COMPUTE_IMAGE_TYPE_<FORMAT>``
                                           for the image's ``disk_format``
(always)                                   no ``COMPUTE_STATUS_DISABLED``
``enable_isolated_aggregate_filtering``    aggregates whose
                                           ``trait:T=required`` the request
                                           does not require are excluded
``image_metadata_prefilter``               image properties as traits
(always)                                   ``COMPUTE_ACCELERATORS`` for
                                           ``accel:device_profile``;
                                           ``COMPUTE_NET_VIRTIO_PACKED``
                                           for packed virtqueues
=========================================  =================================

Forced hosts (``force_hosts``, ``force_nodes``) skip the filters but not
the pre-filters: Nova asks Placement with its request filters for them too.
Since they skip AvailabilityZoneFilter, the requested zone is checked here
for them whenever that filter is enabled (Nova 34 always maps the zone to
its aggregates in the Placement query).
"""

import logging

import os_traits

from gantt.scheduler.pipeline.filters import availability_zone
from gantt.scheduler.state import aggregates

LOG = logging.getLogger(__name__)

TENANT_KEY = "filter_tenant_id"
ZONE_FILTER = availability_zone.AvailabilityZoneFilter.name
TRAIT_PREFIX = "trait:"
#: image property -> trait prefix (image_metadata_prefilter)
IMAGE_TRAIT_PREFIXES = {
    "hw_cdrom_bus": "COMPUTE_STORAGE_BUS",
    "hw_disk_bus": "COMPUTE_STORAGE_BUS",
    "hw_video_model": "COMPUTE_GRAPHICS_MODEL",
    "hw_vif_model": "COMPUTE_NET_VIF_MODEL",
    "hw_architecture": "HW_ARCH",
    "hw_emulation_architecture": "COMPUTE_ARCH",
    "hw_viommu_model": "COMPUTE_VIOMMU",
}
_TRUE = ("1", "true", "yes", "on", "y", "t")


def cross_cell_allowed(request):
    """The ``allow_cross_cell_move`` hint: the requested cell is then a
    preference (CrossCellWeigher) rather than a restriction."""
    hint = request.hints.get("allow_cross_cell_move") or ()
    return any(str(v).lower() in _TRUE for v in hint)


def _valid_trait(name):
    return hasattr(os_traits, name)


def steps(view, request, conf):
    """(label, rows kept) pairs of every pre-filter that applies."""
    yield from _always(view, request)
    if conf is None:
        return
    sched = conf.scheduler
    if sched.limit_tenants_to_placement_aggregate:
        yield from _tenant(view, request,
                           sched.placement_aggregate_required_for_tenants)
    if request.availability_zone and _zone_early(conf, request):
        yield ("not in availability zone %s" % request.availability_zone,
               availability_zone.rows_in_zone(view,
                                              request.availability_zone))
    if sched.query_placement_for_image_type_support:
        yield from _image_type(view, request)
    if sched.enable_isolated_aggregate_filtering:
        yield from _isolated(view, request)
    if sched.image_metadata_prefilter:
        yield from _image_traits(view, request)


def _zone_early(conf, request):
    """Whether the requested zone restricts the candidates: the option,
    or forced hosts, which AvailabilityZoneFilter does not see."""
    enabled = conf.filter_scheduler.enabled_filters
    return conf.scheduler.query_placement_for_availability_zone or (
        request.forced and ZONE_FILTER in enabled)


def _required(view, trait):
    return "lacked trait %s" % trait, view.has_trait(trait)


def _always(view, request):
    trait = os_traits.COMPUTE_STATUS_DISABLED
    yield "had trait %s" % trait, ~view.has_trait(trait)
    if request.extra_specs.get("accel:device_profile"):
        yield _required(view, os_traits.COMPUTE_ACCELERATORS)
    packed = request.extra_specs.get("hw:virtio_packed_ring") or (
        request.image_properties.get("hw_virtio_packed_ring"))
    if packed and str(packed).lower() in _TRUE:
        yield _required(view, os_traits.COMPUTE_NET_VIRTIO_PACKED)


def tenant_aggregates(aggregate_set, project_id):
    """Aggregates naming ``project_id`` under a ``filter_tenant_id*`` key
    (the value must equal the project, as Nova's metadata query does)."""
    uuids = set()
    for key in aggregate_set.keys():
        if key.startswith(TENANT_KEY):
            uuids.update(u for u, v in aggregate_set.with_key(key)
                         if v == project_id)
    return uuids


def _tenant(view, request, required):
    uuids = tenant_aggregates(view.aggregates, request.project_id)
    if uuids:
        yield ("not in an aggregate of project %s" % request.project_id,
               aggregates.rows_in(view, uuids))
    elif required:
        yield ("no aggregate for project %s" % request.project_id,
               aggregates.rows_in(view, ()))


def _image_type(view, request):
    disk_format = request.image_properties.get("disk_format")
    if not disk_format:
        return
    trait = "COMPUTE_IMAGE_TYPE_%s" % disk_format.upper()
    if not _valid_trait(trait):
        LOG.error("Computed trait name %r is not valid; is os-traits up to "
                  "date?", trait)
        return
    yield _required(view, trait)


def isolated_aggregates(aggregate_set, required_traits):
    """Aggregates requiring (``trait:T=required``) a trait not required."""
    uuids = set()
    for key in aggregate_set.keys():
        if not key.startswith(TRAIT_PREFIX):
            continue
        if key[len(TRAIT_PREFIX):] in required_traits:
            continue
        uuids.update(u for u, v in aggregate_set.with_key(key)
                     if v == "required")
    return uuids


def _isolated(view, request):
    uuids = isolated_aggregates(view.aggregates, request.required_traits)
    if uuids:
        yield ("in an aggregate isolated for traits the request lacks",
               ~aggregates.rows_in(view, uuids))


def image_traits(image_properties):
    """The traits ``image_metadata_prefilter`` requires, or None when one
    property maps to no known trait (Nova then adds none)."""
    traits = []
    for key, prefix in IMAGE_TRAIT_PREFIXES.items():
        value = image_properties.get(key)
        if value is None:
            continue
        trait = "%s_%s" % (prefix, value.replace("-", "_").upper())
        if not _valid_trait(trait):
            LOG.error("Computed trait name %r is not valid; is os-traits up "
                      "to date?", trait)
            return None
        traits.append(trait)
    return traits


def _image_traits(view, request):
    for trait in sorted(set(image_traits(request.image_properties) or ())):
        yield _required(view, trait)
