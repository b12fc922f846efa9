"""Which object versions each RPC API version carries.

A worker that serves RPC API version X reads the objects at the versions
listed for X (and older minor versions of each). A caller capped at X
(``[upgrade_levels] scheduler = X``, see :mod:`gantt.conf.upgrade_levels`)
sends no method newer than X and serialises every object at the version
listed for X, backported by the objects' own ``obj_make_compatible`` steps
(children included: the whole list is the manifest oslo.versionedobjects
backports by). So a caller upgraded before the workers still speaks to
them in a form they read.

Every change of an object's version must come with a new RPC API version
here, even when no method changes: a worker refuses an object version
newer than its own, so the cap must be able to name the set before the
change. A unit test holds the newest entry equal to the registry.

Notification payloads (gantt.objects.notification) are not listed: they
go to notification listeners, which read each payload's version, never
over this API.

An object missing from an entry did not exist at that version; it is
sent as it is (only methods newer than the cap carry it, and those are
refused before anything is sent).
"""

import functools

from gantt import exception
from gantt.objects import base
from gantt.objects import ovo_internals

_V1_0 = {
    "AllocationItem": "1.0", "AllocationRequest": "1.0",
    "ComputeNode": "1.0", "Destination": "1.0", "Flavor": "1.0",
    "HostState": "1.0", "ImageMeta": "1.0", "InstanceGroup": "1.0",
    "Inventory": "1.0", "ProviderUsage": "1.0", "RequestGroup": "1.0",
    "RequestSpec": "1.0", "ResourceUsage": "1.0",
    "SchedulerStatistics": "1.0", "Selection": "1.0",
}

# 1.2: aggregates and explain; agents report instances, NUMA cells and PCI
# pools; peers' usage casts carry their time
_V1_2 = dict(
    _V1_0, Aggregate="1.0", ComputeNode="1.2", Explanation="1.0",
    FilterStep="1.0", NUMACell="1.0", NUMAPagePool="1.0",
    PciDevicePool="1.0", ProviderUsage="1.1", SchedulerStatistics="1.1",
    WeighedHost="1.0")

# 1.3: provider trees, standalone providers, granular requests, moves
_V1_3 = dict(
    _V1_2, AllocationCandidate="1.0", ComputeNode="1.3",
    ProviderReport="1.0", ReportResult="1.0", RequestSpec="1.1",
    ResourceProvider="1.0")

# 1.4: NUMA cells list their SMT siblings (no method changed)
_V1_4 = dict(_V1_3, ComputeNode="1.4", NUMACell="1.1")

# 1.5: statistics say which RPC API version the worker serves
_V1_5 = dict(_V1_4, SchedulerStatistics="1.2")

# 1.6: agents say which boot a report is from; the operator's
# reset_report_sequence (call) and report_sequence_reset (fanout cast)
_V1_6 = dict(_V1_5, ComputeNode="1.5")
# 1.7: select_destinations takes ``replace`` (no object changed)
_V1_7 = dict(_V1_6)
# 1.8: standalone providers' services say which boot a report is from
# (no method changed)
_V1_8 = dict(_V1_7, ProviderReport="1.1")
# 1.9: providers of any kind (ProviderReport 1.2: kind, service, zone,
# capabilities, instance link; HostState 1.1 shows them); retire_provider
_V1_9 = dict(_V1_8, ProviderReport="1.2", HostState="1.1")

# 1.10: scheduling profiles: RequestSpec 1.2 (profile, packing,
# capabilities, no flavor needed); explain says which profile ranked
_V1_10 = dict(_V1_9, RequestSpec="1.2", Explanation="1.1")

# 1.11: failure domains: locations in reports (ComputeNode 1.6,
# ProviderReport 1.3) and in host views (HostState 1.2); server groups'
# policies per level (InstanceGroup 1.1, GroupLevelPolicy 1.0)
_V1_11 = dict(_V1_10, ComputeNode="1.6", ProviderReport="1.3",
              HostState="1.2", InstanceGroup="1.1", GroupLevelPolicy="1.0")
# 1.12: holistic groups: plan_group, reserve_group, extend_group,
# release_group; RequestSpec 1.3 names a reserved group slot
_V1_12 = dict(_V1_11, RequestSpec="1.3", GroupMember="1.0",
              GroupRequest="1.0", GroupSlot="1.0", GroupPlan="1.0",
              GroupSlotRef="1.0")

# 1.13: trees_changed (fanout cast): the workers re-read the named
# provider trees, compute nodes made through the REST API included (no
# object changed)
_V1_13 = dict(_V1_12)

#: RPC API version -> {object name: version}, oldest first
OBJECT_VERSIONS = {"1.0": _V1_0, "1.2": _V1_2, "1.3": _V1_3, "1.4": _V1_4,
                   "1.5": _V1_5, "1.6": _V1_6, "1.7": _V1_7, "1.8": _V1_8,
                   "1.9": _V1_9, "1.10": _V1_10,
                   "1.11": _V1_11, "1.12": _V1_12, "1.13": _V1_13}


def parse(version):
    """``"1.3"`` -> ``(1, 3)``; ConfigurationError for anything else."""
    try:
        major, minor = version.split(".")
        return int(major), int(minor)
    except (AttributeError, ValueError):
        raise exception.ConfigurationError(
            reason="RPC API version %r is not MAJOR.MINOR" % (version,)
        ) from None


def manifest_for(cap):
    """The object versions a caller capped at ``cap`` sends.

    :raises: ConfigurationError if ``cap`` is malformed, older than the
        oldest version or of another major version than this code's
    """
    wanted = parse(cap)
    known = sorted(OBJECT_VERSIONS, key=parse)
    newest = parse(known[-1])
    if wanted[0] != newest[0] or wanted < parse(known[0]):
        raise exception.ConfigurationError(
            reason="[upgrade_levels] scheduler = %s: this code speaks RPC "
                   "API %s to %s" % (cap, known[0], known[-1]))
    usable = [v for v in known if parse(v) <= wanted]
    return dict(OBJECT_VERSIONS[usable[-1]])


def configured_cap(conf):
    """``[upgrade_levels] scheduler``, checked: None when unset.

    :raises: ConfigurationError if it is not ``MAJOR.MINOR`` or not a
        version this code can cap at (see :func:`manifest_for`)
    """
    try:
        cap = conf.upgrade_levels.scheduler
    except ValueError as exc:
        raise exception.ConfigurationError(
            reason="[upgrade_levels] scheduler: %s" % exc) from None
    if cap is not None:
        manifest_for(cap)
    return cap


@functools.lru_cache(maxsize=16)
def _needing_backport(manifest_items):
    classes = base.gantt_classes()
    stale = {name for name, version in manifest_items
             if classes[name][0].VERSION != version}
    needs = {}

    def visit(name, path=()):
        if name not in needs:
            children = ovo_internals.child_object_names(classes[name][0])
            needs[name] = name in stale or any(
                visit(child, path + (name,)) for child in children
                if child not in path)
        return needs[name]

    for name in classes:
        visit(name)
    return frozenset(name for name, yes in needs.items() if yes)


def needing_backport(manifest):
    """The object names whose primitive differs under ``manifest`` from
    today's: the stale ones and every object that holds one (at any
    depth). The others serialise as they are, on the fast path."""
    return _needing_backport(tuple(sorted(manifest.items())))
