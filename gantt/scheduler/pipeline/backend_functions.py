"""A backend's filter_function and goodness_function, run for a request.

The backend reports the function as the capability ``filter_function`` or
``goodness_function`` (Cinder's names); :mod:`.expressions` parses it and
evaluates it over Cinder's five variable families:

``stats``
    the pool as Cinder's scheduler sees it: ``host``,
    ``volume_backend_name``, ``vendor_name``, ``driver_version``,
    ``storage_protocol``, ``QoS_support`` (capabilities),
    ``total_capacity_gb``, ``allocated_capacity_gb``, ``free_capacity_gb``,
    ``reserved_percentage`` (see :mod:`.pools` for where they come from)
    and ``updated`` (None: it has no number)
``capabilities``
    every capability the backend reports, plus the numbers above and
    ``provisioned_capacity_gb``, ``max_over_subscription_ratio`` and
    ``thin_provisioning_support`` where it does not report them itself
``extra``
    the volume type's extra specs (the request's ``capabilities``)
``volume``
    ``size`` (the request's ``DISK_GB``), ``project_id``,
    ``availability_zone``
``qos``
    empty: QoS specs do not travel in a Gantt request

As in Cinder, a function that mentions ``storage_protocol`` is evaluated
once per spelling of the backend's protocol (``iSCSI`` and ``iscsi``...,
:data:`PROTOCOL_VARIANTS`) with that spelling in ``stats`` and
``capabilities``; DriverFilter passes when one result is true,
GoodnessWeigher takes the best.
"""


import numpy as np

from gantt.scheduler.pipeline import backend_columns
from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import pools

FILTER = "filter_function"
GOODNESS = "goodness_function"

#: storage protocols Cinder treats as one (``cinder/common/constants.py``)
PROTOCOL_VARIANTS = (("iSCSI", "iscsi"), ("FC", "fibre_channel", "fc"),
                     ("NFS", "nfs"), ("NVMe-oF", "NVMeOF", "nvmeof"))


def protocol_variants(value):
    """Every spelling of the storage protocol ``value`` (a tuple), or
    None when it has no other."""
    for variants in PROTOCOL_VARIANTS:
        if str(value) in variants:
            return variants
    return None


def variables(host, caps, pool, request):
    """The five families for one backend: its host name, capabilities
    and :class:`~.pools.Pools` numbers (scalars), and ``request``."""
    return dict(backend_families(host, caps, pool),
                **request_families(request))


def backend_families(host, caps, pool):
    """``stats`` and ``capabilities`` of one backend (see
    :func:`variables`)."""
    total = caps.get("total_capacity_gb")
    free = caps.get("free_capacity_gb")
    numbers = {
        "total_capacity_gb": total if pools.special(total) else float(
            pool.total),
        "free_capacity_gb": free if pools.special(free) else float(
            pool.free),
        "allocated_capacity_gb": float(pool.provisioned),
        "reserved_percentage": float(pool.reserved_percent),
    }
    stats = {"host": host, "updated": None,
             "volume_backend_name": caps.get("volume_backend_name"),
             "vendor_name": caps.get("vendor_name"),
             "driver_version": caps.get("driver_version", 0),
             "storage_protocol": caps.get("storage_protocol"),
             "QoS_support": caps.get("QoS_support", False)}
    stats.update(numbers)
    capabilities = dict(numbers,
                        provisioned_capacity_gb=float(pool.provisioned),
                        max_over_subscription_ratio=float(pool.ratio),
                        thin_provisioning_support=bool(pool.thin))
    capabilities.update(caps)
    return {"stats": stats, "capabilities": capabilities}


def request_families(request):
    """``extra``, ``volume`` and ``qos``: the same for every backend."""
    return {"extra": dict(pools.volume_type_specs(request)),
            "volume": {"size": pools.requested_size(request),
                       "project_id": request.project_id,
                       "availability_zone": request.availability_zone},
            "qos": {}}


def parsed_text(text):
    """``(tree, None)`` or ``(None, ExpressionError)`` for ``text``."""
    return _parse(text)


def _outcomes(text, tree_or_error, host, caps, pool, request):
    """Evaluate a parsed function: once, or, as Cinder does, once per
    spelling of the backend's storage protocol when the function reads
    it (the caller takes any or the best)."""
    tree, error = tree_or_error
    if error is not None:
        return [(True, error)]
    variants = (protocol_variants(caps.get("storage_protocol"))
                if "storage_protocol" in text else None)
    each = ([caps] if variants is None else
            [dict(caps, storage_protocol=v) for v in variants])
    out = []
    for one in each:
        try:
            out.append((True, expressions.evaluate(
                tree, variables(host, one, pool, request))))
        except expressions.ExpressionError as exc:
            out.append((True, exc))
    return out


def _parse(text):
    try:
        return expressions.parse(text), None
    except expressions.ExpressionError as exc:
        return None, exc


def run(host, request, key):
    """The outcomes of the function ``key`` of one host (a HostRecord):
    ``[(True, value)]`` (one per storage protocol spelling when it reads
    the protocol), ``[(False, None)]`` when it reports none, ``(True,
    error)`` where it fails (an :class:`~.expressions.ExpressionError`).
    """
    text = host.capabilities.get(key)
    if text is None:
        return [(False, None)]
    text = str(text)
    return _outcomes(text, _parse(text), host.host, host.capabilities,
                     pools.of_host(host), request)


def run_rows(view, request, key, rows):
    """``{row: outcomes}`` (as :meth:`run`) for ``rows`` of ``view``, from
    its columns (:mod:`.backend_columns`); no HostRecord is built."""
    wanted = np.zeros(view.n, dtype=bool)
    wanted[list(rows)] = True
    out = {}
    for group, each in backend_columns.judged(
            view, request, key, wanted, backend_columns.ValueJudge):
        for i, row in enumerate(group.tolist()):
            out[row] = [(True, values[i]) for values in each]
    return {row: out.get(row, [(False, None)]) for row in rows}


def best(view, request, key, wanted, judge):
    """``(rows, values)``: ``judge``'s best reading (over the storage
    protocol spellings) of each backend reporting the function ``key``
    among ``wanted`` (a boolean mask over ``view``, or None: all)."""
    found = [(rows, np.max(each, axis=0) if len(each) > 1 else each[0])
             for rows, each in backend_columns.judged(
                 view, request, key, wanted, judge)]
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return (np.concatenate([rows for rows, _v in found]),
            np.concatenate([values for _r, values in found]))


def reporting_rows(view, key):
    """Rows whose backend reports the function ``key``."""
    return view.capability(key, lambda value: True, False,
                           meaning=("reports",))
