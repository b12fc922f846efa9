"""Lookups: what the scheduler reads from the database, never writes.

Building a request needs a server group's hosts and the hosts of the
instances it names; the placer asks which allocations the instances of a
retried call hold, and whether a move finished already; a reclaim asks who
owns the consumer. Each is one short read transaction.
"""

from gantt.db import allocations
from gantt.db import moves


class DatabaseLookup:
    """Read-only questions to the database."""

    def __init__(self, db):
        self.db = db

    def group_hosts(self, group_uuid):
        with self.db.begin() as conn:
            return allocations.group_hosts(conn, group_uuid)

    def consumer_hosts(self, consumer_uuids):
        with self.db.begin() as conn:
            return allocations.hosts_of_consumers(conn, consumer_uuids)

    def consumer_info(self, consumer_uuid):
        """Who owns the consumer, and its server-group rule."""
        with self.db.begin() as conn:
            return allocations.consumer_info(conn, consumer_uuid)

    def consumer_allocations(self, consumer_uuid):
        with self.db.begin() as conn:
            return allocations.consumer_allocations(conn, consumer_uuid)

    def allocations_of(self, consumer_uuids):
        """``{consumer: {provider uuid: {class: amount}}}`` of those that
        hold any allocation (one query)."""
        with self.db.begin() as conn:
            return allocations.allocations_of(conn, consumer_uuids)

    def refuse_finished_move(self, migration_uuid):
        """:raises: InvalidRequest if that migration finished already"""
        with self.db.begin() as conn:
            moves.refuse_if_finished(conn, migration_uuid)
