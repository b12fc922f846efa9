"""Transitional: the names ``scheduler/manager.py`` imports from here.

``host_cache.py`` was split into :mod:`.table`, :mod:`.update`,
:mod:`.cache`, :mod:`.rows` and :mod:`.load`. The manager is being split
into services at the same time; once it imports those modules, delete
this one. New code imports the modules above.
"""

from gantt.scheduler.state.cache import HostStateCache  # noqa: F401
from gantt.scheduler.state.load import stored_provider  # noqa: F401
from gantt.scheduler.state.load import stored_report  # noqa: F401
from gantt.scheduler.state.table import HostTable  # noqa: F401
from gantt.scheduler.state.update import HostUpdate

#: the former name of :class:`~.update.HostUpdate`
HostReport = HostUpdate
