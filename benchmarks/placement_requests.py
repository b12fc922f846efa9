"""The flat scenario's Placement requests, as nova-scheduler sends them.

Plain data, importable in both venvs: the reference side sends them to
Placement (:mod:`ref_placement`), :mod:`placement_api` to Gantt's REST
API too.
"""

import fleet


def query(request, limit=1000):
    """``GET /allocation_candidates`` as nova-scheduler sends it."""
    f = request["flavor"]
    disk = f["root_gb"] + f["ephemeral_gb"] + (f["swap"] + 1023) // 1024
    return ("/allocation_candidates?resources=VCPU:%d,MEMORY_MB:%d,"
            "DISK_GB:%d&limit=%d&required=!%s" % (
                f["vcpus"], f["memory_mb"], disk, limit,
                fleet.DISABLED_TRAIT))


def claim_body(provider_uuid, request):
    """``PUT /allocations/{consumer}`` of one candidate, as Nova's."""
    f = request["flavor"]
    return {"allocations": {provider_uuid: {"resources": {
        "VCPU": f["vcpus"], "MEMORY_MB": f["memory_mb"],
        "DISK_GB": f["root_gb"]}}},
        "project_id": fleet.PROJECT_ID, "user_id": fleet.USER_ID,
        "consumer_generation": None, "consumer_type": "INSTANCE"}
