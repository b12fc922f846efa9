"""The world through the real Cinder 29 filters and weighers.

Each :class:`~.worlds.Backend` becomes Cinder's own ``PoolState`` (its
``update_from_volume_capability`` reads the report as the scheduler does);
the filters' ``backend_passes`` and the weighers' ``weigh_objects`` run
as Cinder's handlers run them, with Cinder's ``normalize`` and its
multiplier options set on Cinder's global CONF for the world.
VolumeNumberWeigher counts volumes in Cinder's database; here that count
is the backend's (the only stand-in: the weigher's arithmetic is Cinder's).
"""

import contextlib
import datetime
import types
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from cinder import objects as cinder_objects  # noqa: E402

cinder_objects.register_all()

from cinder.scheduler import base_weight  # noqa: E402
from cinder.scheduler import host_manager  # noqa: E402
from cinder.scheduler.filters import capabilities_filter  # noqa: E402
from cinder.scheduler.filters import capacity_filter  # noqa: E402
from cinder.scheduler.filters import driver_filter  # noqa: E402
from cinder.scheduler.weights import capacity  # noqa: E402
from cinder.scheduler.weights import goodness  # noqa: E402
from cinder.scheduler.weights import volume_number  # noqa: E402

FILTERS = {
    "CapacityFilter": capacity_filter.CapacityFilter,
    "CapabilitiesFilter": capabilities_filter.CapabilitiesFilter,
    "DriverFilter": driver_filter.DriverFilter,
}
WEIGHERS = {
    "CapacityWeigher": capacity.CapacityWeigher,
    "AllocatedCapacityWeigher": capacity.AllocatedCapacityWeigher,
    "VolumeNumberWeigher": volume_number.VolumeNumberWeigher,
    "GoodnessWeigher": goodness.GoodnessWeigher,
}
STAMP = datetime.datetime(2026, 1, 1)


class _Context:
    def elevated(self):
        return self


def pool_state(backend):
    """Cinder's PoolState of one backend's report."""
    host, pool = backend.name.split("#")
    report = dict(backend.extra)
    report.update(
        pool_name=pool, total_capacity_gb=backend.total,
        free_capacity_gb=backend.free,
        allocated_capacity_gb=backend.provisioned,
        provisioned_capacity_gb=backend.provisioned,
        thin_provisioning_support=backend.thin,
        thick_provisioning_support=not backend.thin,
        max_over_subscription_ratio=backend.ratio,
        reserved_percentage=backend.reserved_percentage, timestamp=STAMP)
    state = host_manager.PoolState(host, None, report, pool)
    state.update_from_volume_capability(report)
    return state


def properties(vol):
    specs = dict(vol.specs)
    return {"size": vol.size, "context": _Context(),
            "volume_type": {"extra_specs": specs},
            "resource_type": {"extra_specs": specs},
            "request_spec": {"volume_properties": {"size": vol.size}},
            "qos_specs": {}}


@contextlib.contextmanager
def multipliers(world):
    conf = capacity.CONF
    for name, value in world.multipliers:
        conf.set_override(name, value)
    try:
        yield
    finally:
        for name, _value in world.multipliers:
            conf.clear_override(name)


@contextlib.contextmanager
def volume_counts(world):
    """Cinder's database answer for VolumeNumberWeigher."""
    counts = {b.name: b.volumes for b in world.backends}
    real = volume_number.db
    volume_number.db = types.SimpleNamespace(
        volume_data_get_for_host=lambda context, host, count_only: (
            counts[host]))
    try:
        yield
    finally:
        volume_number.db = real


def passes(name, states, vol):
    """``[bool]`` per state: the filter's verdict (an exception: None)."""
    flt = FILTERS[name]()
    props = properties(vol)
    out = []
    for state in states:
        try:
            out.append(bool(flt.backend_passes(state, props)))
        except Exception:        # Cinder's own failure: reported as such
            out.append(None)
    return out


def weights(name, states, vol):
    """``[multiplier * normalised]`` per state, as Cinder's handler adds
    them (an exception: None)."""
    weigher = WEIGHERS[name]()
    objs = [base_weight.WeighedObject(s, 0.0) for s in states]
    try:
        raw = weigher.weigh_objects(objs, properties(vol))
        normal = list(base_weight.normalize(raw, minval=weigher.minval,
                                            maxval=weigher.maxval))
    except Exception:
        return None
    factor = weigher.weight_multiplier()
    return [factor * value for value in normal]
