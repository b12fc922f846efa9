"""Provider trees written through the Placement REST API, into the cache.

gantt-api writes Placement's rows and, for a root with ``COMPUTE_NODE``,
the host row (:mod:`gantt.db.api_hosts`); then it casts ``trees_changed``
naming the roots written. Here a worker re-reads those trees:

    trees_changed(roots) -> reload: hosts (database's state, whatever
                            their report sequence), hosts no longer,
                            standalone providers
    resync               -> reload of the providers stamped since the
                            last resync, less a margin, and of the hosts
                            the database no longer has (a lost cast)
    Nova's instance-info cast naming a host -> seen: a REST-made host
                            stays up ([api] compute_node_down_time)

A REST write stamps the providers it changes (``updated_at``; created
ones ``created_at``); claims move generations but leave the stamps, so
the stamps, not the generations, tell a resync which trees changed shape.
The stamps are the API's clock: a write whose transaction commits more
than :data:`MARGIN` seconds after it stamped the rows, or an API host
whose clock is that far behind another's, is caught only by its cast.
"""

import datetime
import logging

from oslo_db import exception as db_exc

from gantt.db import api_hosts as db_api_hosts
from gantt.db import tree_load
from gantt.scheduler.state import load as load_mod

LOG = logging.getLogger(__name__)

#: seconds a resync looks back before the newest stamp it saw last time
MARGIN = 60


class Trees:
    """Re-reads trees the REST API wrote; keeps REST-made hosts alive."""

    def __init__(self, conf, db, cache):
        self.conf = conf
        self.db = db
        self.cache = cache
        # the newest provider stamp the last read saw (None: no provider)
        self._mark = None

    @property
    def window(self):
        return self.conf.api.compute_node_down_time

    def start(self):
        """Before the cache's load: later stamps are the resync's."""
        self._mark = tree_load.changed_since(self.db, None)[1]

    def reload(self, uuids, reload_providers):
        """Re-read the trees holding the providers ``uuids``: every host
        among their roots takes the database's state whatever its report
        sequence (``HostStateCache.replace_host``), a uuid named that is a
        host held but no host root any more is forgotten, and the
        standalone providers are re-read (``reload_providers()``) when one
        of them was named.

        :returns: how many hosts were re-read
        """
        uuids = set(uuids)
        hosts, roots = tree_load.load_trees(self.db, uuids)
        for stored in hosts:
            report = load_mod.stored_host(stored, self.window)
            self.cache.replace_host(report)
            self.cache.retire_host_rows(report.host, report.uuid)
            for provider in [stored.root] + stored.children:
                self.cache.apply_usage(provider.uuid, provider.generation,
                                       provider.usage)
        kept = {stored.root.uuid for stored in hosts}
        for uuid in sorted(uuids - kept):
            if self.cache.forget_host(uuid):
                LOG.info("Host %s is no compute node any more: forgotten",
                         uuid)
        if any(self.cache.is_standalone(uuid) for uuid in roots):
            reload_providers()
        return len(hosts)

    def resync(self, gone, reload_providers):
        """The periodic repair of lost ``trees_changed`` casts: the
        providers stamped since the last resync (less :data:`MARGIN`),
        and the hosts ``gone`` from the database."""
        since = (datetime.datetime(1970, 1, 1) if self._mark is None
                 else self._mark - datetime.timedelta(seconds=MARGIN))
        changed, newest = tree_load.changed_since(self.db, since)
        if newest is not None:
            self._mark = max(newest, self._mark or newest)
        if changed or gone:
            self.reload(set(changed) | set(gone), reload_providers)

    def seen(self, host):
        """A sign of life of ``host`` that is not a report: a host the
        REST API made stays up (``[api] compute_node_down_time``); the
        database learns it at most every quarter of that window, from the
        first worker to hear it (``gantt.db.api_hosts.seen``)."""
        now = self.cache.now()
        found = self.cache.seen(host, now)
        if found is None or not self.window:
            return
        uuid, persisted_at = found
        if now - persisted_at < self.window / 4:
            return
        try:
            db_api_hosts.seen(self.db, uuid, _naive(now), self.window / 4)
        except db_exc.DBError as exc:
            LOG.warning("Sign of life of host %s not stored: %s", host, exc)
            return
        self.cache.mark_persisted(uuid, now)


def _naive(epoch):
    """A naive UTC datetime of epoch seconds (as the database stores)."""
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).replace(
        tzinfo=None)
