"""A volume pool's capacity in Cinder's terms, read from Gantt's state.

A volume backend (Cinder's pool) is a provider with a ``DISK_GB``
inventory. Cinder's numbers map onto Gantt's as follows:

=============================  ==========================================
Cinder (``PoolState``)         Gantt
=============================  ==========================================
total_capacity_gb              the ``DISK_GB`` inventory's ``total``; the
                               capability ``total_capacity_gb`` only when
                               it is ``infinite`` or ``unknown``
reserved_percentage            the inventory's ``reserved`` (the backend
                               reports ``floor(total * pct / 100)``); the
                               capability ``reserved_percentage`` where
                               only the percentage counts (an infinite
                               total, the expressions' ``stats``)
max_over_subscription_ratio    the inventory's ``allocation_ratio``
                               (a thick pool reports 1.0)
provisioned_capacity_gb,       Gantt's allocations against ``DISK_GB``
allocated_capacity_gb          (committed, in flight, and this request's)
free_capacity_gb               the capability ``free_capacity_gb`` (the
                               physical free space; ``infinite`` and
                               ``unknown`` are kept); ``total - provisioned``
                               when the backend does not report it
thin_provisioning_support      the capability (a bool, or a string such as
                               ``"True"``)
=============================  ==========================================

Every function works on whole columns (numpy arrays, :func:`columns`) and
on one host (numpy scalars, :func:`of_host`) with the same arithmetic, so
both paths of a filter or weigher give the same numbers. The arithmetic is
Cinder's ``sched_utils.calculate_capacity_factors``, including its
rounding to two decimals.
"""

import typing

import numpy as np

DISK = "DISK_GB"
SPECIAL = ("infinite", "unknown")
_TRUE = frozenset(("true", "1", "yes", "on", "t", "y"))


def requested_size(request):
    """The volume's size: the request's ``DISK_GB``."""
    return request.resources.get(DISK, 0)


def volume_type_specs(request):
    """The volume type's extra specs (the request's ``capabilities``)."""
    return getattr(request, "capabilities", None) or {}


def thin_requested(request):
    """False only when the volume type says ``provisioning:type=thick``."""
    return volume_type_specs(request).get("provisioning:type") != "thick"


# NOTE: the readers below give a typed value and its text (the host
# table's capability columns hold ``str(value)``) the same answer


def truthy(value):
    """A reported boolean, typed or as text (``True``, ``"true"``, ``1``).
    """
    return str(value).strip().lower() in _TRUE


def number(value):
    """A reported number, typed or as text; NaN when it is neither (a
    boolean is not a number)."""
    if isinstance(value, bool) or str(value) in ("True", "False"):
        return float("nan")
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def special(value):
    """Whether a reported capacity is ``infinite`` or ``unknown``."""
    return isinstance(value, str) and value in SPECIAL


class Pools(typing.NamedTuple):
    """Cinder's numbers of one host (scalars) or of every row (arrays)."""

    total: object
    reserved: object
    ratio: object
    provisioned: object
    free: object
    free_special: object
    total_special: object
    reserved_percent: object
    thin: object


#: (capability, per-value reader, value when not reported, dtype)
_READ = {
    "free": ("free_capacity_gb", number, np.nan, float),
    "free_special": ("free_capacity_gb", special, False, bool),
    "total_special": ("total_capacity_gb", special, False, bool),
    "reserved_percent": ("reserved_percentage", number, np.nan, float),
    "thin": ("thin_provisioning_support", truthy, False, bool),
}


def _assemble(total, reserved, ratio, provisioned, read):
    # NOTE: each np.where is skipped when no row needs it (the common
    # case: every pool reports its free space, none a special one)
    free = read("free")
    missing = np.isnan(free)
    if missing.any():
        free = np.where(missing, total - provisioned, free)
    special_free = read("free_special")
    if special_free.any():
        free = np.where(special_free, 0.0, free)
    return Pools(total=total, reserved=reserved, ratio=ratio,
                 provisioned=provisioned, free=free,
                 free_special=special_free,
                 total_special=read("total_special"),
                 reserved_percent=_percent(read("reserved_percent"), total,
                                           reserved),
                 thin=read("thin"))


def _percent(percent, total, reserved):
    """The reported reserved percentage, else the one of the inventory's
    ``reserved``."""
    missing = np.isnan(percent)
    if not missing.any():
        return percent
    if not np.any(reserved):
        derived = np.zeros_like(total)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            derived = np.where(total > 0, 100.0 * reserved / total, 0.0)
    return np.where(missing, derived, percent)


def columns(view):
    """:class:`Pools` of arrays, one value per row of ``view``; found once
    per filter pass (the filters and weighers of a pass share them)."""
    return view.memo(("pools",), lambda: _columns(view))


def _columns(view):
    col = view.rc_column(DISK)
    if col is None:
        zeros = np.zeros(view.n)
        total = reserved = provisioned = zeros
        ratio = np.ones(view.n)
    else:
        has = view.inventory("has_inventory", col)
        total = np.where(has, view.inventory("total", col), 0).astype(float)
        reserved = np.where(has, view.inventory("reserved", col),
                            0).astype(float)
        ratio = np.where(has, view.inventory("allocation_ratio", col), 1.0)
        provisioned = np.asarray(view.used(col), dtype=float)

    def read(name):
        key, func, missing, dtype = _READ[name]
        return view.capability(key, func, missing, dtype,
                               meaning=("pools", name))
    return _assemble(total, reserved, ratio, provisioned, read)


def of_host(host):
    """:class:`Pools` of numpy scalars for one host (a HostRecord)."""
    slot = host.resources.get(DISK)
    if slot is None:
        total = reserved = provisioned = np.float64(0.0)
        ratio = np.float64(1.0)
    else:
        total, reserved = np.float64(slot.total), np.float64(slot.reserved)
        ratio = np.float64(slot.allocation_ratio)
        provisioned = np.float64(slot.used)
    caps = host.capabilities

    def read(name):
        key, func, missing, dtype = _READ[name]
        value = caps.get(key)
        return np.asarray(missing if value is None else func(value),
                          dtype=dtype)[()]
    return _assemble(total, reserved, ratio, provisioned, read)


def _round2(value):
    return np.round(value, 2)


def factors(pools, thin_request):
    """``(total available, virtual free)`` as Cinder computes them: thin
    (a thin-capable pool, a volume type not asking for thick) over-
    subscribes ``total - reserved`` by the ratio; thick takes the smaller
    of the reported free space and ``total - reserved - provisioned``."""
    thin = pools.thin & thin_request
    available = pools.total - pools.reserved
    available = np.where(thin, available * pools.ratio, available)
    calculated = available - pools.provisioned
    virtual = np.where(thin, calculated,
                       np.minimum(pools.free, calculated))
    return _round2(available), _round2(virtual)


def view_factors(view, thin_request):
    """:func:`factors` of :func:`columns`, once per filter pass (the
    capacity filter and weigher share them)."""
    thin_request = bool(thin_request)
    return view.memo(("pools factors", thin_request),
                     lambda: factors(columns(view), thin_request))


def capacity_passes(pools, size, thin_request, found=None):
    """Cinder's CapacityFilter over :class:`Pools` (see the filter);
    ``found``: their :func:`factors`, when known."""
    available, virtual = found or factors(pools, thin_request)
    thin = pools.thin & thin_request
    with np.errstate(divide="ignore", invalid="ignore"):
        over = (pools.provisioned + size) / available > pools.ratio
    thin_ok = (pools.ratio >= 1) & (available != 0) & ~over & (
        virtual >= size)
    sized = (pools.total > 0) & np.where(thin, thin_ok, virtual >= size)
    return np.where(pools.free_special, True,
                    np.where(pools.total_special,
                             pools.reserved_percent == 0, sized))


def free_weights(pools, thin_request, multiplier, found=None):
    """Cinder's CapacityWeigher raw values: the virtual free capacity; an
    ``infinite``/``unknown`` pool weighs -1 under a positive multiplier
    and +inf under another (see the weigher for what becomes of inf)."""
    _available, virtual = found or factors(pools, thin_request)
    unknown = pools.free_special | pools.total_special
    return np.where(unknown, -1.0 if multiplier > 0 else np.inf, virtual)
