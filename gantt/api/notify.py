"""Telling the scheduler workers what the API wrote.

Workers learn of each other's claims from the ``provider_usage_changed``
fanout cast (each changed provider's new generation and usage, see
``gantt.service``); the API casts the same message after every commit that
changes allocations, so a REST ``PUT /allocations`` reaches the workers'
caches exactly as a claim made by another worker does. A change of a
provider's shape (created, deleted, renamed, moved, inventory, traits,
aggregates) is cast as ``trees_changed`` naming the roots of the trees
written, on which each worker re-reads those trees from the database:
compute nodes (an agent's, or one the API made a host: see
``gantt.db.api_hosts``), their children, standalone providers. A caller
capped below RPC 1.13 casts ``providers_changed`` instead, on which
workers re-read the standalone providers only. A lost cast is repaired by
the workers' periodic resync (``[scheduler] usage_sync_interval``): a
tree whose stored generation is ahead of the worker's, a provider it does
not know and a host it holds that the database does not are re-read.
"""

import time

from oslo_log import log as logging
import oslo_messaging as messaging

from gantt.objects import usage as usage_obj

LOG = logging.getLogger(__name__)

#: the ``sender`` the API's casts carry (no worker bears this name, so
#: every worker applies them)
SENDER = "gantt-api"


class Silent:
    """No workers to tell (``[api] notify_workers = False``)."""

    def usage_changed(self, states):
        pass

    def providers_changed(self, root_uuids=()):
        pass


class Workers:
    """Casts to every worker over the scheduler's RPC transport."""

    def __init__(self, client):
        self.client = client

    def usage_changed(self, states):
        """``states``: ``gantt.db.allocations.ProviderState`` committed."""
        if not states:
            return
        now = time.time()
        usages = [usage_obj.ProviderUsage(
            resource_provider_uuid=s.uuid, generation=s.generation,
            usages={rc: int(v) for rc, v in s.usages.items()},
            changed_at=now) for s in states]
        try:
            self.client.provider_usage_changed(None, usages, sender=SENDER)
        except messaging.MessagingException as exc:
            LOG.warning("Could not tell the workers of the usage of %d "
                        "provider(s): %s", len(usages), exc)

    def providers_changed(self, root_uuids=()):
        """The trees of ``root_uuids`` changed: every worker re-reads
        them (``trees_changed``; ``providers_changed`` when capped below
        1.13)."""
        try:
            self.client.trees_changed(None, root_uuids)
        except messaging.MessagingException as exc:
            LOG.warning("Could not tell the workers of changed providers: "
                        "%s", exc)


def from_conf(conf):
    """:class:`Workers` on ``[DEFAULT] transport_url``, or :class:`Silent`
    when ``[api] notify_workers`` is off."""
    if not conf.api.notify_workers:
        return Silent()
    from gantt.rpcapi import client as rpc_client
    return Workers(rpc_client.SchedulerClient.from_conf(conf))
