"""Loading the enabled filters and weighers by entry-point name."""

from stevedore import named

from gantt import exception

FILTERS = "gantt.scheduler.filters"
WEIGHERS = "gantt.scheduler.weighers"


def load(namespace, names, conf):
    """Instantiate the plugins ``names`` (in that order) from ``namespace``.

    :raises: ConfigurationError naming every unknown plugin and listing the
        known ones, so the daemon stops at start-up with a clear message
    """
    missing = []
    manager = named.NamedExtensionManager(
        namespace, names=names, invoke_on_load=True, invoke_args=(conf,),
        name_order=True, on_missing_entrypoints_callback=missing.extend,
        on_load_failure_callback=_load_failure)
    if missing:
        known = sorted(ep.name for ep in manager.list_entry_points())
        raise exception.ConfigurationError(
            reason="unknown %s %s; known: %s" % (
                namespace.rsplit(".", 1)[-1], ", ".join(sorted(missing)),
                ", ".join(known)))
    return [ext.obj for ext in manager.extensions]


def _load_failure(manager, entrypoint, exc):
    raise exception.ConfigurationError(
        reason="plugin %s failed to load: %s" % (entrypoint.name, exc))
