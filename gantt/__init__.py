"""Gantt: a standalone scheduler service for clouds."""

import warnings as _warnings

from oslo_service import backend as _service_backend

# NOTE: Gantt runs on native threads (oslo.messaging's threading executor,
# oslo.service's threading backend with cotyledon for worker processes).
# oslo.messaging imports oslo.service at import time, which would otherwise
# pick the deprecated eventlet backend; the hook must be in place first.
_service_backend.register_backend_default_hook(
    lambda: _service_backend.BackendType.THREADING)

# futurist probes for eventlet at import time and eventlet warns that it is
# deprecated; Gantt never uses it, so the warning would only mislead.
_warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
