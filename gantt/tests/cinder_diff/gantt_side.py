"""The same world through Gantt's volume filters and weighers.

Each backend becomes a provider with a ``DISK_GB`` inventory as
``doc/source/admin/volumes.rst`` tells a volume service to report it:
total = the pool's total (5000 when it is ``infinite``/``unknown``, which
the capability then says), reserved = ``floor(total *
reserved_percentage / 100)``, allocation ratio = the over-subscription
ratio of a thin pool (1.0 for a thick one), allocations = the provisioned
capacity, ``num_instances`` = its volume count, and typed capabilities
(``free_capacity_gb``, ``thin_provisioning_support``,
``reserved_percentage``, the functions, the rest of the report). A volume
is a request for ``DISK_GB=<size>`` whose ``capabilities`` are the volume
type's extra specs.
"""

import numpy as np

from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline.weighers import runner
from gantt.tests.fixtures import make_conf
from gantt.tests.unit.scheduler import helpers
from gantt.tests.unit.scheduler.volumes import builders

FILTERS = ("CapacityFilter", "CapabilitiesFilter", "DriverFilter")
WEIGHERS = ("CapacityWeigher", "AllocatedCapacityWeigher",
            "VolumeNumberWeigher", "GoodnessWeigher")


def pool(backend):
    caps = dict(backend.extra)
    caps.update(free_capacity_gb=backend.free,
                thin_provisioning_support=backend.thin,
                reserved_percentage=backend.reserved_percentage)
    total = backend.total
    if isinstance(total, str):
        caps["total_capacity_gb"] = total
        total = 5000
    return builders.Pool(
        backend.name, total=total, reserved=backend.reserved_gb,
        ratio=backend.ratio if backend.thin else 1.0,
        used=backend.provisioned, volumes=backend.volumes, caps=caps)


def conf(world):
    return make_conf(**{"volume_scheduler." + name: value
                        for name, value in world.multipliers})


def view(world):
    return builders.view(*(pool(b) for b in world.backends))


def request(vol):
    return builders.volume(vol.size, dict(vol.specs))


def passes(name, hosts, vol, cfg):
    """``(column path, host path)``: ``[bool]`` per backend each."""
    flt = plugins.load(plugins.FILTERS, [name], cfg)[0]
    req = request(vol)
    if not flt.applies(req):
        return [True] * hosts.n, [True] * hosts.n
    columns, per_host = helpers.both_paths(flt, hosts, req)
    return columns, per_host


def weights(names, hosts, vol, cfg, rows):
    """``(totals, {name: contribution})`` over the backends ``rows`` (in
    that order): all of them go the dense way, fewer than half the sparse
    way."""
    loaded = plugins.load(plugins.WEIGHERS, list(names), cfg)
    rows = np.asarray(rows, dtype=int)
    mask = np.zeros(hosts.n, dtype=bool)
    mask[rows] = True
    totals, parts = runner.WeigherRunner(loaded).run(
        hosts, request(vol), rows, mask)
    return list(totals), {k: list(v) for k, v in parts.items()}
