"""Transitional: the names ``scheduler/manager.py`` imports from here.

``providers.py`` was split into :mod:`gantt.db.reports` (storing
reports), :mod:`gantt.db.tree_writer` (one tree's rows),
:mod:`gantt.db.host_load` (reading hosts back) and
:mod:`gantt.db.bulk_read` (the cold load's queries). The manager is being
split into services at the same time; once they import those modules,
delete this one (tests that patch ``save_report`` or ``usages_by_uuid``
here then patch the module the services use). New code imports the
modules above.
"""

from gantt.db.host_load import StoredHosts  # noqa: F401
from gantt.db.host_load import StoredProvider  # noqa: F401
from gantt.db.host_load import load_host_columns  # noqa: F401
from gantt.db.host_load import load_standalone_providers  # noqa: F401
from gantt.db.host_load import provider_usage  # noqa: F401
from gantt.db.host_load import usages_by_uuid  # noqa: F401
from gantt.db.reports import TEXT_MAX  # noqa: F401
from gantt.db.reports import delete_provider  # noqa: F401
from gantt.db.reports import save_provider  # noqa: F401
from gantt.db.reports import save_report  # noqa: F401
from gantt.db.reports import tree_order  # noqa: F401
from gantt.db.tree_writer import HAS_ALLOCATIONS  # noqa: F401
from gantt.db.tree_writer import SaveResult  # noqa: F401
