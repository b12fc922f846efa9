"""Volume pools as host views, for the volume filter and weigher tests."""

import dataclasses

from gantt.objects import compute_node
from gantt.scheduler.state import cache as cache_mod
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

_SEQ = iter(range(1, 10 ** 9))


@dataclasses.dataclass
class Pool:
    """One pool: its DISK_GB inventory, usage and capabilities."""

    name: str
    total: int = 1000
    reserved: int = 0
    ratio: float = 1.0
    used: int = 0
    volumes: int = 0
    caps: dict = dataclasses.field(default_factory=dict)


def node(pool):
    """The pool's report (a provider with a DISK_GB inventory only)."""
    return compute_node.ComputeNode(
        uuid=factories.host_uuid(pool.name), host=pool.name,
        nodename=pool.name, num_instances=pool.volumes,
        inventories=[compute_node.Inventory(
            resource_class="DISK_GB", total=pool.total,
            reserved=pool.reserved, allocation_ratio=pool.ratio)],
        capabilities={k: str(v) for k, v in pool.caps.items()},
        report_sequence=next(_SEQ))


def view(*pools):
    """A HostView over ``pools``, in that row order; capabilities keep
    their types (bool, int, float), as a typed report gives them."""
    cache = cache_mod.HostStateCache(clock=lambda: helpers.NOW)
    for pool in pools:
        update = dataclasses.replace(helpers.host_report(node(pool)),
                                     capabilities=dict(pool.caps))
        cache.apply_report(update)
        if pool.used:
            cache.apply_usage(update.uuid, 1, {"DISK_GB": pool.used})
    return helpers.view_of(cache)


def volume(size, specs=None, **fields):
    """A request for one volume of ``size`` GB (resources ``DISK_GB=size``)
    with a volume type's extra specs (``specs``)."""
    request = helpers.make_request(**fields)
    return dataclasses.replace(request, resources=(
        {"DISK_GB": size} if size else {}), capabilities=dict(specs or {}))
