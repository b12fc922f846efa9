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
"""

import numpy as np

from gantt.scheduler.pipeline import expressions
from gantt.scheduler.pipeline import pools

FILTER = "filter_function"
GOODNESS = "goodness_function"


def variables(host, caps, pool, request):
    """The five families for one backend: its host name, capabilities
    and :class:`~.pools.Pools` numbers (scalars), and ``request``."""
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
    return {"stats": stats, "capabilities": capabilities,
            "extra": dict(pools.volume_type_specs(request)),
            "volume": {"size": pools.requested_size(request),
                       "project_id": request.project_id,
                       "availability_zone": request.availability_zone},
            "qos": {}}


def parsed(view, text):
    """``(tree, None)`` or ``(None, ExpressionError)`` for ``text``,
    parsed once per filter pass of ``view``."""
    return view.memo(("backend function", text), lambda: _parse(text))


def _outcome(tree_or_error, *backend):
    """Evaluate a parsed function over ``variables(*backend)``."""
    tree, error = tree_or_error
    if error is not None:
        return True, error
    try:
        return True, expressions.evaluate(tree, variables(*backend))
    except expressions.ExpressionError as exc:
        return True, exc


def _parse(text):
    try:
        return expressions.parse(text), None
    except expressions.ExpressionError as exc:
        return None, exc


def run(host, request, key):
    """The value of the function ``key`` of one host (a HostRecord):
    ``(True, value)``, or ``(False, None)`` when it reports none, or
    ``(True, error)`` when it fails (an
    :class:`~.expressions.ExpressionError`)."""
    text = host.capabilities.get(key)
    if text is None:
        return False, None
    return _outcome(_parse(str(text)), host.host, host.capabilities,
                    pools.of_host(host), request)


def run_rows(view, request, key, rows):
    """``{row: outcome}`` (as :meth:`run`) for ``rows`` of ``view``, from
    its columns: no HostRecord is built, each text is parsed once."""
    table = view.table
    numbers = view.memo(("pools",), lambda: pools.columns(view))
    out = {}
    for row in rows:
        caps = table.capabilities[row] or {}
        text = caps.get(key)
        if text is None:
            out[row] = (False, None)
            continue
        text = str(text)
        pool = pools.Pools(*(np.asarray(field)[row] for field in numbers))
        out[row] = _outcome(parsed(view, text), table.hosts[row], caps, pool,
                            request)
    return out


def reporting_rows(view, key):
    """Rows whose backend reports the function ``key``."""
    return view.capability(key, lambda value: True, False,
                           meaning=("reports",))
